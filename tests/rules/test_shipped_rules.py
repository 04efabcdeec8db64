"""The shipped knowledge base is valid, complete, and every inline example behaves.

One pytest case per rule example (`rules test` runs the same cases).
"""

from __future__ import annotations

from functools import cache

import pytest

from kb.authoring import lint, ruletests
from kb.rules.knowledge import KnowledgeBase
from kb.util.paths import rules_dir

REQUIRED = """
nccl-wrong-interface nccl-missing-or-mismatch nccl-shm-too-small nccl-p2p-failure
nccl-ib-missing nccl-ib-fabric-error nccl-nvls-fabric nccl-timeout-hang memlock-limit
duplicate-hostname gpu-rank-mapping port-in-use ssh-passwordless-missing
ssh-port-unreachable docker-network-mode mpi-launch-failure mpi-build-deps
horovod-built-without-nccl cuda-lib-missing cuda-driver-too-old tfds-version
pythonpath-missing tf-distribution-strategy paddle-launch-mode input-pipeline-bottleneck
dataset-format code-version-mismatch gpu-topology-slow framework-env-tuning
benchmark-misconfig
""".split()


@cache
def shipped() -> tuple[KnowledgeBase, tuple[str, ...]]:
    kb, issues = lint.lint(rules_dir())
    return kb, tuple(str(i) for i in issues)


def test_the_shipped_rules_lint_clean_without_warnings() -> None:
    _, issues = shipped()
    assert issues == ()


@pytest.mark.parametrize("cause_id", REQUIRED)
def test_every_required_cause_exists(cause_id: str) -> None:
    kb, _ = shipped()
    assert cause_id in kb.causes


def test_causes_seen_in_logs_have_two_independent_signatures_and_real_examples() -> None:
    kb, _ = shipped()
    thin = [c.id for c in kb.causes.values() if c.signatures and len(c.signatures) < 2]
    no_examples = [c.id for c in kb.causes.values() if c.signatures and not c.examples.match]
    assert thin == []
    assert no_examples == []


def test_every_cause_has_a_check_and_a_fix_with_an_exact_command() -> None:
    kb, _ = shipped()
    for cause in kb.causes.values():
        assert list(kb.checks_of(cause.id)), f"{cause.id} has no check"
        commands = [cmd for fid in cause.fixes for cmd in kb.fixes[fid].commands]
        assert commands, f"{cause.id} has no fix command"


def _cases() -> list[ruletests.ExampleCase]:
    kb, _ = shipped()
    return ruletests.collect(kb)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_rule_example(case: ruletests.ExampleCase) -> None:
    kb, _ = shipped()
    assert ruletests.run_case(kb, case) is None
