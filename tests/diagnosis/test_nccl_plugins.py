"""Hosts of one job that load different NCCL network plugins (kb.diagnosis.analyzers.
nccl_plugins -> nccl-missing-or-mismatch): the real hang of NVIDIA/nccl#1634, and the
logs where every host says the same (silent)."""

from __future__ import annotations

from typing import Any

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from tests import corpora_loader as corpora

# NCCL 2.19+ wording, then 2.4-2.18's, as real logs print them
LOADED = "HGX-H100-04:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\n"
MISSING = "HGX-H100-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\n"
OLD_MISSING = "ip-172-31-0-137:14605:14673 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"


def test_gate_batch_2026_12_01g_a_plugin_on_one_node_only(shipped: Any) -> None:
    # NVIDIA/nccl#1634: HPC-X's SHARP plugin on HGX-H100-04, none on HGX-H100-11: hangs
    log = corpora.path(
        "batch-2026-12-01g", "ncclmismatch-nccl-1634-net-plugin-on-some-nodes-hang.log"
    )
    diag = diagnose_paths(shipped, [log])
    assert [c.id for c in diag.causes] == ["nccl-missing-or-mismatch"]
    top = diag.causes[0]
    assert top.params["host_with_plugin"] == "HGX-H100-04"
    assert top.params["host_without_plugin"] == "HGX-H100-11"
    assert [e.signature for e in top.evidence] == [
        "nccl-plugins/external",
        "nccl-plugins/internal",
    ]


def test_the_older_fallback_wording_counts_too(shipped: Any) -> None:
    diag = diagnose_text(shipped, LOADED + OLD_MISSING)
    assert [c.id for c in diag.causes] == ["nccl-missing-or-mismatch"]


def test_every_host_alike_says_nothing(shipped: Any) -> None:
    two_without = MISSING + MISSING.replace("HGX-H100-11", "HGX-H100-12")
    assert diagnose_text(shipped, two_without).causes == []
    assert diagnose_text(shipped, LOADED + LOADED.replace("-04", "-05")).causes == []


def test_one_host_that_tries_then_loads_is_no_mismatch(shipped: Any) -> None:
    # a host may print the fallback for one name and load another: it has a plugin
    both = MISSING.replace("-11", "-04") + LOADED
    assert diagnose_text(shipped, both + LOADED.replace("-04", "-05")).causes == []
