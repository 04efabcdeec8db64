"""A cause, a check and a fix as Markdown, the same in every document that shows them.

Why it exists: the knowledge-base runbook (`runbook`), a session's runbook
(`session_runbook`) and the assistant's cards and panes (`dlperf_tui.screens`) show the
same rule text. Each block is built here once: one wording of the warning on a command
that changes the machine, one escaping. Rule text (steps, descriptions) is the rules'
own Markdown; what is not ours enters as literal text: a title (`literal`: `veth*` starts
no emphasis), a value found in a log (`fill`: no link, HTML or code span starts in it),
a command (`command`: fenced, its terminal controls shown).
"""

from __future__ import annotations

import re

from kb.rules import fixchoice
from kb.rules.knowledge import KnowledgeBase
from kb.rules.placeholders import fill_text, show_command
from kb.rules.schema.models import Check, Fix, LogExample, ParamDoc, Text, text_of
from kb.util.textsafe import markdown_text, safe, safe_line

CHANGES_MACHINE = "changes the machine: read it, then confirm"  # the one wording
READ_ONLY = "read-only"
PAIR = "from every node to every other"

_LITERAL = re.compile(r"([\\`*_\[\]<>#|])")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def literal(text: str) -> str:
    """A title or name as literal Markdown text on one line: nothing in it is markup."""
    return _LITERAL.sub(r"\\\1", safe_line(text))


def tr(value: Text | None, lang: str) -> str:
    """The text in `lang` (en, zh), or English with the Chinese quoted beneath (`both`)."""
    en = text_of(value, "en").strip()
    if lang == "en" or value is None or isinstance(value, str) or not value.zh:
        return en
    zh = value.zh.strip()
    if lang == "zh":
        return zh
    quoted = "\n".join("> " + line if line else ">" for line in zh.splitlines())
    return f"{en}\n\n{quoted}"


def fence(body: str, lang: str = "bash") -> str:
    """`body` in a fence no line of it can close."""
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return f"{ticks}{lang}\n{body.rstrip()}\n{ticks}"


def fill(template: str, params: dict[str, str]) -> str:
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


def command(
    template: str, params: dict[str, str], declared: dict[str, ParamDoc] | None = None
) -> str:
    """A command in a fence: values validated and quoted by kb's builder, unknown ones as
    `<name>`, terminal controls shown (a fence is shown verbatim)."""
    return fence(safe(show_command(template, params, declared)))


def _para(text: str) -> str:
    return " ".join(text.split())


def describe(chk: Check) -> str:
    """When the check's output means a problem, in words."""
    e = chk.problem_if
    parts = []
    if e.any_line_matches:
        parts.append(f"has a line matching `{e.any_line_matches}`")
    if e.no_line_matches:
        parts.append(f"has no line matching `{e.no_line_matches}`")
    if e.contains:
        parts.append(f"contains `{e.contains}`")
    if e.not_contains:
        parts.append(f"lacks `{e.not_contains}`")
    if e.exit_code is not None:
        parts.append(f"exits with {e.exit_code}")
    if e.exit_nonzero:
        parts.append("exits non-zero")
    if e.number is not None:
        bounds = [
            f"{op} {getattr(e.number, op):g}"
            for op in ("lt", "le", "gt", "ge", "eq")
            if getattr(e.number, op) is not None
        ]
        parts.append(f"shows a number (`{e.number.pattern}`) {' and '.join(bounds)}")
    if e.any or e.all:
        parts.append("meets the combined conditions of the rule")
    return " and ".join(parts) or "meets the rule's condition"


def check_block(chk: Check, params: dict[str, str], lang: str = "en", detail: bool = False) -> str:
    """A check: its title and kind, its command, what a problem looks like (`detail`: the
    rule's condition in words too)."""
    kind = READ_ONLY if chk.read_only else f"**{CHANGES_MACHINE}**"
    pair = f", {PAIR}" if chk.scope == "pair" else ""
    when = f"the output {describe(chk)}" if detail else "it shows"
    return "\n\n".join(
        [
            f"- **{literal(text_of(chk.title, lang))}** ({kind}, cost {chk.cost:g}{pair})",
            command(chk.run, params, chk.params),
            f"  A problem if {when}: {fill(_para(tr(chk.means, lang)), params)}",
        ]
    )


def fix_commands(fix: Fix, params: dict[str, str]) -> list[str]:
    """The fix's commands for the values found (`kb.rules.fixchoice`), as a person would
    copy them (unknown values as `<name>`)."""
    return [c.run for c in fixchoice.commands(fix, params)]


def fix_block(
    fix: Fix,
    params: dict[str, str],
    lang: str = "en",
    heading: str = "###",
    commands: bool = True,
    title: str = "",
) -> str:
    """A fix's steps (and, unless shown elsewhere, its commands) with the values filled
    in, and what is still to fill in. `title` goes before the fix's own in the heading."""
    parts = [f"{heading} {title}{literal(text_of(fix.title, lang))}"] if heading else []
    parts.append(fill(tr(fix.steps, lang), params))
    caution = fixchoice.caution_text(fix, params)
    if caution:
        parts.append(f"**Caution:** {literal(caution)}")  # it quotes values found
    chosen = [c for c in fix.commands if fixchoice.applies(c.applies_if, params)]
    for cmd in chosen if commands else []:
        where = f" ({_para(cmd.where)})" if cmd.where else ""
        warn = f" — *{CHANGES_MACHINE}*" if cmd.changes_machine else ""
        parts.append(f"Run{where}{warn}:")
        parts.append(command(cmd.run, params, fix.params))
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


def cause_block(
    kb: KnowledgeBase,
    cause_id: str,
    params: dict[str, str] | None = None,
    lang: str = "en",
    examples: bool = False,
    heading: str = "##",
    title: bool = True,
    detail: bool = False,
    meta: bool = True,
) -> str:
    """A cause: its explanation, how it shows in a log (`examples`), its checks (`detail`:
    their conditions in words) and its fixes, values filled in; its title as `heading`
    unless the caller wrote its own (`title=False`), sections one level below; `meta`: its
    id, area and prior."""
    params = params or {}
    c = kb.causes[cause_id]
    sub = heading + "#"
    parts = [f"{heading} {literal(text_of(c.title, lang))}"] if title else []
    if meta:
        parts.append(f"`{c.id}` · area {kb.area_of(c.id) or '-'} · prior {c.prior:g}")
    parts.append(fill(tr(c.description, lang), params))
    if examples and c.examples.match:
        lines = [e.log if isinstance(e, LogExample) else e for e in c.examples.match]
        parts += [
            f"{sub} How it shows in a log",
            fence(safe("\n".join(x.strip() for x in lines[:4])), "text"),
        ]
    checks = list(kb.checks_of(c.id))
    if checks:
        parts.append(f"{sub} Checks")
        parts += [check_block(chk, params, lang, detail) for chk in checks]
    parts.append(f"{sub} Fixes")
    for fid in c.fixes:
        if fid in kb.fixes:
            parts.append(fix_block(kb.fixes[fid], params, lang, heading=sub + "#"))
    if c.references:
        parts.append(
            f"{sub} References\n\n"
            + "\n".join(
                f"- [{literal(r.title)}]({r.url})" if r.url else f"- {literal(r.title)}"
                for r in c.references
            )
        )
    return "\n\n".join(parts)
