"""The knowledge base (or some causes) as one Markdown runbook a team can print or wiki.

Layout: a table of contents, then one section per symptom (grouped by kind of trouble)
holding the questions that tell its causes apart and one section per cause: how to
recognise it, the checks with their commands fenced, and the fixes.  A cause listed
under several symptoms is written once, under its first, and linked from the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kb.rules.knowledge import KnowledgeBase
from kb.rules.placeholders import fill_text, show_command
from kb.rules.schema.models import Cause, Check, Fix, LogExample, Symptom, Text, text_of
from kb.util.secrets import mask

GROUP_TITLES = {
    "launch": "The job does not start",
    "hang": "The job hangs or times out",
    "slow": "The job is slow or scales poorly",
    "library": "A library is missing or mismatched",
    "install": "Installing or building fails",
    "dataset": "Data, configuration and code versions",
    "crash": "The job crashes, is killed or stops without success",
}


def slug(title: str) -> str:
    """GitHub-style heading anchor."""
    s = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return re.sub(r" ", "-", s)


def tr(value: Text | None, lang: str) -> str:
    """English text, with the Chinese translation beneath when `lang` is 'both'."""
    en = text_of(value, "en").strip()
    if lang == "en" or value is None or isinstance(value, str) or not value.zh:
        return en
    zh = value.zh.strip()
    if lang == "zh":
        return zh
    quoted = "\n".join("> " + line if line else ">" for line in zh.splitlines())
    return f"{en}\n\n{quoted}"


def fence(body: str, lang: str = "bash") -> str:
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return f"{ticks}{lang}\n{body.rstrip()}\n{ticks}"


class _Writer:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, *blocks: str) -> None:
        self.parts.extend(b for b in blocks if b)

    def text(self) -> str:
        return "\n\n".join(self.parts).rstrip() + "\n"


def render(
    kb: KnowledgeBase,
    cause_ids: Iterable[str] | None = None,
    lang: str = "both",
    title: str = "dlperf-help runbook",
) -> str:
    """Render the runbook, secrets masked; `cause_ids` limits it to those causes (and
    their symptoms)."""
    wanted = set(cause_ids) if cause_ids is not None else set(kb.causes)
    causes = {cid: c for cid, c in kb.causes.items() if cid in wanted}
    symptoms = [s for s in kb.symptoms.values() if any(s.id in c.symptoms for c in causes.values())]
    order = list(GROUP_TITLES)
    symptoms.sort(key=lambda s: (order.index(s.group), text_of(s.title)))
    # a cause is written out under the first symptom its author listed, linked from the rest
    shown = {s.id for s in symptoms}
    home = {cid: next(s for s in c.symptoms if s in shown) for cid, c in causes.items()}

    w = _Writer()
    w.add(
        f"# {title}",
        f"{len(causes)} causes under {len(symptoms)} symptoms. Each cause says how to recognise "
        "it in a log, the checks that confirm it (run them on every node) and the fixes. "
        "Values in `<angle brackets>` are yours to fill in.",
    )
    w.add("## Contents", _toc(symptoms, causes, home))
    current_group = ""
    for s in symptoms:
        if s.group != current_group:
            current_group = s.group
            w.add(f"## {GROUP_TITLES[s.group]}")
        _symptom(w, kb, s, causes, home, lang)
    return mask(w.text())  # a rule's example log may be pasted from a real one


def _cause_heading(c: Cause) -> str:
    return f"Cause: {text_of(c.title)} ({c.id})"


def _symptom_heading(s: Symptom) -> str:
    return f"Symptom: {text_of(s.title)}"


def _toc(symptoms: list[Symptom], causes: dict[str, Cause], home: dict[str, str]) -> str:
    lines = []
    for s in symptoms:
        lines.append(f"- [{text_of(s.title)}](#{slug(_symptom_heading(s))})")
        for c in sorted(causes.values(), key=lambda c: -c.prior):
            if home[c.id] == s.id:
                lines.append(f"  - [{text_of(c.title)}](#{slug(_cause_heading(c))})")
    return "\n".join(lines)


def _symptom(
    w: _Writer,
    kb: KnowledgeBase,
    s: Symptom,
    causes: dict[str, Cause],
    home: dict[str, str],
    lang: str,
) -> None:
    w.add(f"### {_symptom_heading(s)}", tr(s.description, lang))
    if s.questions:
        w.add("**Questions that tell the causes apart**")
        lines = []
        for q in s.questions:
            lines.append(f"- {text_of(q.text)}")
            for a in q.answers:
                effect = []
                if a.confirms:
                    effect.append("points to " + ", ".join(f"`{x}`" for x in a.confirms))
                if a.rules_out:
                    effect.append("rules out " + ", ".join(f"`{x}`" for x in a.rules_out))
                lines.append(
                    f"  - *{text_of(a.text)}*" + (f": {'; '.join(effect)}" if effect else "")
                )
        w.add("\n".join(lines))
    mine = [c for c in causes.values() if s.id in c.symptoms]
    elsewhere = [c for c in mine if home[c.id] != s.id]
    if elsewhere:
        w.add(
            "Also possible here: "
            + ", ".join(f"[{text_of(c.title)}](#{slug(_cause_heading(c))})" for c in elsewhere)
        )
    for c in sorted(mine, key=lambda c: -c.prior):
        if home[c.id] == s.id:
            _cause(w, kb, c, lang)


def _cause(w: _Writer, kb: KnowledgeBase, c: Cause, lang: str) -> None:
    w.add(f"#### {_cause_heading(c)}", tr(c.description, lang))
    examples = [e.log if isinstance(e, LogExample) else e for e in c.examples.match]
    if examples:
        w.add(
            "**How to recognise it** (log lines like these):",
            fence("\n".join(ex.strip() for ex in examples[:4]), "text"),
        )
    checks = list(kb.checks_of(c.id))
    if checks:
        w.add("**Checks**")
        for chk in checks:
            _check(w, chk, lang)
    w.add("**Fixes**")
    for fid in c.fixes:
        fix = kb.fixes.get(fid)
        if fix is not None:
            _fix(w, fix, lang)
    if c.references:
        w.add(
            "**References**: "
            + "; ".join(f"[{r.title}]({r.url})" if r.url else r.title for r in c.references)
        )


def _check(w: _Writer, chk: Check, lang: str) -> None:
    kind = "read-only" if chk.read_only else "**changes the machine**"
    w.add(
        f"- *{text_of(chk.title)}* ({kind}, cost {chk.cost:g}{', from every node to every other' if chk.scope == 'pair' else ''}):",
        fence(show_command(chk.run, {})),
        "  A problem if the output " + _describe(chk) + ": " + fill_text(tr(chk.means, lang), {}),
    )


def _describe(chk: Check) -> str:
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


def _fix(w: _Writer, fix: Fix, lang: str) -> None:
    w.add(
        f"- **{text_of(fix.title)}** — "
        + fill_text(tr(fix.steps, lang), {}).replace("\n\n>", "\n\n  >")
    )
    for cmd in fix.commands:
        where = f" ({cmd.where})" if cmd.where else ""
        note = " — changes the machine: confirm before running" if cmd.changes_machine else ""
        w.add(f"  Run{where}{note}:", fence(show_command(cmd.run, {})))
    if fix.params:
        w.add(
            "  "
            + "; ".join(
                f"`<{k}>`: {v.description}" + (f" (e.g. `{v.example}`)" if v.example else "")
                for k, v in fix.params.items()
            )
        )
