"""`{placeholders}` in checks and fixes: finding them, and the one way to fill a command.

`{name}` is a placeholder; `${name}` is a shell variable and left alone; `{{` and `}}`
are literal braces.  Every command the assistant runs or shows (the CLI, the TUI, the
runbooks) is built here: each value is validated by its kind (`kb.rules.valuekinds`: a host,
a port, a path, ...) and then shell-quoted, so a value taken from a log (`$(rm -rf /)`,
backticks, `;`, `-oProxyCommand=...`) is refused or stays one inert word.  That holds
only where the template puts each placeholder as a shell word of its own, outside
quotes: `kb.authoring.lint` refuses any other place (`kb.rules.placeholder_context`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from kb.rules.valuekinds import kind_of, validate_value
from kb.util import recache

if TYPE_CHECKING:  # the schema imports pydantic, which a cached CLI start must not load
    from kb.rules.schema.models import ParamDoc

    Declared = Mapping[str, ParamDoc] | None  # a rule's `params`

TOKEN = recache.compile(r"\{\{|\}\}|(?<!\$)\{([a-z_][a-z0-9_]*)\}")


def names_in(template: str) -> list[str]:
    """Placeholder names in `template`, in order of first appearance."""
    seen: dict[str, None] = {}
    for m in TOKEN.finditer(template):
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

    return TOKEN.sub(sub, template)


def fill_text(template: str, values: Mapping[str, str]) -> str:
    """Fill a Markdown text; unknown placeholders become `<name>` for the reader to supply."""
    return _fill(template, lambda name: str(values[name]) if name in values else f"<{name}>")


def checked_value(name: str, values: Mapping[str, str], declared: Declared = None) -> str:
    """The value of `{name}`, validated by its kind: KeyError if missing, ValueError if bad."""
    return validate_value(name, str(values[name]), kind_of(name, declared))


def fill_command(template: str, values: Mapping[str, str], declared: Declared = None) -> str:
    """The command to run: every value validated by its kind and shell-quoted.

    `declared` is the rule's `params` (their `kind`s); KeyError names a missing value,
    ValueError (`{name}: ...`) a refused one.
    """
    return _fill(template, lambda name: shlex.quote(checked_value(name, values, declared)))


def show_command(template: str, values: Mapping[str, str], declared: Declared = None) -> str:
    """A command for people to read and copy: valid values quoted, others as `<name>`."""

    def render(name: str) -> str:
        try:
            return shlex.quote(checked_value(name, values, declared))
        except (KeyError, ValueError):
            return f"<{name}>"

    return _fill(template, render)


def refused(template: str, values: Mapping[str, str], declared: Declared = None) -> list[str]:
    """Why each given value of the template's placeholders is refused (`{name}: ...`)."""
    out = []
    for name in names_in(template):
        if name in values:
            try:
                checked_value(name, values, declared)
            except ValueError as exc:
                out.append(str(exc))
    return out
