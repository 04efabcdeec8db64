"""cuda-samples' p2pBandwidthLatencyTest read whole (kb.diagnosis.analyzers.p2p_bandwidth ->
nccl-p2p-failure): peer copies far slower than staged ones in a real A6000 run; a healthy
NVLink-like run and pairs without peer access say nothing."""

from __future__ import annotations

from typing import Any

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from tests import corpora_loader as corpora

HEALTHY = """\
Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 769.53  11.52
     1  11.69 773.19
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 771.24  24.90
     1  25.03 774.93
"""


def test_gate_batch_2026_12_01d_peer_copies_collapse(shipped: Any) -> None:
    # the A6000 run: 1.6-2.6 GB/s with P2P on, 13-22 GB/s staged through the host
    log = corpora.path(
        "batch-2026-12-01d", "p2p-mlengineering-1-a6000-p2p-enabled-bandwidth-collapse.log"
    )
    diag = diagnose_paths(shipped, [log])
    assert [c.id for c in diag.causes][:1] == ["nccl-p2p-failure"]
    top = diag.causes[0]
    assert (top.params["gpu_a"], top.params["gpu_b"]) == ("2", "1")  # the worst ratio
    assert (top.params["p2p_gbs"], top.params["staged_gbs"]) == ("1.6", "21.98")
    assert {e.line for e in top.evidence} == {30, 25}  # the two rows that show it


def test_peer_copies_faster_than_staged_say_nothing(shipped: Any) -> None:
    assert diagnose_text(shipped, HEALTHY).causes == []


def test_an_enabled_matrix_without_its_staged_twin_says_nothing(shipped: Any) -> None:
    enabled_only = "".join(HEALTHY.splitlines(keepends=True)[4:]).replace("24.90", "1.10")
    assert diagnose_text(shipped, enabled_only).causes == []


def test_a_collapse_in_the_bidirectional_pair_counts_too(shipped: Any) -> None:
    bi = HEALTHY.replace("Unidirectional", "Bidirectional").replace("24.90", "3.10")
    diag = diagnose_text(shipped, bi)
    assert [c.id for c in diag.causes][:1] == ["nccl-p2p-failure"]
    assert diag.causes[0].params["gpu_a"] == "0"
