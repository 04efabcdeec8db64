"""The diagnosis's public entry points: logs in, a ranked `Diagnosis` out.

`diagnose_paths` reads files, `.gz` files and standard input (`-`); `diagnose_text`
takes a pasted text. Both accept the loaded `KnowledgeBase` (as the TUI has it) or
the `CompiledRules` the CLI loads from its cache. `fast=False` runs the reference
path (every signature on every line), which the tests compare with the fast one.
Long scans report `progress(bytes_done, bytes_total, file)` and stop early when the
`cancel` event is set (the result then has `cancelled=True`).

The start of each input (`KEEP` bytes) is kept as it streams by: a short input is then
also read against the message catalogue (its failure messages, `kb.diagnosis.failure`)
and, when nothing fired, compared with every known message (`kb.diagnosis.approximate`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kb.diagnosis import hang_inputs, reader
from kb.diagnosis.compiled import ensure_compiled
from kb.diagnosis.lines import meaningful
from kb.diagnosis.model import BASIS_SYMPTOM, Diagnosis, Stats
from kb.diagnosis.pipeline import Progress, Session
from kb.diagnosis.ranking import LIKELY, analyze, rank

if TYPE_CHECKING:  # a cancel event comes from a caller that runs threads
    import threading
    from pathlib import Path

__all__ = ["LIKELY", "diagnose_lines", "diagnose_paths", "diagnose_text"]


def _diagnose(
    rules: Any,
    inputs: list[tuple[str, Any]],
    *,
    progress: Progress | None,
    cancel: threading.Event | None,
    fast: bool,
    use_hyperscan: bool,
    total: int | None,
) -> Diagnosis:
    start = time.perf_counter()
    compiled = ensure_compiled(rules)
    session = Session(compiled, fast=fast, use_hyperscan=use_hyperscan)
    kept: dict[str, _Keep] = {}
    inputs = [(name, _keeping(name, opener, kept)) for name, opener in inputs]
    outcome = session.run(inputs, progress=progress, cancel=cancel, total=total)
    reports, facts = analyze(outcome.analyzers)
    diag = rank(compiled, outcome.results, reports, facts)
    short = _short_lines(kept)
    if not diag.causes and diag.failure is None and short:
        diag = _unnamed(compiled, outcome, reports, facts, short, diag.observed) or diag
    elif diag.causes and _exception_only(compiled, diag):
        diag = _catalogued_exception(compiled, outcome, reports, facts, diag) or diag
        if short and _exception_only(compiled, diag):
            _closer_than_symptom(compiled, diag, facts, short)
    if short and not diag.causes:
        _described(rules, compiled, diag, short)
    diag.errors = outcome.errors
    diag.cancelled = outcome.cancelled
    diag.stats = Stats(outcome.files, outcome.lines, outcome.bytes, time.perf_counter() - start)
    return diag


def _exception_only(rules: Any, diag: Diagnosis) -> bool:
    """True when an exception nothing names ended the run and only its symptom's priors rank
    the causes: its text is all there is to go on. (A symptom of its own kind, a library
    that cannot be loaded, already says more than a look-alike of another library.)"""
    from kb.diagnosis import failure

    if diag.failure is None or not all(c.basis == BASIS_SYMPTOM for c in diag.causes):
        return False
    spec = failure.spec_of(rules, diag.failure.symptom)
    return bool(spec and spec.get("in_traceback"))


def _catalogued_exception(
    rules: Any, outcome: Any, reports: list[Any], facts: dict[str, Any], diag: Diagnosis
) -> Diagnosis | None:
    """An exception only its symptom shows, whose message the catalogue knows as a failure of
    a more telling kind (`ConnectionResetError: [Errno 104] ...`, a store's `Socket
    Timeout`): ranked as that failure, whose causes say more than a generic exception's.
    The line ended the run, so a message that other runs print and survive counts here."""
    from kb.diagnosis import failure

    assert diag.failure is not None  # _exception_only
    e, generic = diag.failure.evidence, diag.failure.symptom
    seen = failure.catalogue_failures(rules, failure.load_catalogue(), [(e.file, e.line, e.text)])
    seen.pop(generic, None)
    if not seen:
        return None
    return rank(rules, outcome.results, reports, facts, seen, {(e.file, e.line)})


def _closer_than_symptom(
    rules: Any, diag: Diagnosis, facts: dict[str, Any], short: list[tuple[str, int, str]]
) -> None:
    """An exception only its symptom shows, in an input read whole: a known message of a
    cause close to one of its error lines (the error reworded, cut short) says more than
    the symptom's priors, so the causes it names come first."""
    from kb.diagnosis import failure
    from kb.diagnosis.approximate import approximate_causes, compared_lines

    lines = compared_lines(short)
    catalogue = failure.load_catalogue()
    close = approximate_causes(rules, lines, facts, catalogue, causes_only=True) if lines else []
    if close:
        named = {c.id for c in close}
        diag.causes = [*close, *(c for c in diag.causes if c.id not in named)][:OBSERVED_TOP]


def _described(
    rules: Any, compiled: Any, diag: Diagnosis, short: list[tuple[str, int, str]]
) -> None:
    """Prose that complains of something no line names: the causes its words describe
    (`kb.diagnosis.described`), a place to start."""
    from kb.diagnosis.described import described_causes

    found = described_causes(rules, compiled, short)
    if found:
        diag.causes = found


def _unnamed(
    rules: Any,
    outcome: Any,
    reports: list[Any],
    facts: dict[str, Any],
    short: list[tuple[str, int, str]],
    observed: list[Any],
) -> Diagnosis | None:
    """For a short input where nothing fired: its failure messages in the catalogue, else
    the causes its notes are signs of, else the known messages closest to its lines (the
    catalogue is read only here: it costs)."""
    from kb.diagnosis import failure

    catalogue = failure.load_catalogue()
    known = failure.rule_failure_lines(rules, outcome.results, facts.get("context"))
    seen = failure.catalogue_failures(rules, catalogue, short, known)
    if seen and not all(failure.pasted_only(rules, sid) for sid in seen):
        diag = rank(rules, outcome.results, reports, facts, seen)
        if diag.causes or diag.failure is not None:
            return diag
    # else a pasted message that says only what failed: a known message closer to it may
    # name its cause (below); the failure stays
    if not seen and observed and len(short) <= EXCERPT_LINES and not facts.get("completed"):
        # an excerpt of a few lines where nothing failed, of which some are a cause's
        # notes: those lines are what the user asks about ("NET/IB : No device found")
        diag = rank(rules, outcome.results, reports, facts)
        diag.causes = observed[:OBSERVED_TOP]
        return diag
    pasted = None  # a one-to-three-line paste: its lone exception line is the failure
    if len(short) <= PASTED_LINES:
        lines = {(f, n) for f, n, _ in short}
        pasted = rank(rules, outcome.results, reports, facts, seen, lines)
    from kb.diagnosis.approximate import approximate_causes, compared_lines

    diag = pasted or rank(rules, outcome.results, reports, facts)
    close = approximate_causes(rules, compared_lines(short), facts, catalogue)
    if close:  # a known message close to the paste names more than its exception
        diag.causes = close
        diag.symptoms = list(
            dict.fromkeys([*diag.symptoms, *(c.symptom for c in close if c.symptom)])
        )
        return diag
    return diag if diag.causes or diag.failure is not None else None


def diagnose_paths(
    kb: Any,
    paths: Iterable[Path | str],
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    fast: bool = True,
    use_hyperscan: bool = True,
) -> Diagnosis:
    """Diagnose log files together (`-` is standard input); unreadable ones go to
    `Diagnosis.errors` as `{"file", "error"}` while the others are still diagnosed."""
    names = [str(p) for p in paths]
    inputs = hang_inputs.expand_paths(names, _opener)  # logs; dump folders, RAS reports
    total = 0
    for n in names:
        with contextlib.suppress(OSError):
            total += os.path.getsize(n) if n != "-" and os.path.isfile(n) else 0
    return _diagnose(
        kb,
        inputs,
        progress=progress,
        cancel=cancel,
        fast=fast,
        use_hyperscan=use_hyperscan,
        total=total or None,
    )


def diagnose_text(
    kb: Any, text: str, name: str = "pasted", *, fast: bool = True, use_hyperscan: bool = True
) -> Diagnosis:
    """Diagnose a pasted text as one log called `name`."""
    return _diagnose(
        kb,
        [(name, lambda: reader.text_stream(text)), *hang_inputs.from_text(text, name)],
        progress=None,
        cancel=None,
        fast=fast,
        use_hyperscan=use_hyperscan,
        total=None,
    )


def diagnose_lines(
    kb: Any, sources: Iterable[tuple[str, Iterable[str]]], *, fast: bool = True
) -> Diagnosis:
    """Diagnose logs given as (name, lines) pairs (kept for callers of the first engine)."""
    inputs = [(name, _lines_opener(list(lines))) for name, lines in sources]
    return _diagnose(
        kb, inputs, progress=None, cancel=None, fast=fast, use_hyperscan=True, total=None
    )


KEEP = 64 * 1024  # bytes of each input kept: a short input is kept whole
PASTED_LINES = 3  # an input this short is a paste: its lone exception line is a failure
EXCERPT_LINES = 5  # an input this short where nothing failed is a question about its lines
OBSERVED_TOP = 3


class _Keep:
    """A binary stream that keeps the first `KEEP` bytes read through it."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.data = bytearray()
        self.whole = True  # every byte read was kept
        self.ended = False

    def read(self, n: int = -1) -> bytes:
        data = self._stream.read(n)
        if not data:
            self.ended = True
        elif len(self.data) + len(data) <= KEEP:
            self.data += data
        else:
            self.whole = False
        return bytes(data)

    def __getattr__(self, name: str) -> Any:  # tell, close, fileobj
        return getattr(self._stream, name)


def _keeping(name: str, opener: Any, kept: dict[str, _Keep]) -> Any:
    def open_kept() -> _Keep:
        stream = kept[name] = _Keep(opener())
        return stream

    return open_kept


def _short_lines(kept: dict[str, _Keep]) -> list[tuple[str, int, str]] | None:
    """(file, line number, text) of the meaningful lines of inputs read whole and short
    (`KEEP` bytes), or None when some input was longer."""
    if not kept or any(not k.whole or not k.ended for k in kept.values()):
        return None
    out: list[tuple[str, int, str]] = []
    for name, k in kept.items():
        text = k.data.decode("utf-8", "replace")
        numbered = [(i, _clean(t)) for i, t in enumerate(text.splitlines(), start=1)]
        out.extend((name, n, t) for n, t in meaningful(numbered) if t.strip())
    return out


def _clean(line: str) -> str:
    """A kept line as the scan saw it: no ANSI codes, no carriage return."""
    from kb.diagnosis.shapes import clean

    return clean(line).replace("\r", "")


def _opener(name: str) -> Any:
    return lambda: reader.open_input(name)


def _lines_opener(lines: list[str]) -> Any:
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return lambda: reader.text_stream(text)
