"""Fixes chosen for the values found: which commands apply, which fix is fragile, their order.

Why it exists: a fix is written for every case its cause covers (Horovod 0.19 and 0.20+,
MXNet or TensorFlow), but the user has one case. The rules say, as data, when a command
applies (`applies_if` on a fix command) and when a fix is fragile (`caution` on a fix);
this module reads those conditions against the values found in the log, the answers and
the checks, and every front end (diagnose --json, walk, the TUI) asks it. It takes the
compiled fix (dicts) or the loaded one (pydantic models) alike, and loads neither.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kb.rules.placeholders import checked_value, names_in, show_command
from kb.util import recache
from kb.util.record import field, record

_NUMBER = recache.compile(r"\d+")


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a compiled fix (a dict) or a loaded one (a model)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def applies(conditions: Mapping[str, Sequence[str]] | None, values: Mapping[str, str]) -> bool:
    """False once a named value is known and matches none of its patterns (case-insensitive,
    file-name wildcards); a value not found keeps the command (it may still apply)."""
    for name, patterns in (conditions or {}).items():
        value = values.get(name)
        if value is None or value == "":
            continue
        if not any(fnmatch.fnmatchcase(str(value).lower(), p.lower()) for p in patterns):
            return False
    return True


def major(value: str) -> int | None:
    """The major number of a version or of a versioned library file: `13.0` is 13,
    `libcudart.so.10.1` is 10 (the number after `.so.`), `cuda-12.4` is 12."""
    text = str(value)
    if ".so." in text:
        text = text.split(".so.", 1)[1]
    m = _NUMBER.search(text)
    return int(m.group(0)) if m else None


def fragile(fix: Any, values: Mapping[str, str]) -> bool | None:
    """Whether the fix's caution holds for these values: True, False, or None (a value
    it compares is not known, or the fix has no caution)."""
    caution = _get(fix, "caution")
    if not caution:
        return None
    wanted, installed = _compared(fix, values)
    a, b = (major(wanted) if wanted else None), (major(installed) if installed else None)
    if a is None or b is None:
        return None
    return a != b


def caution_text(fix: Any, values: Mapping[str, str]) -> str | None:
    """The caution to show with the fix: unless the values show it does not hold."""
    caution = _get(fix, "caution")
    if not caution or fragile(fix, values) is False:
        return None
    text = _get(caution, "text")
    text = " ".join((text if isinstance(text, str) else str(_get(text, "en", ""))).split())
    if fragile(fix, values):
        wanted, installed = _compared(fix, values)
        text += f" (wanted: {wanted}, found: {installed})"
    return text


def _compared(fix: Any, values: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The two values the caution compares, as found (None: not found)."""
    cond = _get(_get(fix, "caution"), "when_major_differs")
    wanted = values.get(str(_get(cond, "wanted", ""))) or None
    names = _get(cond, "installed", []) or []
    return wanted, next((values[n] for n in names if values.get(n)), None)


def order(fix_ids: Iterable[str], fixes: Mapping[str, Any], values: Mapping[str, str]) -> list[str]:
    """The cause's fixes in its order, those the values make fragile last."""
    ids = list(fix_ids)
    return sorted(ids, key=lambda f: f in fixes and fragile(fixes[f], values) is True)


@record()
class ChosenCommand:
    run: str  # filled: values validated by kind and quoted; a missing one as <name>
    where: str | None
    missing: list[str] = field(default_factory=list)  # values still needed, or refused

    def __init__(self, run: str, where: str | None, missing: list[str] | None = None) -> None:
        self.run = run
        self.where = where
        self.missing = [] if missing is None else missing

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "where": self.where, "missing": list(self.missing)}


def applicable(fix: Any, values: Mapping[str, str]) -> list[Any]:
    """The fix's commands (as the fix holds them) whose `applies_if` these values meet."""
    return [c for c in _get(fix, "commands", []) or [] if applies(_get(c, "applies_if"), values)]


def commands(fix: Any, values: Mapping[str, str]) -> list[ChosenCommand]:
    """The fix's commands that apply to these values, filled with them."""
    declared = _get(fix, "params") or None
    if declared and not all(hasattr(d, "kind") for d in declared.values()):
        declared = None  # compiled fixes carry no kinds: names give them
    out = []
    for cmd in applicable(fix, values):
        run = str(_get(cmd, "run", ""))
        missing = []
        for name in names_in(run):
            try:
                checked_value(name, values, declared)
            except (KeyError, ValueError):
                missing.append(name)
        out.append(ChosenCommand(show_command(run, values, declared), _get(cmd, "where"), missing))
    return out
