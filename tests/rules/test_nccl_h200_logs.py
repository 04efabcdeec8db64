"""Real H200 logs give the NCCL causes they were captured for, and healthy runs none.

Two corpora: the H200 dev corpus (`corpora/dev-h200`, a copy of the project's shared one) and
the healthy NCCL cases captured for these rules by `capture_h200_nccl_logs.sh`
(`corpora/healthy/dev-h200-nccl`).
They go through `dlperf-help diagnose --json`, the contract the corpus scorer uses, so
they hold whichever diagnosis engine is behind it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import corpora_loader as corpora

NCCL_LABELS = {
    "none",
    "nccl-wrong-interface",
    "nccl-ib-missing",
    "nccl-p2p-failure",
    "nccl-shm-too-small",
    "nccl-missing-or-mismatch",
}


def labelled(name: str) -> list[tuple[Path, str]]:
    return [(r.path, r.cause_id) for r in corpora.rows(name) if r.cause_id in NCCL_LABELS]


CASES = labelled("dev-h200") + labelled("dev-h200-nccl")


def diagnose(path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "diagnose", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def cause_ids(result: dict[str, Any]) -> list[str]:
    return [c["id"] for c in result["causes"]]  # type: ignore[index,union-attr]


@pytest.mark.parametrize(("log", "want"), CASES, ids=[p.name for p, _ in CASES])
@pytest.mark.slow
def test_each_labelled_log_gives_its_cause_first_or_none_when_healthy(log: Path, want: str) -> None:
    ids = cause_ids(diagnose(log))
    if want == "none":
        assert ids == []
    else:
        assert ids and ids[0] == want


@pytest.mark.slow
def test_the_healthy_all_reduce_log_only_notes_the_socket_fallback() -> None:
    result = diagnose(corpora.path("dev-h200", "h200-nccl-allreduce-healthy.log"))
    notes = [n["id"] for n in result.get("notes", [])]  # type: ignore[union-attr]
    assert cause_ids(result) == []
    assert any(n.startswith("nccl-ib-missing/") for n in notes)


@pytest.mark.parametrize(
    ("log", "param", "value"),
    [
        ("h200-nccl-socket-ifname-missing.log", "configured_iface", "ib9"),
        ("h200-nccl-intranode-via-socket.log", "transport", "Socket"),
    ],
)
@pytest.mark.slow
def test_the_top_cause_carries_the_values_read_from_the_log(
    log: str, param: str, value: str
) -> None:
    top = diagnose(corpora.path("dev-h200", log))["causes"][0]  # type: ignore[index]
    assert top["params"].get(param) == value


@pytest.mark.slow
def test_a_single_node_run_with_nccl_ib_hca_set_is_not_an_ib_problem() -> None:
    result = diagnose(corpora.path("dev-h200-nccl", "h200-ib-hca-set-no-device.log"))
    assert "nccl-ib-missing" not in cause_ids(result)
