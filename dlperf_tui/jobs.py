"""Long work the screens start in worker threads: diagnosing a log with progress and cancel.

Why it exists: an opened log can be gigabytes; the UI must show how far the scan is and
stop it on Escape. Files go through the engine's `progress`/`cancel` hooks; a pasted
text is scanned whole (it is in memory already, and the scan is fast), and a cancel
then simply drops its result. No Textual here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.model import Diagnosis
from kb.rules.knowledge import KnowledgeBase


class Cancelled(Exception):
    """The user stopped the scan."""


Progress = Callable[[float], None]  # fraction done, 0..1


def diagnose(
    kb: KnowledgeBase,
    *,
    text: str | None = None,
    path: Path | None = None,
    name: str = "pasted log",
    progress: Progress = lambda f: None,
    cancel: threading.Event | None = None,
) -> Diagnosis:
    """Diagnose pasted `text` or the file at `path`; raises `Cancelled` when `cancel` is set."""
    cancel = cancel or threading.Event()
    if path is not None:

        def report(done: int, total: int | None, _file: str) -> None:
            if total:
                progress(min(1.0, done / total))

        diag = diagnose_paths(kb, [path], progress=report, cancel=cancel)
        failed = [e for e in diag.errors if e.get("file")]
        if failed and not diag.stats.lines:
            raise OSError(failed[0].get("error", "cannot read the file"))
    else:
        diag = diagnose_text(kb, text or "", name)
    if cancel.is_set() or getattr(diag, "cancelled", False):
        raise Cancelled
    progress(1.0)
    return diag
