"""Check results as text for a terminal: one line per result as it arrives, then a summary.

Plain text without colour so it reads the same in a log file, a pipe and a terminal;
what a node printed (findings, reasons, host names) is made safe for it by `kb.util.textsafe`.
"""

from __future__ import annotations

from kb.checks.model import CheckEvent, Event, HostEvent, RunReport
from kb.util.textsafe import safe_line

MARK = {"pass": "ok", "fail": "FAIL", "unavailable": "n/a", "error": "ERROR", "skipped": "skip"}


def event_line(event: Event) -> str | None:
    """The line to print for an event, or None for events that only a live view needs."""
    if isinstance(event, CheckEvent):
        r = event.result
        target = f" -> {r.peer}" if r.peer else ""
        detail = r.finding or r.reason or ""
        if r.status == "fail" and not r.finding:
            detail = detail or "problem found"
        return safe_line(
            f"{r.host}  {MARK.get(r.status, r.status):5}  {r.id}{target}"
            + (f"  ({detail})" if detail else "")
        )
    if isinstance(event, HostEvent) and event.state == "unreachable":
        return safe_line(f"{event.host}  UNREACHABLE  {event.detail}")
    return None


def summary(report: RunReport) -> str:
    counts = report.counts()
    hosts = len(report.hosts)
    down = sum(1 for h in report.hosts if not h.ok)
    lines = [""]
    for title, matrix in (
        ("SSH between nodes (BatchMode, job port)", report.matrix),
        ("Large-packet ping between nodes", report.ping),
    ):
        cells = {s for row in matrix.values() for s in row.values()}
        if cells == {"unavailable"}:
            lines += [f"{title}: not available (the tool is not installed on the nodes)", ""]
        elif matrix:
            order = [h.host for h in report.hosts]
            lines += [f"{title}: from (rows) -> to (columns)", *_table(matrix, order), ""]
    parts = [
        f"{counts[s]} {s}" for s in ("pass", "fail", "error", "unavailable", "skipped") if counts[s]
    ]
    state = "interrupted: " if report.interrupted else ""
    lines.append(
        f"{state}{hosts} host(s), {down} unreachable; checks: {', '.join(parts) or 'none'}"
    )
    return "\n".join(lines)


def _table(matrix: dict[str, dict[str, str]], order: list[str]) -> list[str]:
    names = list(dict.fromkeys([*order, *matrix, *(t for row in matrix.values() for t in row)]))
    short = {n: f"[{i + 1}]" for i, n in enumerate(names)}
    width = max(len(s) for row in matrix.values() for s in row.values()) if matrix else 2
    width = max(width, 4)
    out = ["  " + " " * 6 + " ".join(f"{short[n]:>{width}}" for n in names)]
    for src in names:
        row = matrix.get(src)
        if row is None:
            continue
        cells = [("-" if dst == src else row.get(dst, "?")) for dst in names]
        out.append(f"  {short[src]:>5} " + " ".join(f"{c:>{width}}" for c in cells))
    out += [f"  {short[n]} {safe_line(n)}" for n in names]
    return out
