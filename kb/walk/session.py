"""The record of one troubleshooting session, from the first paste to the fix.

Why it exists: the assistant's screens come and go, but what happened must survive to
the runbook the user exports: the symptom, the log and its evidence, every question
and answer, every check with its command, host, output and verdict, the causes ruled
in and out, and the fix chosen and verified. A `Session` holds exactly that, with no
user interface; the walk (`kb.walk.engine`) holds the reasoning, the session holds the facts.

It also runs checks (`run_check`, `run_check_on`: through `kb.checks`, as the CLI does)
and reads pasted output (`check_from_paste`) into `kb.checks.model.CheckResult`s, so
"run it here", "run it on a node" and "I ran it myself" end the same.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kb.checks.evaluate import evaluate
from kb.checks.model import CheckResult
from kb.diagnosis.model import Diagnosis
from kb.rules.knowledge import KnowledgeBase
from kb.rules.placeholders import fill_command, names_in, show_command
from kb.rules.schema.models import Check, Fix, text_of
from kb.runners.base import Runner
from kb.runners.hosts import Target
from kb.walk.engine import Walk

PASTED = "pasted"  # the host of a check whose output the user pasted
SMALL_LOG_LINES = 40  # logs this short are quoted whole
CONTEXT_LINES = 3  # lines quoted before and after each evidence line
MAX_EXCERPT_LINES = 120


@dataclass
class Session:
    """What happened, in order; the walk is created from the symptom or the diagnosis."""

    kb: KnowledgeBase
    started: dt.datetime = field(default_factory=lambda: dt.datetime.now().astimezone())
    lang: str = "en"
    log_name: str | None = None
    log_text: str | None = None  # a pasted log; a file is read again when excerpted
    log_path: Path | None = None
    diagnosis: Diagnosis | None = None
    walk: Walk | None = None
    fix_id: str | None = None
    verifications: list[CheckResult] = field(default_factory=list)
    cluster_markdown: str | None = None  # the cluster consistency report, when one was made

    # ------------------------------------------------------------ the log

    def set_log(self, name: str, text: str | None = None, path: Path | None = None) -> None:
        self.log_name, self.log_text, self.log_path = name, text, path
        self.diagnosis = None
        self.walk = None
        self.fix_id = None
        self.verifications = []

    def iter_lines(self) -> Iterator[str]:
        """The log's lines without line ends, read again each time (a file is not kept)."""
        if self.log_text is not None:
            yield from self.log_text.splitlines()
        elif self.log_path is not None:
            try:
                yield from read_lines(self.log_path)
            except OSError:
                return

    def log_lines(self) -> list[str]:
        """Every line of the log; prefer `lines_at`/`window` for big files."""
        return list(self.iter_lines())

    def lines_at(self, numbers: set[int]) -> dict[int, str]:
        """The text of the given 1-based line numbers (those that exist)."""
        out: dict[int, str] = {}
        last = max(numbers, default=0)
        for n, line in enumerate(self.iter_lines(), start=1):
            if n > last:
                break
            if n in numbers:
                out[n] = line
        return out

    def window(self, center: int, radius: int) -> tuple[int, list[str], int]:
        """(first line number, lines, total lines) of the log around line `center`."""
        first = max(1, center - radius)
        lines: list[str] = []
        total = 0
        for n, line in enumerate(self.iter_lines(), start=1):
            total = n
            if first <= n <= center + radius:
                lines.append(line)
        return first, lines, total

    def evidence_lines(self) -> set[int]:
        if self.diagnosis is None:
            return set()
        found = {e.line for c in self.diagnosis.causes for e in c.evidence}
        found.update(e.line for n in self.diagnosis.notes for e in n.evidence)
        return found

    def excerpt(self) -> tuple[list[tuple[int, str] | None], int]:
        """Numbered log lines around the evidence (`None` marks lines left out), and the
        number of lines in the log. A short log is quoted whole; without evidence, its end."""
        wanted: set[int] = set()
        for n in sorted(self.evidence_lines()):
            wanted.update(range(max(1, n - CONTEXT_LINES), n + CONTEXT_LINES + 1))
            if len(wanted) >= MAX_EXCERPT_LINES:
                break
        kept: dict[int, str] = {}
        tail: deque[tuple[int, str]] = deque(maxlen=SMALL_LOG_LINES)
        total = 0
        for n, line in enumerate(self.iter_lines(), start=1):
            total = n
            if n in wanted or n <= SMALL_LOG_LINES:
                kept[n] = line
            tail.append((n, line))
        if total <= SMALL_LOG_LINES:
            return [(n, kept[n]) for n in range(1, total + 1)], total
        if not wanted:
            wanted = {n for n, _ in tail}
            kept.update(tail)
        out: list[tuple[int, str] | None] = []
        prev = 0
        for n in sorted(w for w in wanted if w <= total):
            if n != prev + 1:
                out.append(None)
            out.append((n, kept[n]))
            prev = n
        if prev < total:
            out.append(None)
        return out, total

    # ------------------------------------------------------------ the walk

    def start_walk(self, symptom: str | None = None) -> Walk:
        self.walk = Walk(self.kb, symptom=symptom, diagnosis=self.diagnosis, lang=self.lang)
        self.fix_id = None
        self.verifications = []
        return self.walk

    @property
    def symptom_ids(self) -> list[str]:
        if self.walk is not None:
            return list(self.walk.symptoms)
        return list(self.diagnosis.symptoms) if self.diagnosis is not None else []

    @property
    def cause_id(self) -> str | None:
        """The cause the session ended at, if any."""
        if self.walk is not None:
            end = self.walk.conclusion()
            if end is not None:
                return end.cause
        return None

    def choose_fix(self, fix_id: str) -> Fix:
        if fix_id not in self.kb.fixes:
            raise KeyError(f"unknown fix '{fix_id}'")
        self.fix_id = fix_id
        self.verifications = []
        return self.kb.fixes[fix_id]

    @property
    def fix(self) -> Fix | None:
        return self.kb.fixes.get(self.fix_id) if self.fix_id else None

    @property
    def params(self) -> dict[str, str]:
        if self.walk is not None:
            return self.walk.params
        if self.diagnosis is not None:
            out: dict[str, str] = {}
            for c in self.diagnosis.causes:
                for k, v in c.params.items():
                    out.setdefault(k, v)
            return out
        return {}

    def verify_checks(self) -> list[Check]:
        """The checks that show the chosen fix worked."""
        fix = self.fix
        if fix is None:
            return []
        table = self.kb.checks
        return [table[c][1] for c in fix.verify if c in table]

    @property
    def verified(self) -> bool | None:
        """True when every verifying check passed after the fix, None when none ran."""
        if not self.verifications:
            return None
        latest = {r.id: r.status for r in self.verifications}
        return all(s == "pass" for s in latest.values()) and len(latest) >= len(
            self.verify_checks()
        )

    def title(self) -> str:
        cid = self.cause_id
        if cid is not None:
            return text_of(self.kb.causes[cid].title, self.lang)
        for sid in self.symptom_ids:
            return text_of(self.kb.symptoms[sid].title, self.lang)
        return self.log_name or "troubleshooting session"


def read_lines(path: Path) -> Iterator[str]:
    """A log file's lines exactly as the diagnosis reads and numbers them (plain or gzip by
    content, UTF-16/32 by BOM or NUL pattern, as PowerShell's `>` writes), so the log view
    shows what was diagnosed; a file the reader refuses has no lines."""
    from kb.diagnosis.reader import file_lines

    name = str(path)
    yield from file_lines("./-" if name == "-" else name)  # a file named '-', not stdin


# ---------------------------------------------------------------- checks


def missing_params(check: Check, params: dict[str, str]) -> list[str]:
    """Placeholders of the check's command that no known value fills yet."""
    return [n for n in names_in(check.run) if n not in params]


def run_check(
    check: Check,
    runner: Runner,
    params: dict[str, str],
    *,
    confirmed: bool = False,
    cancel: threading.Event | None = None,
) -> CheckResult:
    """Run a check through a runner the caller holds (this machine, a recorded node) by
    `kb.checks.single`, the engine every check run goes through, and read its verdict.

    Raises KeyError naming a placeholder nobody filled; ask the user for it first.
    A value its kind refuses (`kb.rules.valuekinds`) is never run: the record says why.
    """
    refusal = _refusal(check, runner.name, params)
    if refusal is not None:
        return refusal
    from kb.checks.single import run_on_runner

    return run_on_runner(check, runner, params, confirmed=confirmed, cancel=cancel)


def run_check_on(
    check: Check,
    targets: Sequence[Target],
    make_runner: Callable[[Target], Runner],
    params: dict[str, str],
    *,
    confirmed: bool = False,
    cancel: threading.Event | None = None,
) -> CheckResult:
    """Run a check on every target at once (runners made and closed by the engine), as
    one record (`combine`). KeyError and refused values as in `run_check`."""
    refusal = _refusal(check, ", ".join(t.label for t in targets), params)
    if refusal is not None:
        return refusal
    from kb.checks.single import run_one

    return combine(run_one(check, targets, make_runner, params, confirmed=confirmed, cancel=cancel))


def _refusal(check: Check, host: str, params: dict[str, str]) -> CheckResult | None:
    """KeyError for a value nobody gave; the record of a refused value; None: it may run."""
    missing = missing_params(check, params)
    if missing:
        raise KeyError(missing[0])
    try:
        fill_command(check.run, params, check.params)
    except ValueError as exc:
        return CheckResult(
            host,
            check.id,
            show_command(check.run, params, check.params),
            "error",
            title=text_of(check.title),
            reason=f"refused value: {exc}",
        )
    return None


def check_from_paste(
    check: Check, output: str, exit_code: int | None, params: dict[str, str]
) -> CheckResult:
    """The verdict on output the user ran and pasted themselves."""
    outcome = evaluate(check, output, exit_code)
    return CheckResult(
        PASTED,
        check.id,
        show_command(check.run, params, check.params),
        outcome.status,
        output,
        exit_code=exit_code,
        finding=outcome.finding,
        reason=outcome.reason,
        params=outcome.params,
        title=text_of(check.title),
    )


def combine(records: list[CheckResult]) -> CheckResult:
    """One verdict for a check run on several nodes: the problem is present if any node
    fails; healthy only if every node passes. Outputs are kept, each under its host."""
    if len(records) == 1:
        return records[0]
    statuses = {r.status for r in records}
    status = (
        "fail"
        if "fail" in statuses
        else "pass"
        if statuses == {"pass"}
        else "error"
        if "error" in statuses
        else "unavailable"
        if "unavailable" in statuses
        else "skipped"
    )
    first = next((r for r in records if r.status == status), records[0])
    params: dict[str, str] = {}
    for r in records:
        for k, v in r.params.items():
            params.setdefault(k, v)
    hosts = ", ".join(r.host for r in records)
    output = "\n".join(f"== {r.host}: {r.status} ==\n{r.output.rstrip()}" for r in records)
    findings = "; ".join(f"{r.host}: {r.finding or r.reason or r.status}" for r in records)
    return CheckResult(
        hosts,
        first.id,
        first.command,
        status,
        output,
        max(r.seconds for r in records),
        first.cause,
        findings,
        first.reason,
        exit_code=first.exit_code,
        title=first.title,
        params=params,
    )
