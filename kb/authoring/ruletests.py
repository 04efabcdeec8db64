"""Running the examples written inside each rule, as `rules test` and as pytest cases.

A rule "fires" on an example as the diagnosis decides it (`kb.diagnosis.firing`): one of
its stand-alone signatures fired (a signature resting only on generic text never stands
alone), or two or more fired together. Whether the diagnosis then *names* the cause
(its confidence, a failure symptom's vetting of its lines) is tested in
`tests/rules/test_examples_diagnosed.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb.diagnosis.firing import fires as rule_fires
from kb.diagnosis.firing import stands_alone
from kb.diagnosis.matching import SignatureResult, run_signatures
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Cause, Example, LogExample, Symptom


@dataclass(frozen=True)
class ExampleCase:
    rule: str
    expect: str  # "match", "no_match" or "todo"
    index: int
    example: Example

    @property
    def log(self) -> str:
        return self.example.log if isinstance(self.example, LogExample) else self.example

    @property
    def name(self) -> str:
        return f"{self.rule}:{self.expect}[{self.index}]"


def fires(results: list[SignatureResult]) -> bool:
    """Whether these signature results are enough to name the rule's cause."""
    return rule_fires(stands_alone(r.signature) for r in results)


def collect(kb: KnowledgeBase) -> list[ExampleCase]:
    cases: list[ExampleCase] = []
    nodes: list[Cause | Symptom] = [*kb.causes.values(), *kb.symptoms.values()]
    for node in sorted(nodes, key=lambda n: n.id):
        for expect in ("match", "no_match", "todo"):
            for i, ex in enumerate(getattr(node.examples, expect)):
                cases.append(ExampleCase(node.id, expect, i, ex))
    return cases


def run_case(kb: KnowledgeBase, case: ExampleCase) -> str | None:
    """None when the example behaves as declared, else why not."""
    node = kb.causes.get(case.rule) or kb.symptoms[case.rule]
    if not node.signatures:
        return "the rule has examples but no signatures"
    results = run_signatures(node.signatures, case.log.splitlines())
    fired = fires(results)
    if case.expect == "match":
        if not fired:
            partial = ", ".join(r.signature.id for r in results)
            return "no signature fired" + (f" (only supporting: {partial})" if partial else "")
        if isinstance(case.example, LogExample):
            got: dict[str, str] = {}
            for r in results:
                for k, v in r.params.items():
                    got.setdefault(k, v)
            for key, want in case.example.params.items():
                if got.get(key) != want:
                    return f"extracted {key}={got.get(key)!r}, expected {want!r}"
        return None
    if case.expect == "no_match":
        if fired:
            ids = ", ".join(r.signature.id for r in results)
            return f"signature(s) {ids} fired on a line that must not match"
        return None
    if fired:
        return "a 'todo' example now fires: move it to 'match'"
    return None


def run_all(kb: KnowledgeBase) -> tuple[int, int, list[dict[str, str]]]:
    """(passed, todo, failures) over every example of every rule."""
    passed = todo = 0
    failed: list[dict[str, str]] = []
    for case in collect(kb):
        why = run_case(kb, case)
        if why is None:
            if case.expect == "todo":
                todo += 1
            else:
                passed += 1
        else:
            failed.append({"rule": case.rule, "example": case.name, "why": why})
    return passed, todo, failed
