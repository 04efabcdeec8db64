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


SCHEMA_VERSION = 1


def schema_id(command: str) -> str:
    """The name and version of a command's JSON shape, e.g. `dlperf-help/diagnose/1`:
    a reader refuses a shape it does not know instead of misreading it."""
    return f"dlperf-help/{command}/{SCHEMA_VERSION}"


def stamped(command: str, data: Any) -> Any:
    """`data` with `"schema"` added: first key of an object; in each object of a list
    (the list outputs' documented shape stays a list, only a key is added)."""
    tag = schema_id(command)
    if isinstance(data, dict):
        return {"schema": tag, **{k: v for k, v in data.items() if k != "schema"}}
    if isinstance(data, list):
        return [stamped(command, item) if isinstance(item, dict) else item for item in data]
    return data


def print_json(data: Any, stream: TextIO | None = None, **kwargs: Any) -> None:
    """`data` as indented JSON whose strings hold no raw terminal control."""
    kwargs.setdefault("indent", 2)
    (stream or sys.stdout).write(json_dumps(data, **kwargs) + "\n")
