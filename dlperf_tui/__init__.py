"""The Textual front end of dlperf-help: screens over the `kb` engine, nothing more."""
