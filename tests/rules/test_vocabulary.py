"""The vocabulary of rules/vocabulary/: loaded, carried into the compiled rules, looked up.

The lint side (a misspelt word is a file:line error) is in
tests/core/test_lint_broken_rules.py (cases unknown-finding, unknown-trait,
vocabulary-broken); here: the shipped rules use only defined words, and both forms of the
knowledge base answer `causes_named_by` alike.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb.diagnosis.compiled import CompiledRules, from_kb
from kb.rules import loader

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"


def test_the_shipped_rules_use_only_defined_words() -> None:
    kb, issues = loader.load(RULES)
    words = [i for i in issues if i.check.startswith(("unknown-", "duplicate-", "vocabulary"))]
    assert words == []
    assert kb.vocabulary.findings and kb.vocabulary.traits and kb.vocabulary.observations
    for cause in kb.causes.values():
        assert set(cause.traits) <= set(kb.vocabulary.traits), cause.id
        assert set(cause.named_by) <= set(kb.vocabulary.findings), cause.id
    for symptom in kb.symptoms.values():
        assert set(symptom.named_by) <= set(kb.vocabulary.findings), symptom.id


def test_every_finding_of_the_vocabulary_names_a_rule() -> None:
    kb, _ = loader.load(RULES)
    named = {w for c in kb.causes.values() for w in c.named_by}
    named |= {w for s in kb.symptoms.values() for w in s.named_by}
    assert sorted(set(kb.vocabulary.findings) - named) == []


def test_causes_named_by_agrees_between_the_loaded_and_the_compiled_rules() -> None:
    kb, _ = loader.load(RULES)
    compiled = from_kb(kb)
    assert kb.causes_named_by("gloo-loopback-peer") == ["nccl-wrong-interface"]
    assert kb.symptoms_named_by("nccl-returned-error") == ["nccl-init-fails"]
    for word in kb.vocabulary.findings:
        assert compiled.causes_named_by(word) == kb.causes_named_by(word), word
        assert compiled.symptoms_named_by(word) == kb.symptoms_named_by(word), word
        assert compiled.rules_named_by(word), word
    assert compiled.causes_named_by("no-such-finding") == []


def test_the_vocabulary_survives_the_json_cache() -> None:
    kb, _ = loader.load(RULES)
    compiled = from_kb(kb)
    again = CompiledRules.from_json(compiled.to_json())
    assert again.vocabulary == compiled.vocabulary
    assert again.vocabulary.traits["inter-node"] == {"multi-node": 2.0, "single-node": 0.15}
    assert again.vocabulary.observations["nccl-error-system"] == 0.6
    assert again.causes["nccl-wrong-interface"].traits == kb.causes["nccl-wrong-interface"].traits
    assert again.symptoms["rendezvous-fails"].named_by == ["log-ends-at-start-up"]


@pytest.mark.slow
def test_a_vocabulary_file_is_not_read_as_a_cause(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    kb, issues = loader.load(rules)
    assert "findings" not in kb.causes and "traits" not in kb.causes
    assert not [
        i for i in issues if i.file.startswith("rules/vocabulary/") and i.severity == "error"
    ]


def test_a_changed_vocabulary_changes_the_cache_key(tmp_path: Path) -> None:
    from kb.diagnosis.compiled import rules_key

    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    before = rules_key(rules)
    path = rules / "vocabulary" / "traits.yaml"
    path.write_text(path.read_text().replace("{container: 2.5}", "{container: 3.0}"))
    assert rules_key(rules) != before


def test_a_broken_vocabulary_file_is_one_issue_with_its_line(tmp_path: Path) -> None:
    import os

    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    voc = rules / "vocabulary"
    (voc / "list.yaml").write_text("- just\n- a list\n")
    (voc / "syntax.yaml").write_text("findings:\n  a: [unclosed\n")
    (voc / "words.yaml").write_text("findings: [not, a, mapping]\n")
    os.mkfifo(voc / "fifo.yaml")
    _, issues = loader.load(rules)  # a FIFO must not block the read
    mine = {(i.file, i.check): i for i in issues if i.file.startswith("rules/vocabulary/")}
    assert ("rules/vocabulary/list.yaml", "not-a-mapping") in mine
    assert mine[("rules/vocabulary/syntax.yaml", "yaml-syntax")].line >= 2
    assert mine[("rules/vocabulary/words.yaml", "schema")].line == 1
    assert "not a regular file" in mine[("rules/vocabulary/fifo.yaml", "read")].message
    assert all("\n" not in str(i) for i in issues)


def test_every_observation_the_engine_makes_is_in_the_vocabulary() -> None:
    """A name JobContext reports that traits.yaml lacks would weigh no cause, silently."""
    from kb.diagnosis.analyzers.nccl_errors import _KINDS
    from kb.diagnosis.candidates import JobContext

    kb, _ = loader.load(RULES)
    kinds = [kind for kind, _ in _KINDS]
    assert len(kinds) == 6
    for kind in kinds:
        ctx = JobContext(["c"], ["m"], ["s"], ["i"], ["a"], kind, set())
        names = [name for name, _, _ in ctx.observations()]
        assert len(names) == 6
        assert set(names) <= set(kb.vocabulary.observations), names
    weighed = {o for t in kb.vocabulary.traits.values() for o in t.weights}
    assert weighed == set(kb.vocabulary.observations)  # each observation weighs some trait
