"""Whole logs from public threads are diagnosed as the launch cause their thread confirmed.

The launch rules (SSH, Open MPI, Docker networking, Horovod) are tested line by line
inside each rule; these tests feed complete excerpts, with their surrounding noise,
through the real diagnosis (fast path and reference path), and make sure the launch
rules stay silent on the healthy logs of the shared test data.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from kb.diagnosis.engine import diagnose_text
from tests.rules_launch.launch_area import LAUNCH_CAUSES
from tests.shipped_rules import knowledge

HERE = Path(__file__).parent
LOGS = HERE / "logs"
REPO_DATA = HERE.parent / "data"


def _labelled(folder: Path, logs: Path) -> list[tuple[str, str]]:
    with open(folder / "labels.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [(r["file"], r["cause_id"]) for r in rows if (logs / r["file"]).exists()]


OWN_CASES = _labelled(LOGS, LOGS)


@pytest.mark.parametrize(("name", "cause"), OWN_CASES, ids=[n for n, _ in OWN_CASES])
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


def _repo_healthy_logs() -> list[Path]:
    logs = REPO_DATA / "logs"
    if not (REPO_DATA / "labels.csv").exists():
        return []
    return [logs / name for name, cause in _labelled(REPO_DATA, logs) if cause == "none"]


@pytest.mark.parametrize("path", _repo_healthy_logs(), ids=lambda p: p.name)
def test_launch_rules_stay_silent_on_a_healthy_run(path: Path) -> None:
    diag = diagnose_text(knowledge(), path.read_text(encoding="utf-8", errors="replace"))
    assert not LAUNCH_CAUSES & {c.id for c in diag.causes}


def test_launch_rules_do_not_claim_logs_labelled_with_other_causes() -> None:
    logs = REPO_DATA / "logs"
    if not (REPO_DATA / "labels.csv").exists():
        pytest.skip("no repository test data")
    wrong = []
    for name, cause in _labelled(REPO_DATA, logs):
        if cause in LAUNCH_CAUSES or cause in ("none", "other"):
            continue
        text = (logs / name).read_text(encoding="utf-8", errors="replace")
        ranked = [c.id for c in diagnose_text(knowledge(), text, name).causes]
        if ranked and ranked[0] in LAUNCH_CAUSES:
            wrong.append((name, cause, ranked[0]))
    assert wrong == []
