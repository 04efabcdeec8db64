"""The consistency report as plain rows (for the TUI), aligned text (CLI) and Markdown (runbook)."""

from __future__ import annotations

from typing import Any

from kb.cluster.report.compare import Report
from kb.sysinfo import ifadvice
from kb.util.textsafe import markdown_text, safe, safe_line

MAX_CELL = 48


def table(report: Report, only_differences: bool = False) -> tuple[list[str], list[dict[str, Any]]]:
    """Columns (`fact`, then one per node) and rows `{"fact", "cells", "differs"}` as plain data."""
    columns = ["fact", *report.nodes]
    rows = [
        {"fact": r.fact, "cells": [r.shown[n] for n in report.nodes], "differs": r.differs}
        for r in report.rows
        if r.differs or not only_differences
    ]
    return columns, rows


def _cut(text: str, width: int = MAX_CELL) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def to_text(report: Report, only_differences: bool = False) -> str:
    """An aligned table with differing rows marked `!`, then causes, notes and advice."""
    columns, rows = table(report, only_differences)
    grid = [list(map(safe_line, columns))] + [
        [safe_line(r["fact"]), *(_cut(safe_line(c)) for c in r["cells"])] for r in rows
    ]
    widths = [max(len(row[i]) for row in grid) for i in range(len(columns))]
    marks = [" "] + ["!" if r["differs"] else " " for r in rows]
    lines = [
        f"{m} " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for m, row in zip(marks, grid, strict=True)
    ]
    diffs = len(report.differences)
    lines += [
        "",
        f"{len(report.nodes)} node(s), {diffs} difference(s)" + (" (marked !)" if diffs else ""),
    ]
    for u in report.unreachable:
        lines.append(f"unreachable: {u['node']}: {u['error']}")
    if report.causes:
        lines += ["", "Likely causes:"]
        for c in report.causes:
            lines.append(f"  {c['id']} ({c['confidence']:.2f}): {c['title']}")
            for ev in c["evidence"][:4]:
                lines.append(f"      {ev['file']}:{ev['line']}: {ev['text']}")
            if c["fixes"]:
                lines.append(f"      fixes: {', '.join(c['fixes'])}")
    if report.notes:
        lines += ["", "Notes:"] + [f"  - {n['text']}" for n in report.notes]
    if report.advice:
        lines += ["", "Network interface:"]
        if report.advice.ok:
            lines += [f"  {cmd}" for cmd in report.advice.commands()]
        else:
            lines += [f"  no value works: {p}" for p in report.advice.problems]
        lines += [f"  - {e}" for e in report.advice.explanation]
    return safe("\n".join(lines)) + "\n"  # node names, errors, evidence: text from outside


def _md_cell(text: str) -> str:
    return markdown_text(text.replace("\n", " "))


def to_markdown(report: Report) -> str:
    """The report as a runbook section: table, causes with evidence, interface advice."""
    columns, rows = table(report)
    out = [
        "## Cluster consistency",
        "",
        "| " + " | ".join(map(_md_cell, columns)) + " |",
        "|" + "---|" * len(columns),
    ]
    for r in rows:
        fact = _md_cell(r["fact"])
        cells = [f"**{fact}** ⚠" if r["differs"] else fact, *map(_md_cell, r["cells"])]
        out.append("| " + " | ".join(cells) + " |")
    out += ["", f"{len(report.differences)} difference(s) between {len(report.nodes)} node(s).", ""]
    if report.unreachable:
        out += [f"- unreachable: {u['node']}: {u['error']}" for u in report.unreachable] + [""]
    if report.causes:
        out += ["### Likely causes", ""]
        for c in report.causes:
            out += [f"#### {c['title']} (`{c['id']}`, {c['confidence']:.2f})", ""]
            out += [f"- `{ev['file']}:{ev['line']}`: {ev['text']}" for ev in c["evidence"]]
            if c["fixes"]:
                out.append(f"- fixes: {', '.join(f'`{f}`' for f in c['fixes'])}")
            out.append("")
    if report.notes:
        out += ["### Notes", ""] + [f"- {n['text']}" for n in report.notes] + [""]
    if report.advice:
        out.append(ifadvice.to_markdown(report.advice))
    return safe("\n".join(out).rstrip()) + "\n"
