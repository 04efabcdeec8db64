"""Whole logs from public threads are diagnosed as the launch cause their thread confirmed.

The launch rules (SSH, Open MPI, Docker networking, Horovod) are tested line by line
inside each rule; these tests feed complete excerpts, with their surrounding noise,
through the real diagnosis (fast path and reference path), and make sure the launch
rules stay silent on the healthy logs of the development corpus (corpora/dev,
corpora/dev-launch).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.diagnosis.engine import diagnose_text
from tests import corpora_loader as corpora
from tests.rules.launch_area import LAUNCH_CAUSES
from tests.shipped_rules import knowledge

LOGS = corpora.ROOT / "dev-launch"
OWN_CASES = [(r.file, r.cause_id) for r in corpora.rows("dev-launch") if r.path.exists()]


@pytest.mark.parametrize(("name", "cause"), OWN_CASES, ids=[n for n, _ in OWN_CASES])
@pytest.mark.slow
def test_a_thread_excerpt_is_diagnosed_as_its_confirmed_cause_first(name: str, cause: str) -> None:
    text = (LOGS / name).read_text(encoding="utf-8")
    for fast in (True, False):
        diag = diagnose_text(knowledge(), text, name, fast=fast)
        ranked = [c.id for c in diag.causes]
        assert ranked, f"no cause found in {name} (fast={fast})"
        assert ranked[0] == cause, f"{name}: {ranked} (fast={fast})"


def test_every_launch_cause_has_a_whole_log_among_the_excerpts() -> None:
    covered = {cause for _, cause in OWN_CASES}
    assert covered == LAUNCH_CAUSES


def test_the_diagnosis_names_the_values_the_fix_needs() -> None:
    text = (LOGS / "horovod-2803-ssh-port-timeout.log").read_text(encoding="utf-8")
    diag = diagnose_text(knowledge(), text)
    top = diag.causes[0]
    assert (top.params["host"], top.params["port"]) == ("xxxx", "12345")
    assert "launcher-pass-ssh-port" in top.fixes


@pytest.mark.parametrize("path", corpora.healthy("dev"), ids=lambda p: p.name)
@pytest.mark.slow
def test_launch_rules_stay_silent_on_a_healthy_run(path: Path) -> None:
    diag = diagnose_text(knowledge(), path.read_text(encoding="utf-8", errors="replace"))
    assert not LAUNCH_CAUSES & {c.id for c in diag.causes}


@pytest.mark.slow
def test_launch_rules_do_not_claim_logs_labelled_with_other_causes() -> None:
    wrong = []
    for row in corpora.failures("dev"):
        if row.cause_id in LAUNCH_CAUSES:
            continue
        text = row.path.read_text(encoding="utf-8", errors="replace")
        ranked = [c.id for c in diagnose_text(knowledge(), text, row.file).causes]
        if ranked and ranked[0] in LAUNCH_CAUSES:
            wrong.append((row.file, row.cause_id, ranked[0]))
    assert wrong == []
