"""One module per screen, each with its `.tcss` beside it."""
