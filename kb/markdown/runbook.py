"""The knowledge base (or some causes) as one Markdown runbook a team can print or wiki.

Layout: a table of contents, then one section per symptom (grouped by kind of trouble)
holding the questions that tell its causes apart and one section per cause: how to
recognise it, the checks with their commands fenced, and the fixes, written by
`kb.markdown.blocks` as in the session runbook and the assistant.  A cause listed
under several symptoms is written once, under its first, and linked from the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kb.markdown.blocks import cause_block, fence, tr
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Cause, Symptom, text_of
from kb.util.secrets import mask

__all__ = ["GROUP_TITLES", "fence", "render", "slug", "tr"]

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
    """The cause as every document shows it (`kb.markdown.blocks`), under a heading the
    table of contents links to; nothing is known yet, so every value is `<name>`."""
    w.add(f"#### {_cause_heading(c)}")
    w.add(
        cause_block(
            kb, c.id, {}, lang, examples=True, heading="####", title=False, detail=True, meta=False
        )
    )
