"""Every `match` example of every shipped rule is also *diagnosed*: the real diagnosis
(`kb.diagnosis.engine.diagnose_text` with the shipped rules, compiled) names its cause, or
shows its symptom, and not only `rules test`.

`rules test` runs a rule's signatures alone; the diagnosis adds what lies around them: the
cause's prior and confidence (`LIKELY`), a failure symptom's vetting of its lines (an
exception only as a traceback's last line), the setup-only and completed-run rules. An
example that passes one and not the other is a rule the user never sees.
"""

from __future__ import annotations

from functools import cache

import pytest

from kb.authoring import lint, ruletests
from kb.diagnosis.compiled import CompiledRules, ensure_compiled
from kb.diagnosis.engine import diagnose_text
from kb.rules.knowledge import KnowledgeBase
from kb.util.paths import rules_dir


@cache
def shipped() -> tuple[KnowledgeBase, CompiledRules]:
    kb, _ = lint.lint(rules_dir())
    return kb, ensure_compiled(kb)


def _match_cases() -> list[ruletests.ExampleCase]:
    kb, _ = shipped()
    return [c for c in ruletests.collect(kb) if c.expect == "match"]


def test_there_are_match_examples_of_causes_and_of_symptoms() -> None:
    kb, _ = shipped()
    rules = {c.rule for c in _match_cases()}
    assert len(rules & set(kb.causes)) >= 30
    assert rules & set(kb.symptoms)


@pytest.mark.slow
@pytest.mark.parametrize("case", _match_cases(), ids=lambda c: c.name)
def test_the_diagnosis_names_the_rule_of_its_match_example(case: ruletests.ExampleCase) -> None:
    _, rules = shipped()
    diag = diagnose_text(rules, case.log)
    found = [c.id for c in diag.causes] if case.rule in rules.causes else diag.symptoms
    assert case.rule in found, (
        f"{case.name} passes `rules test` but the diagnosis gives {found} "
        f"(causes {[(c.id, round(c.confidence, 2)) for c in diag.causes]})"
    )
