"""The label of the catalogue entry a real line matches, as the catalogue tests compare it."""

from __future__ import annotations

from kb.rules.catalogue import Catalogue


def label_of(cat: Catalogue, line: str, library: str) -> tuple[str, str]:
    """(label, template) of the most specific entry of `library` that `line` matches:
    `cause/<id>`, `symptom/<word>` or `benign`; the label is "" when none matches."""
    hits = [m for m in cat.match(line) if m.library == library]
    if not hits:
        return "", ""
    m = max(hits, key=lambda h: len(h.template))
    label = f"{m.class_}/{m.cause or m.symptom}" if m.class_ != "benign" else "benign"
    return label, m.template
