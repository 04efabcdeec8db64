"""The cross-node consistency report: per-node facts in, differences and causes out.

    nodes = load_file("gpu01.json") + load_file("gpu02.json")
    report = build_report(nodes, CauseBook.shipped())
    report.to_json()        # {"nodes", "differences", "causes", ...} as `report --json`
    table(report)           # plain columns and rows for a TUI table
    to_markdown(report)     # a runbook section

Inputs are `survey --json` documents (one or many per file) or `check --json`.
"""

from kb.cluster.report.build import build_report
from kb.cluster.report.causes import CauseBook
from kb.cluster.report.compare import Report
from kb.cluster.report.load import Node, load_file, load_text
from kb.cluster.report.render import table, to_markdown, to_text

__all__ = [
    "CauseBook",
    "Node",
    "Report",
    "build_report",
    "load_file",
    "load_text",
    "table",
    "to_markdown",
    "to_text",
]
