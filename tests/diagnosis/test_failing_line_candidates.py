"""When the line that ended the run is itself a (weak) sign of a cause, that cause
explains the failure first, even where the failure's own list of causes lacks it."""

from __future__ import annotations

from pathlib import Path

from kb.diagnosis.candidates import ON_FAILING_LINE
from kb.diagnosis.engine import diagnose_paths

ROOT = Path(__file__).resolve().parents[2]


def test_gate_batch_2026_12_01b_gloo_mesh_failure_as_the_final_exception_names_the_interface(
    shipped,
) -> None:
    # vllm-project/vllm#5094: two NICs, Gloo picks the wrong one; every line carries
    # vLLM's `ERROR 05-29 04:08:22 worker_base.py:145]` prefix
    log = ROOT / "corpora/batch-2026-12-01b/iface-vllm-5094-ray-gloo-connectfullmesh-two-nics.log"
    diag = diagnose_paths(shipped, [log])
    assert diag.failure is not None and diag.failure.evidence.line == 2
    first = diag.causes[0]
    assert (first.id, first.basis) == ("nccl-wrong-interface", "symptom")
    assert f"its evidence is the failing line: x{ON_FAILING_LINE:g}" in first.explanation
    assert any(e.line == 2 for e in first.evidence)
