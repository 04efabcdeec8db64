"""The diagnosis's public entry points: logs in, a ranked `Diagnosis` out.

`diagnose_paths` reads files, `.gz` files and standard input (`-`); `diagnose_text`
takes a pasted text. Both accept the loaded `KnowledgeBase` (as the TUI has it) or
the `CompiledRules` the CLI loads from its cache. `fast=False` runs the reference
path (every signature on every line), which the tests compare with the fast one.
Long scans report `progress(bytes_done, bytes_total, file)` and stop early when the
`cancel` event is set (the result then has `cancelled=True`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kb.diagnosis import hang_inputs, reader
from kb.diagnosis.compiled import ensure_compiled
from kb.diagnosis.model import Diagnosis, Stats
from kb.diagnosis.pipeline import Progress, Session
from kb.diagnosis.ranking import LIKELY, analyze, rank

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
    outcome = session.run(inputs, progress=progress, cancel=cancel, total=total)
    reports, facts = analyze(outcome.analyzers)
    diag = rank(compiled, outcome.results, reports, facts)
    diag.errors = outcome.errors
    diag.cancelled = outcome.cancelled
    diag.stats = Stats(outcome.files, outcome.lines, outcome.bytes, time.perf_counter() - start)
    return diag


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


def _opener(name: str) -> Any:
    return lambda: reader.open_input(name)


def _lines_opener(lines: list[str]) -> Any:
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return lambda: reader.text_stream(text)
