"""Where the CLI writes: every text it prints goes through `kb.util.textsafe` first.

Why it exists: the commands print lines of logs, file names, values and command outputs
of nodes; a terminal must show them, never obey them. The subcommands write only through
these functions (no heavy imports here: `diagnose` prints without loading pydantic).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from kb.util.textsafe import json_dumps, safe


def write(text: str, stream: TextIO | None = None, *, keep_sgr: bool = False) -> None:
    """Write `text` made safe for a terminal (`keep_sgr`: keep colours this program added
    after it made the outside text in it safe)."""
    (stream or sys.stdout).write(safe(text, keep_sgr=keep_sgr))


def line(text: str = "", stream: TextIO | None = None) -> None:
    """One line, made safe, flushed at once (results that stream as they arrive)."""
    out = stream or sys.stdout
    out.write(safe(text) + "\n")
    out.flush()


def print_json(data: Any, stream: TextIO | None = None, **kwargs: Any) -> None:
    """`data` as indented JSON whose strings hold no raw terminal control."""
    kwargs.setdefault("indent", 2)
    (stream or sys.stdout).write(json_dumps(data, **kwargs) + "\n")
