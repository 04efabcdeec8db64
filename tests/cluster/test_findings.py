"""The cluster report and the speedup verdict name causes only through the rules.

Every finding they emit (`kb.cluster.findings.Finding`) must be defined in
rules/vocabulary/ by the module that emits it and be named by a rule, so a misspelt
finding fails here instead of silently naming nothing; none of their modules writes a
cause or symptom id; with no rules loaded a finding names nothing.
"""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from cluster_helpers import FIXTURES, shipped_book, shipped_rules

from kb.cluster import speedup, survey
from kb.cluster.findings import Finding
from kb.cluster.report import CauseBook, build_report, load_text
from kb.cluster.speedup import Point
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import text_of

KB_ROOT = Path(__file__).parents[2]
EMITTERS = (
    "kb.cluster.report.rules_facts",
    "kb.cluster.report.rules",
    "kb.cluster.speedup.verdict",
)
OWN_MODULES = (
    *EMITTERS,
    "kb.cluster.findings",
    "kb.cluster.report.causes",
    "kb.cluster.report.compare",
    "kb.cluster.report.rulekit",
    "kb.sysinfo.topology",
    "kb.sysinfo.ifadvice",
)


def source(module: str) -> str:
    return (KB_ROOT / (module.replace(".", "/") + ".py")).read_text()


def vocabulary_problems(kb: KnowledgeBase, findings: Iterable[tuple[str, str]]) -> list[str]:
    """(member name, finding name) pairs that the vocabulary lacks, that no emitter it
    lists uses, or that no rule names."""
    problems = []
    for member, word in findings:
        defined = kb.vocabulary.findings.get(word)
        if defined is None:
            problems.append(f"{word}: not defined in rules/vocabulary/")
            continue
        if not any(m in EMITTERS and f"Finding.{member}" in source(m) for m in defined.emitted_by):
            problems.append(f"{word}: emitted by none of {defined.emitted_by}")
        if not kb.causes_named_by(word) + kb.symptoms_named_by(word):
            problems.append(f"{word}: no rule lists it under named_by")
    return problems


def test_every_finding_is_defined_by_its_emitter_and_named_by_a_rule() -> None:
    kb = shipped_rules()
    assert vocabulary_problems(kb, [(f.name, f.value) for f in Finding]) == []
    ours = {w for w, d in kb.vocabulary.findings.items() if set(d.emitted_by) & set(EMITTERS)}
    assert ours == {f.value for f in Finding}  # nothing defined for us that we never emit


def test_a_misspelt_finding_is_caught() -> None:
    problems = vocabulary_problems(
        shipped_rules(), [("HOSTNAME_DUPLICATE", "report-hostname-duplicat")]
    )
    assert problems == ["report-hostname-duplicat: not defined in rules/vocabulary/"]


def test_each_stage_names_one_symptom_and_each_other_finding_causes() -> None:
    kb = shipped_rules()
    stages = set(speedup.STAGES.values())
    for finding in Finding:
        if finding in stages:
            assert len(kb.symptoms_named_by(finding.value)) == 1, finding
            assert kb.causes_named_by(finding.value) == [], finding
        else:
            assert kb.causes_named_by(finding.value), finding


def test_no_cause_or_symptom_id_is_written_in_these_modules() -> None:
    kb = shipped_rules()
    ids = set(kb.causes) | set(kb.symptoms)
    for module in OWN_MODULES:
        tree = ast.parse(source(module))
        written = {
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in ids
        }
        assert written == set(), module


H200 = survey.parse_output((FIXTURES / "survey" / "h200-survey-raw.txt").read_text())


def two_nodes(**facts: object) -> str:
    docs = []
    for host in ("gpu01", "gpu02"):
        doc = copy.deepcopy(H200)
        doc["host"] = doc["facts"]["hostname"] = host
        doc["facts"]["boot_id"] = f"boot-{host}"
        docs.append(doc)
    docs[1]["facts"].update(facts)
    return json.dumps(docs)


def test_without_rules_a_finding_names_nothing() -> None:
    """Planted: gpu02 has another system NCCL."""
    text = two_nodes(nccl_system_version="2.6.4")
    bare = build_report(load_text(text, "x.json"), CauseBook())
    assert [d["fact"] for d in bare.differences] == ["nccl_system_version"]
    assert bare.causes == []
    ruled = build_report(load_text(text, "x.json"), shipped_book())
    [cause] = ruled.causes
    assert cause["id"] == "nccl-missing-or-mismatch" and cause["fixes"]
    assert cause["title"] == text_of(shipped_rules().causes[cause["id"]].title)


def test_a_cause_a_failed_check_names_is_titled_by_its_id_without_rules() -> None:
    """Synthetic `check --json`: one host's /dev/shm check failed."""
    check = {"id": "shm-size", "cause": "nccl-shm-too-small", "command": "df -k /dev/shm"}
    hosts = [
        {"host": h, "ok": True, "error": None, "checks": [{**check, "status": s, "finding": f}]}
        for h, s, f in (("gpu01", "pass", "16 GiB"), ("gpu02", "fail", "64 MiB"))
    ]
    text = json.dumps({"hosts": hosts})
    bare = build_report(load_text(text, "check.json"), CauseBook())
    assert [(c["id"], c["title"], c["fixes"]) for c in bare.causes] == [
        ("nccl-shm-too-small", "nccl-shm-too-small", [])
    ]
    [ruled] = build_report(load_text(text, "check.json"), shipped_book()).causes
    assert ruled["title"] == text_of(shipped_rules().causes["nccl-shm-too-small"].title)


@pytest.mark.parametrize(
    "points, expect",
    [
        (
            [Point(1, 1, 200)],
            [
                ("input-pipeline-bottleneck", 0.5),
                ("framework-env-tuning", 0.45),
                ("benchmark-misconfig", 0.4),
                ("cuda-lib-missing", 0.35),
            ],
        ),
        (
            [Point(1, 1, 321.8), Point(1, 8, 1500)],
            [
                ("gpu-topology-slow", 0.5),
                ("nccl-p2p-failure", 0.5),
                ("input-pipeline-bottleneck", 0.45),
                ("horovod-built-without-nccl", 0.4),
                ("nccl-shm-too-small", 0.35),
                ("framework-env-tuning", 0.35),
                ("benchmark-misconfig", 0.35),
            ],
        ),
        (
            [Point(1, 1, 321.8), Point(1, 8, 2458.7), Point(4, 8, 5000)],
            [
                ("nccl-ib-missing", 0.6),
                ("nccl-wrong-interface", 0.45),
                ("horovod-built-without-nccl", 0.4),
                ("memlock-limit", 0.35),
                ("nccl-ib-fabric-error", 0.35),
                ("input-pipeline-bottleneck", 0.35),
                ("tf-distribution-strategy", 0.35),
                ("framework-env-tuning", 0.35),
            ],
        ),
    ],
    ids=["single-gpu", "intra-node", "inter-node"],
)
def test_the_suspects_of_each_stage_come_from_the_rules_in_their_order(
    points: list[Point], expect: list[tuple[str, float]]
) -> None:
    """The causes and confidences the verdict gave when they were written in Python."""
    config = speedup.resolve("tensorflow2.3.0", "resnet50v1.5", "fp32", 128)
    verdict = speedup.judge(config, points, shipped_book())
    assert [(c["id"], c["confidence"]) for c in verdict.causes] == expect
    assert speedup.judge(config, points).causes == []  # no rules: nothing named
