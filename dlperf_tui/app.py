"""The Textual application (being built: see its issue)."""

from __future__ import annotations

from pathlib import Path


def run_app(log: Path | None = None) -> int:
    from kb.errors import UserError

    raise UserError("the interactive assistant is not available in this build yet")
