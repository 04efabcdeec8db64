"""Lines that describe a job's setup, lines that show it failed, and runs that worked.

An INFO line saying NCCL found no libibverbs, sockets between nodes, a libibverbs
warning about a missing config directory: healthy runs print these all the time. A
cause whose every piece of evidence lies on INFO and warning lines (and measures
nothing: no step times, no bandwidth) rests on the job's *setup*, not on a failure.
`kb.diagnosis.ranking` keeps such a cause below any cause shown by an error or
exception line, and drops it from a log whose run completed
(`kb.diagnosis.analyzers.completion`) unless the logs show the job is slow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kb.diagnosis.lines import level_of
from kb.diagnosis.model import CauseResult, Evidence, Note

SETUP_LEVELS = frozenset({"info", "warning"})
FAILURE_LEVELS = frozenset({"error", "exception"})


def setup_only_evidence(pieces: Sequence[Any]) -> bool:
    """True when all of a cause's evidence (its pieces: `.evidence`, `.measured`)
    describes the setup: INFO and warning lines, no measurement."""
    return all(
        not p.measured and p.evidence and all(level_of(e.text) in SETUP_LEVELS for e in p.evidence)
        for p in pieces
    )


def shows_failure(pieces: Sequence[Any]) -> bool:
    """True when some of a cause's evidence is an error or exception line."""
    return any(level_of(e.text) in FAILURE_LEVELS for p in pieces for e in p.evidence)


def drop_setup_only(
    causes: Iterable[CauseResult],
    pieces: Mapping[str, Sequence[Any]],
    setup_only: set[str],
    completed: Mapping[str, Evidence] | None,
    slow: bool,
) -> list[CauseResult]:
    """The causes that are no diagnosis: resting only on the setup, with all their
    lines in logs whose run completed, where nothing shows the job is slow."""
    if not completed or slow:
        return []
    out = []
    for c in causes:
        files = {e.file for p in pieces[c.id] for e in p.evidence}
        if c.id in setup_only and files and files <= completed.keys():
            out.append(c)
    return out


def completed_run_note(cause: CauseResult, completed: Mapping[str, Evidence]) -> Note:
    """What is said instead of a dropped cause."""
    files = sorted({e.file for e in cause.evidence if e.file in completed}) or sorted(completed)
    done = completed[files[0]]
    return Note(
        f"{cause.id}/completed-run",
        f"the run completed (line {done.line}: {done.text.strip()[:80]}), so the lines "
        f"that suggest '{cause.id}' describe its setup, not a failure",
        [done, *cause.evidence[:2]],
    )
