"""The label of the catalogue entry a real line matches, as the catalogue tests compare it;
and a small catalogue folder of one library for the tests that build their own."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb.rules.catalogue import Catalogue

ROOT = Path(__file__).resolve().parents[2]


def catalogue_folder(tmp_path: Path, library_yaml: str) -> Path:
    """A catalogue folder under `tmp_path`: the shipped symptom words and one library
    file, `demo.yaml`, holding `library_yaml`."""
    root = tmp_path / "catalogue"
    root.mkdir()
    shutil.copy(ROOT / "catalogue" / "symptoms.yaml", root / "symptoms.yaml")
    (root / "demo.yaml").write_text(library_yaml, encoding="utf-8")
    return root


def label_of(cat: Catalogue, line: str, library: str) -> tuple[str, str]:
    """(label, template) of the most specific entry of `library` that `line` matches:
    `cause/<id>`, `symptom/<word>` or `benign`; the label is "" when none matches."""
    hits = [m for m in cat.match(line) if m.library == library]
    if not hits:
        return "", ""
    m = max(hits, key=lambda h: len(h.template))
    label = f"{m.class_}/{m.cause or m.symptom}" if m.class_ != "benign" else "benign"
    return label, m.template


def check_pasted_lines(lines: list[tuple[str, str]], after_benign: str = "") -> None:
    """Each (line, label) pasted alone: a `cause/<id>` line ranks that cause first, a
    `benign` line (followed by `after_benign`, a line that shows the run going on, where
    the benign line alone reads as a start that stalled) fires no cause."""
    from kb.authoring.checked import load_rules
    from kb.diagnosis.engine import diagnose_text

    rules = load_rules()
    for line, label in lines:
        if label.startswith("cause/"):
            got = [c.id for c in diagnose_text(rules, line + "\n").causes]
            assert got[:1] == [label.removeprefix("cause/")], (line, got)
        elif label == "benign":
            text = f"{line}\n{after_benign}\n" if after_benign else line + "\n"
            got = [c.id for c in diagnose_text(rules, text).causes]
            assert got == [], (line, got)
