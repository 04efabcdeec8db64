"""Checks of the words rules share with the engine (`rules/vocabulary/`), run by the loader.

A cause's `named_by` and `traits`, and a symptom's `named_by`, must use words the
vocabulary defines: a misspelt finding name would leave its finding without a cause (a
note instead of a diagnosis) and a misspelt trait would weigh nothing, both silently.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator

from kb.rules.knowledge import Issue, KnowledgeBase


def check_words(kb: KnowledgeBase) -> list[Issue]:
    """Every problem with the vocabulary and the words the rules use from it."""
    out = [Issue(f, line, "", "vocabulary", msg) for f, line, msg in kb.vocabulary.bad_words()]
    out.extend(check_vocabulary_words(kb))
    out.extend(check_unnamed_findings(kb))
    return out


def check_vocabulary_words(kb: KnowledgeBase) -> Iterator[Issue]:
    vocab = kb.vocabulary
    nodes: list[tuple[str, str, list[str], dict[str, object]]] = []
    for cid, cause in kb.causes.items():
        nodes.append((cid, "named_by", list(cause.named_by), dict(vocab.findings)))
        nodes.append((cid, "traits", list(cause.traits), dict(vocab.traits)))
    for sid, symptom in kb.symptoms.items():
        nodes.append((sid, "named_by", list(symptom.named_by), dict(vocab.findings)))
    for rid, key, words, known in nodes:
        src = kb.sources[rid]
        what = "finding" if key == "named_by" else "trait"
        file = "findings" if key == "named_by" else "traits"
        for i, word in enumerate(words):
            if word in known:
                continue
            yield Issue(
                src.display,
                src.line(key, i),
                rid,
                f"unknown-{what}",
                f"{what} '{word}' is not defined in rules/vocabulary/",
                _near(word, known) or f"define it under '{file}:' in rules/vocabulary/{file}.yaml",
            )
        for i, word in enumerate(words):
            if word in words[:i]:
                yield Issue(
                    src.display,
                    src.line(key, i),
                    rid,
                    f"duplicate-{what}",
                    f"{what} '{word}' is listed twice",
                )


def check_unnamed_findings(kb: KnowledgeBase) -> Iterator[Issue]:
    """A finding no rule lists in `named_by` would only ever be a note: say so."""
    named = {w for c in kb.causes.values() for w in c.named_by}
    named |= {w for s in kb.symptoms.values() for w in s.named_by}
    for word in kb.vocabulary.findings:
        if word not in named:
            file, line = kb.vocabulary.where[("findings", word)]
            yield Issue(
                file,
                line,
                "",
                "unnamed-finding",
                f"finding '{word}' is listed under no rule's named_by",
                "add it to the named_by of the cause it is evidence for",
                severity="warning",
            )


def _near(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""
