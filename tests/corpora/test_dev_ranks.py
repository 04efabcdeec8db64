"""The diagnosis against the development corpus of real logs (corpora/dev and its healthy
logs in corpora/healthy/dev): the product's truth test.

Why: rule examples are one-liners written by the rule author; these logs were posted
in public threads or printed by a real 2xH200 host, and each is labelled with the
cause its thread (or the capture) established. A healthy log must give no cause
(false alarms cost as much as misses); a failure log must have its cause ranked first.
Logs labelled `other` are real failures outside the known causes: they are kept for
the scorer's report and are not judged here.

Cases the engine does not get right yet are strict xfails in KNOWN_GAPS (with what is
missing), so a fix shows up as an XPASS that asks for the entry to be removed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import corpora_loader as corpora

CORPUS = "dev"
COLUMNS = corpora.COLUMNS
NOT_A_CAUSE = corpora.NOT_A_CAUSE
DEVICE_SOURCE = "2xH200 host"  # sources of logs captured on the project's own machine

# file -> why the engine misses it today (strict xfail: remove the entry once it passes)
KNOWN_GAPS: dict[str, str] = {
    "dockernet-pytorch-23363-two-containers-bridge.log": (
        "a bare 'NCCL error ... unhanled system error' (sic) between two bridged containers: "
        "only symptom-level candidates, and nothing in the log points at the bridge network"
    ),
}


@dataclass(frozen=True)
class Case:
    """One labelled log of the corpus."""

    file: str
    cause_id: str
    source: str
    evidence: str
    path: Path

    @property
    def from_device(self) -> bool:
        return self.source.startswith(DEVICE_SOURCE)


def _read_labels() -> tuple[list[list[str]], list[Case]]:
    headers = [corpora.header(f) for f in corpora.folders(CORPUS)]
    cases = [Case(r.file, r.cause_id, r.source, r.evidence, r.path) for r in corpora.rows(CORPUS)]
    return headers, cases


HEADERS, CASES = _read_labels()
JUDGED = [c for c in CASES if c.cause_id != "other"]


def _param(case: Case) -> Any:
    marks = []
    if case.file in KNOWN_GAPS:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[case.file]))
    return pytest.param(case, id=Path(case.file).stem, marks=marks)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def rules() -> Any:
    from kb.authoring.checked import load_rules

    return load_rules()


def _cause_ids(rules: Any, path: Path) -> list[str]:
    """Ranked cause ids, read from the `diagnose --json` shape the API produces."""
    from kb.diagnosis.engine import diagnose_paths

    result = diagnose_paths(rules, [path]).to_json()
    assert not result.get("errors"), f"{path.name}: {result['errors']}"
    return [c["id"] for c in result["causes"]]


@pytest.fixture(scope="module")
def rule_ids() -> set[str]:
    proc = _cli("rules", "list", "--json")
    assert proc.returncode == 0, f"rules list failed: {proc.stderr.strip()[-500:]}"
    return {r["id"] for r in json.loads(proc.stdout)}


def test_labels_csv_has_the_scorer_columns_and_one_row_per_existing_log() -> None:
    assert HEADERS == [COLUMNS, COLUMNS]
    names = [c.file for c in CASES]
    assert len(names) == len(set(names)), "a log is labelled twice"
    missing = [c.file for c in CASES if not c.path.is_file()]
    assert not missing, f"labelled logs not found: {missing}"
    empty = [c.file for c in CASES if not (c.cause_id and c.source and c.evidence)]
    assert not empty, f"rows with an empty cause_id, source or evidence: {empty}"
    unlabelled = sorted({p.name for p in corpora.logs(CORPUS)} - set(names))
    assert not unlabelled, f"logs without a label: {unlabelled}"


@pytest.mark.slow
def test_every_label_is_a_known_cause_id_or_none_or_other(rule_ids: set[str]) -> None:
    unknown = {c.file: c.cause_id for c in CASES if c.cause_id not in rule_ids | NOT_A_CAUSE}
    assert not unknown, f"cause ids the knowledge base does not define: {unknown}"


def test_public_sources_name_the_thread_they_were_copied_from() -> None:
    public = [c for c in CASES if not c.from_device]
    vague = [c.file for c in public if "/" not in c.source]
    assert not vague, f"public logs without a thread or repository path: {vague}"


def test_corpus_keeps_enough_public_failures_and_healthy_runs() -> None:
    public_failures = [c for c in CASES if not c.from_device and c.cause_id not in NOT_A_CAUSE]
    healthy = [c for c in CASES if c.cause_id == "none"]
    assert len(public_failures) >= 40, len(public_failures)
    assert len(healthy) >= 8, len(healthy)


def test_known_gaps_name_only_labelled_logs() -> None:
    assert set(KNOWN_GAPS) <= {c.file for c in JUDGED}


@pytest.mark.parametrize("case", [_param(c) for c in JUDGED])
@pytest.mark.slow
def test_diagnosis_of_real_log_matches_its_label(case: Case, rules: Any) -> None:
    ids = _cause_ids(rules, case.path)
    if case.cause_id == "none":
        assert ids == [], f"false alarm on a healthy log ({case.source}): {ids[:3]}"
    else:
        assert ids[:1] == [case.cause_id], (
            f"want {case.cause_id} first, got {ids[:3]} (evidence: {case.evidence[:120]})"
        )


@pytest.mark.parametrize(
    "name",
    [
        "h200-nccl-allreduce-healthy.log",
        "h200-torchrun-master-port-in-use.log",
        "shm-nccl-525-kubeflow-posix-fallocate.log",
    ],
)
@pytest.mark.slow
def test_diagnose_cli_json_ranks_causes_as_the_api_does(name: str, rules: Any) -> None:
    case = next(c for c in CASES if c.file == name)
    proc = _cli("diagnose", "--json", str(case.path))
    assert proc.returncode in (0, 1), proc.stderr.strip()[-500:]
    cli_ids = [c["id"] for c in json.loads(proc.stdout)["causes"]]
    assert cli_ids == _cause_ids(rules, case.path)
    assert proc.returncode == (1 if cli_ids else 0)
