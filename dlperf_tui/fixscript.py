"""A fix as the user copies it: every command of it, values filled in, ready to paste.

Why it exists: copying one command of a fix left the rest behind (`pip uninstall` without
the reinstall), and a command with a placeholder left in (`NCCL_SOCKET_IFNAME=<good_iface>`)
is a shell syntax error once pasted. The script is built only through kb's builder
(`fill_command`: each value validated by its kind, then shell-quoted); a value it lacks or
refuses is named, with what it is, so the user can enter it. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb.rules.fixchoice import applicable
from kb.rules.placeholders import fill_command, names_in, refused
from kb.rules.schema.models import Fix, FixCommand


def chosen(fix: Fix, params: dict[str, str]) -> list[FixCommand]:
    """The fix's commands for these values (`applies_if`, as `diagnose` and `check` choose
    them): a TensorFlow build of Horovod is never handed the MXNet reinstall line."""
    return list(applicable(fix, params))


@dataclass(frozen=True)
class Needed:
    """A value the script cannot be built without: missing, or refused by its kind."""

    name: str
    description: str
    example: str
    problem: str  # "" when simply missing, else why the value given was refused


def needed(
    fix: Fix, params: dict[str, str], commands: list[FixCommand] | None = None
) -> list[Needed]:
    """The values `commands` (default: the fix's chosen for `params`) still need, in order."""
    out: dict[str, Needed] = {}
    for cmd in chosen(fix, params) if commands is None else commands:
        why = {
            msg.split(":", 1)[0].strip("{}"): msg for msg in refused(cmd.run, params, fix.params)
        }  # refused() says "{name}: why"
        for name in names_in(cmd.run):
            if name in out or (name in params and name not in why):
                continue
            doc = fix.params.get(name)
            out[name] = Needed(
                name,
                doc.description if doc is not None else name,
                (doc.example or "") if doc is not None else "",
                why.get(name, ""),
            )
    return list(out.values())


def script(fix: Fix, params: dict[str, str], commands: list[FixCommand] | None = None) -> str:
    """The commands, one a line, each built by `fill_command`; KeyError or ValueError (from
    the builder) when a value is missing or refused: ask `needed` first."""
    picked = chosen(fix, params) if commands is None else commands
    return "\n".join(fill_command(cmd.run, params, fix.params) for cmd in picked)


def refusal(fix: Fix, name: str, value: str) -> str | None:
    """Why `value` is refused for `{name}` in any of the fix's commands, or None."""
    for cmd in fix.commands:
        if name in names_in(cmd.run):
            problems = refused(cmd.run, {name: value}, fix.params)
            if problems:
                return problems[0]
    return None
