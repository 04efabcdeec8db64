"""The command-line front end of the engine (no Textual here either)."""
