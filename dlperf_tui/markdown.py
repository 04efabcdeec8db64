"""Markdown for the screens: a cause, a fix, with known values filled in.

Why it exists: the diagnosis view, the cause cards and the fix screen all show the same
rule text; building it once here (plain strings, no Textual) keeps screens thin and
lets tests read what the user will see. Values found in a log enter the Markdown as
literal text (`_fill`: no link, HTML or code span can start in one) and commands are
fenced with their terminal controls shown (`_command`).
"""

from __future__ import annotations

import re

from kb.markdown.runbook import fence
from kb.rules.knowledge import KnowledgeBase
from kb.rules.placeholders import fill_text, show_command
from kb.rules.schema.models import Check, Fix, LogExample, text_of
from kb.util.textsafe import markdown_text, safe, safe_line


def _para(text: str) -> str:
    return " ".join(text.split())


_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def _fill(template: str, params: dict[str, str]) -> str:
    """`fill_text` for Markdown: values come from a log, so they are never Markdown. Outside
    a code span each is escaped (no link, HTML or emphasis starts in it); inside one, where
    nothing is interpreted and escapes would show, only a backtick could end the span."""
    prose = {k: markdown_text(str(v)) for k, v in params.items()}
    code = {k: safe_line(str(v)).replace("`", "'") for k, v in params.items()}
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(template):
        out += [fill_text(template[pos : m.start()], prose), fill_text(m.group(), code)]
        pos = m.end()
    return "".join([*out, fill_text(template[pos:], prose)])


def _command(template: str, params: dict[str, str]) -> str:
    """A command in a fence: values quoted, controls visible (a fence is shown verbatim)."""
    return fence(safe(show_command(template, params)))


def _plain(title: str) -> str:
    """A title as literal Markdown text: `veth*` must not start an emphasis."""
    return "".join(f"\\{c}" if c in "\\`*_[]<>#" else c for c in title)


def check_markdown(chk: Check, params: dict[str, str], lang: str = "en") -> str:
    kind = "read-only" if chk.read_only else "**changes the machine**"
    return "\n\n".join(
        [
            f"- **{_plain(text_of(chk.title, lang))}** ({kind}, cost {chk.cost:g})",
            _command(chk.run, params),
            f"  A problem if it shows: {_fill(_para(text_of(chk.means, lang)), params)}",
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
    parts.append(_fill(text_of(fix.steps, lang), params))
    for cmd in fix.commands if commands else []:
        where = f" ({cmd.where})" if cmd.where else ""
        warn = " — *changes the machine*" if cmd.changes_machine else ""
        parts.append(f"Run{where}{warn}:")
        parts.append(_command(cmd.run, params))
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
        _fill(text_of(c.description, lang), params),
    ]
    if examples and c.examples.match:
        lines = [e.log if isinstance(e, LogExample) else e for e in c.examples.match]
        parts += [
            "### How it shows in a log",
            fence(safe("\n".join(x.strip() for x in lines[:4])), "text"),
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
