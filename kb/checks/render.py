"""Check results as text: the doctor view (`doctor_text`: grouped by area, ✓ / ✗ / ! with
what a problem means and its fix), and the plain lines of each result as it arrives.

What a node printed (findings, reasons, host names) is made safe by `kb.util.textsafe`
before any colour is added; colour is the caller's choice (a terminal, not NO_COLOR).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kb.checks.model import CheckEvent, CheckResult, Event, HostEvent, RunReport
from kb.rules import fixchoice
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import text_of
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
    lines = ["", *_matrix_lines(report)]
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


# ---------------------------------------------------------------- the doctor view

SYMBOL = {"pass": "✓", "fail": "✗", "error": "!", "unavailable": "-", "skipped": "-"}
_SGR = {"pass": "32", "fail": "31", "error": "33", "unavailable": "2", "skipped": "2"}
_MAX_FIX_COMMANDS = 3


@dataclass
class _Style:
    color: bool
    width: int

    def mark(self, status: str, text: str | None = None) -> str:
        shown = text if text is not None else SYMBOL.get(status, "?")
        return f"\x1b[{_SGR[status]}m{shown}\x1b[0m" if self.color and status in _SGR else shown

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.color else text

    def cut(self, text: str, indent: int) -> str:
        """One line, cut to the width (what a node printed is made safe first)."""
        room = max(20, self.width - indent)
        text = " ".join(safe_line(text).split())
        return text if len(text) <= room else text[: room - 1] + "…"


def doctor_text(
    report: RunReport, kb: KnowledgeBase, *, color: bool, verbose: bool, width: int = 100
) -> str:
    """The results as doctor tools show them: per host, grouped by area; ✓ passed, ✗ a
    problem (what it means, and the fix's commands filled with the values found), ! the
    check could not run, - not run (a tool missing, skipped); passing checks and those
    not run are listed only with `verbose`. A check that did not run is never a ✓."""
    style = _Style(color, width)
    out: list[str] = []
    many = len(report.hosts) > 1
    for host in report.hosts:
        if many or not host.ok:
            where = f" ({host.address})" if host.address and host.address != host.host else ""
            head = f"{safe_line(host.host)}{where}"
            if not host.ok:  # one line, whole: why a node did not answer is the point
                why = " ".join(safe_line(host.error or "no answer").split())
                out.append(f"{style.mark('fail')} {style.bold(head)}: unreachable: {why}")
                continue
            out.append(style.bold(head))
        out += _host_lines(host.checks, kb, style, verbose, "  " if many else "")
    out += [""] + _matrix_lines(report)
    out.append(_doctor_summary(report, verbose))
    return "\n".join(out).rstrip("\n") + "\n"


def _area_status(statuses: list[str]) -> str:
    for status in ("fail", "error", "pass"):
        if status in statuses:
            return status
    return "skipped"  # nothing ran: never a ✓


def _host_lines(
    checks: list[CheckResult], kb: KnowledgeBase, style: _Style, verbose: bool, pad: str
) -> list[str]:
    areas: dict[str, list[CheckResult]] = {}
    for r in checks:
        cause = r.cause or (kb.checks[r.id][0] if r.id in kb.checks else "")
        area = kb.area_of(cause) if cause else "other"
        areas.setdefault(area or "other", []).append(r)
    out = []
    for area in sorted(areas, key=lambda a: (_RANK[_area_status([r.status for r in areas[a]])], a)):
        results = sorted(areas[area], key=lambda r: (_RANK[r.status], r.id))
        status = _area_status([r.status for r in results])
        counts = _counts(r.status for r in results)
        out.append(f"{pad}{style.mark(status)} {style.bold(area)}  {counts}")
        for r in results:
            if r.status in ("fail", "error") or verbose:
                out += _result_lines(r, kb, style, pad + "    ")
    return out


_RANK = {"fail": 0, "error": 1, "pass": 2, "unavailable": 3, "skipped": 4}


def _counts(statuses: Iterable[str]) -> str:
    n: dict[str, int] = {}
    for s in statuses:
        key = "not run" if s in ("unavailable", "skipped") else s
        n[key] = n.get(key, 0) + 1
    words = {"fail": "failing", "error": "could not run", "pass": "passed", "not run": "not run"}
    return ", ".join(f"{n[k]} {w}" for k, w in words.items() if n.get(k))


def _result_lines(r: CheckResult, kb: KnowledgeBase, style: _Style, pad: str) -> list[str]:
    cause_id, check = kb.checks.get(r.id, (r.cause or "", None))
    title = text_of(check.title) if check is not None else (r.title or r.id)
    target = f" -> {r.peer}" if r.peer else ""
    head = f"{pad}{style.mark(r.status)} {style.cut(f'{title}{target} ({r.id})', len(pad) + 2)}"
    lines = [head]
    deeper = pad + "  "
    if r.status == "fail":
        if r.finding:
            lines.append(deeper + style.cut(f"found: {r.finding}", len(deeper)))
        if check is not None and check.means:
            lines.append(deeper + style.cut(_first_sentence(text_of(check.means)), len(deeper)))
        lines += _remedy(cause_id, r.id, r.params, kb, style, deeper)
    elif r.status == "pass":
        if r.finding:
            lines.append(deeper + style.cut(r.finding, len(deeper)))
    else:
        why = r.reason or {"error": "the check could not run", "skipped": "not run"}.get(
            r.status, "not run"
        )
        lines.append(
            deeper + style.cut(("not run: " if r.status != "error" else "") + why, len(deeper))
        )
    return lines


def _remedy(
    cause_id: str, check_id: str, values: dict[str, str], kb: KnowledgeBase, style: _Style, pad: str
) -> list[str]:
    """The fix for this problem, with its commands (values filled): of the cause's fixes
    for these values, the first one this check verifies (its `verify`), else the first."""
    cause = kb.causes.get(cause_id)
    fixes = fixchoice.order(list(cause.fixes) if cause else [], kb.fixes, values)
    fixes = [f for f in fixes if f in kb.fixes]
    fixes.sort(key=lambda f: check_id not in kb.fixes[f].verify)
    if not fixes:
        return [pad + style.cut(f"see: dlperf-help runbook {cause_id}", len(pad))] if cause else []
    fix = kb.fixes[fixes[0]]
    lines = [pad + style.cut(f"fix: {text_of(fix.title)}", len(pad))]
    caution = fixchoice.caution_text(fix, values)
    if caution:
        lines.append(pad + "  " + style.cut(f"caution: {caution}", len(pad) + 2))
    commands = fixchoice.commands(fix, values)
    for cmd in commands[:_MAX_FIX_COMMANDS]:
        lines.append(pad + "  " + style.cut(f"$ {cmd.run}", len(pad) + 2))
    more = len(commands) - _MAX_FIX_COMMANDS
    if more > 0 or len(fixes) > 1:
        lines.append(
            pad + "  " + style.cut(f"(all of it: dlperf-help runbook {cause_id})", len(pad) + 2)
        )
    return lines


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def _matrix_lines(report: RunReport) -> list[str]:
    lines: list[str] = []
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
    return lines


def _doctor_summary(report: RunReport, verbose: bool) -> str:
    counts = report.counts()
    down = sum(1 for h in report.hosts if not h.ok)
    problems = counts["fail"] + down
    parts = [f"{problems} problem(s)" if problems else "no problem found"]
    if counts["error"]:
        parts.append(f"{counts['error']} check(s) could not run")
    parts.append(f"{counts['pass']} passed")
    not_run = counts["unavailable"] + counts["skipped"]
    if not_run:
        parts.append(f"{not_run} not run")
    state = "interrupted: " if report.interrupted else ""
    hosts = f"{len(report.hosts)} host(s)" + (f", {down} unreachable" if down else "")
    hint = "" if verbose else " (--verbose lists every check)"
    return f"{state}{hosts}: {', '.join(parts)}{hint}"
