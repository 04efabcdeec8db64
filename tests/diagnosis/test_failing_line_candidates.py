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
    # the line is a failure wherever it shows (ProcessGroupGloo's constructor throws it):
    # its own signature names the cause, above the symptom level
    assert (first.id, first.basis) == ("nccl-wrong-interface", "evidence")
    assert first.confidence > 0.5
    assert [e.line for e in first.evidence] == [2]


def test_gate_batch_2026_11_29_a_weak_note_on_the_failing_line_lifts_its_cause(shipped) -> None:
    # NVIDIA/nccl#473: nccl-tests under conda, `unhandled system error`; the shm note's
    # line is the one that failed
    log = ROOT / "corpora/batch-2026-11-29/shm-nccl-473-nccl-tests-conda-unhandled-system-error.log"
    first = diagnose_paths(shipped, [log]).causes[0]
    assert (first.id, first.basis) == ("nccl-shm-too-small", "symptom")
    assert f"its evidence is the failing line: x{ON_FAILING_LINE:g}" in first.explanation


def test_gate_batch_2026_12_01c_exception_raised_in_dataset_code_is_the_datas(shipped) -> None:
    # open-mmlab/mmdetection#4139: `KeyError: 'height'` from mmdet/datasets/coco.py, a COCO
    # annotation file without image sizes
    log = ROOT / "corpora/batch-2026-12-01c/dataset-mmdet-4139-coco-keyerror-height.log"
    diag = diagnose_paths(shipped, [log])
    assert diag.failure is not None and diag.failure.symptom == "python-exception"
    assert (diag.causes[0].id, diag.causes[0].basis) == ("dataset-format", "symptom")
    assert "dataset-format/failed-in-dataset-code" in {n.id for n in diag.notes}


def test_the_same_exception_in_model_code_is_not_weighed_as_data(shipped) -> None:
    from kb.diagnosis.engine import diagnose_text

    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/proj/train.py", line 88, in <module>\n'
        "    main()\n"
        '  File "/home/u/proj/models/head.py", line 61, in forward\n'
        "    w = self.cfg['height']\n"
        "KeyError: 'height'\n"
    )
    diag = diagnose_text(shipped, log)
    assert diag.failure is not None
    assert "dataset-format/failed-in-dataset-code" not in {n.id for n in diag.notes}


def test_gate_batch_2026_12_01d_an_exception_of_a_packages_data_parser_is_the_datas(
    shipped,
) -> None:
    # hiyouga/LLaMA-Factory#7703: `ValueError: Undefined dataset mllm_demo in
    # dataset_info.json.` raised in llamafactory/data/parser.py
    log = (
        ROOT
        / "corpora/batch-2026-12-01d/dataset-llamafactory-7703-short-undefined-dataset-mllm-demo.log"
    )
    diag = diagnose_paths(shipped, [log])
    assert (diag.causes[0].id, diag.causes[0].basis) == ("dataset-format", "symptom")
