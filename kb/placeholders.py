"""`{placeholders}` in checks and fixes: finding them and filling them safely.

`{name}` is a placeholder; `${name}` is a shell variable and left alone; `{{` and `}}`
are literal braces.  Values put into commands are always shell-quoted, so a value
taken from a log (`$(rm -rf /)`, backticks, `;`) stays one inert word.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping

_TOKEN = re.compile(r"\{\{|\}\}|(?<!\$)\{([a-z_][a-z0-9_]*)\}")


def names_in(template: str) -> list[str]:
    """Placeholder names in `template`, in order of first appearance."""
    seen: dict[str, None] = {}
    for m in _TOKEN.finditer(template):
        if m.group(1):
            seen.setdefault(m.group(1), None)
    return list(seen)


def _fill(template: str, render: Callable[[str], str]) -> str:
    def sub(m: re.Match[str]) -> str:
        token = m.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        return render(m.group(1))

    return _TOKEN.sub(sub, template)


def fill_text(template: str, values: Mapping[str, str]) -> str:
    """Fill a Markdown text; unknown placeholders become `<name>` for the reader to supply."""
    return _fill(template, lambda name: str(values[name]) if name in values else f"<{name}>")


def fill_command(template: str, values: Mapping[str, str]) -> str:
    """Fill a shell command, quoting every value; raise KeyError for a missing value."""
    return _fill(template, lambda name: shlex.quote(str(values[name])))


def show_command(template: str, values: Mapping[str, str]) -> str:
    """A command for people to read and copy: known values quoted, unknown ones as `<name>`."""
    return _fill(
        template, lambda name: shlex.quote(str(values[name])) if name in values else f"<{name}>"
    )
