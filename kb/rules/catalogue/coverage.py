"""What the catalogue covers, per library: `dlperf-help rules coverage`."""

from __future__ import annotations

from typing import Any

from kb.rules.catalogue.catalogue import Catalogue
from kb.rules.catalogue.model import Message


def classified(m: Message, causes: set[str] | None = None, words: set[str] | None = None) -> bool:
    """Whether `m` has a complete class: a cause id (known, when `causes` is given), a
    symptom word (in the vocabulary, when `words` is given), or benign."""
    if m.class_ == "cause":
        return bool(m.cause) and (causes is None or m.cause in causes)
    if m.class_ == "symptom":
        return bool(m.symptom) and (words is None or m.symptom in words)
    return m.class_ == "benign"


def coverage(cat: Catalogue, causes: set[str] | None = None) -> dict[str, Any]:
    """{"libraries": [{name, versions, messages, classified, causes, symptoms, benign}]}."""
    words = set(cat.vocabulary) or None
    rows = []
    for lib in cat.libraries:
        msgs = cat.by_library(lib.name)
        rows.append(
            {
                "name": lib.name,
                "versions": lib.versions,
                "messages": len(msgs),
                "classified": sum(classified(m, causes, words) for m in msgs),
                "causes": sum(m.class_ == "cause" for m in msgs),
                "symptoms": sum(m.class_ == "symptom" for m in msgs),
                "benign": sum(m.class_ == "benign" for m in msgs),
            }
        )
    return {"libraries": rows}


def table(data: dict[str, Any]) -> list[str]:
    """The coverage as a small plain-text table."""
    cols = ["name", "versions", "messages", "classified", "causes", "symptoms", "benign"]
    rows = [[str(r[c]) for c in cols] for r in data["libraries"]]
    widths = [
        max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)
    ]
    out = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    out += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return out
