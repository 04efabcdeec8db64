"""Markdown for the screens: a cause, a fix, with known values filled in.

Why it exists: the diagnosis view, the cause cards and the fix screen all show the same
rule text; building it once here (plain strings, no Textual) keeps screens thin and
lets tests read what the user will see.
"""

from __future__ import annotations

from kb.knowledge import KnowledgeBase
from kb.placeholders import fill_text, show_command
from kb.runbook import fence
from kb.schema.models import Check, Fix, LogExample, text_of


def _para(text: str) -> str:
    return " ".join(text.split())


def _plain(title: str) -> str:
    """A title as literal Markdown text: `veth*` must not start an emphasis."""
    return "".join(f"\\{c}" if c in "\\`*_[]<>#" else c for c in title)


def check_markdown(chk: Check, params: dict[str, str], lang: str = "en") -> str:
    kind = "read-only" if chk.read_only else "**changes the machine**"
    return "\n\n".join(
        [
            f"- **{_plain(text_of(chk.title, lang))}** ({kind}, cost {chk.cost:g})",
            fence(show_command(chk.run, params)),
            f"  A problem if it shows: {fill_text(_para(text_of(chk.means, lang)), params)}",
        ]
    )


def fix_markdown(
    fix: Fix,
    params: dict[str, str],
    lang: str = "en",
    heading: str = "###",
    commands: bool = True,
) -> str:
    """A fix's steps (and, unless shown elsewhere, its commands) with the values filled in."""
    parts = [f"{heading} {_plain(text_of(fix.title, lang))}"] if heading else []
    parts.append(fill_text(text_of(fix.steps, lang), params))
    for cmd in fix.commands if commands else []:
        where = f" ({cmd.where})" if cmd.where else ""
        warn = " — *changes the machine*" if cmd.changes_machine else ""
        parts.append(f"Run{where}{warn}:")
        parts.append(fence(show_command(cmd.run, params)))
    missing = [k for k in fix.params if k not in params]
    if missing:
        parts.append(
            "Fill in: "
            + "; ".join(
                f"`<{k}>` {fix.params[k].description}"
                + (f" (e.g. `{fix.params[k].example}`)" if fix.params[k].example else "")
                for k in missing
            )
        )
    return "\n\n".join(parts)


def fix_commands(fix: Fix, params: dict[str, str]) -> list[str]:
    """The fix's commands as a person would copy them (unknown values as `<name>`)."""
    return [show_command(cmd.run, params) for cmd in fix.commands]


def cause_markdown(
    kb: KnowledgeBase,
    cause_id: str,
    params: dict[str, str] | None = None,
    lang: str = "en",
    examples: bool = False,
    title: bool = True,
) -> str:
    """Explanation, checks and fixes of a cause, values filled in."""
    params = params or {}
    c = kb.causes[cause_id]
    parts = [f"## {_plain(text_of(c.title, lang))}"] if title else []
    parts += [
        f"`{c.id}` · area {kb.area_of(c.id) or '-'} · prior {c.prior:g}",
        fill_text(text_of(c.description, lang), params),
    ]
    if examples and c.examples.match:
        lines = [e.log if isinstance(e, LogExample) else e for e in c.examples.match]
        parts += [
            "### How it shows in a log",
            fence("\n".join(x.strip() for x in lines[:4]), "text"),
        ]
    checks = list(kb.checks_of(c.id))
    if checks:
        parts.append("### Checks")
        parts += [check_markdown(chk, params, lang) for chk in checks]
    parts.append("### Fixes")
    for fid in c.fixes:
        if fid in kb.fixes:
            parts.append(fix_markdown(kb.fixes[fid], params, lang, heading="####"))
    if c.references:
        parts.append(
            "### References\n\n"
            + "\n".join(
                f"- [{r.title}]({r.url})" if r.url else f"- {r.title}" for r in c.references
            )
        )
    return "\n\n".join(parts)
