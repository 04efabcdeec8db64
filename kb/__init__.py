"""dlperf-help's engine: rules, diagnosis, checks and export, with no user interface.

The CLI, the Textual app and the runbook exporter all call into this package, so it
must stay free of Textual (an import-linter contract and a test enforce it).
"""

__version__ = "0.1.0"
