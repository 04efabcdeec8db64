"""The consistency report: the comparison table (`compare`) turned into differences and,
through `rules`, into causes; apart from both so that neither imports the other."""

from __future__ import annotations

from kb.cluster.report import rules
from kb.cluster.report.causes import CauseBook
from kb.cluster.report.compare import Report, answered, build_rows, column_names
from kb.cluster.report.load import Node


def build_report(nodes: list[Node], book: CauseBook | None = None) -> Report:
    """The consistency report for `nodes` (from one or more input files)."""
    book = book or CauseBook()
    names = column_names(nodes)
    reachable = [(name, n) for name, n in zip(names, nodes, strict=True) if answered(n)]
    report = Report(names, {name: n.file for name, n in zip(names, nodes, strict=True)}, [])
    report.unreachable = [
        {"node": name, "file": n.file, "error": n.error or ""}
        for name, n in zip(names, nodes, strict=True)
        if not answered(n)
    ]
    report.rows = build_rows([n for _, n in reachable], [name for name, _ in reachable])
    for row in report.rows:  # unreachable nodes still get a column
        for name, n in zip(names, nodes, strict=True):
            if name not in row.values:
                row.values[name] = None
                row.shown[name] = f"unreachable: {n.error}"
    report.notes = rules.apply(reachable, report, book)
    report.causes = book.ranked()
    return report
