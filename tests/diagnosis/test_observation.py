"""A few pasted lines where nothing failed, holding a cause's note marked `asked`: the
user asks about those lines, so the cause is listed (`basis: observation`, below the
"likely" threshold). The same lines in a run's log, or a note not marked `asked`, say
nothing more than a note."""

from __future__ import annotations

from pathlib import Path

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.model import BASIS_OBSERVATION
from kb.diagnosis.ranking import OBSERVED_MAX

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"


def _ids(diag) -> list[tuple[str, str]]:
    return [(c.id, c.basis) for c in diag.causes]


def test_gate_batch_2026_12_01b_pasted_ib_probe_asks_why_infiniband_is_not_used(shipped) -> None:
    # pytorch/pytorch#111424: a Slurm InfiniBand cluster, NCCL falls back to sockets
    log = (
        CORPORA / "batch-2026-12-01b/ibmissing-pytorch-111424-slurm-ib-cluster-no-device-found.log"
    )
    diag = diagnose_paths(shipped, [log])
    assert _ids(diag)[:1] == [("nccl-ib-missing", BASIS_OBSERVATION)]
    assert 0 < diag.causes[0].confidence <= OBSERVED_MAX
    assert diag.failure is None
    assert diag.causes[0].evidence[0].line == 1
    assert diag.to_json()["causes"][0]["basis"] == "observation"


def test_pasted_mxnet_autotune_line_names_its_tuning(shipped) -> None:
    line = (
        "[20:48:19] src/operator/nn/./cudnn/./cudnn_algoreg-inl.h:107: Running performance "
        "tests to find the best convolution algorithm, this can take a while... (setting env "
        "variable MXNET_CUDNN_AUTOTUNE_DEFAULT to 0 to disable)"
    )
    assert _ids(diagnose_text(shipped, line))[:1] == [("framework-env-tuning", BASIS_OBSERVATION)]


def test_same_lines_in_a_run_log_stay_notes(shipped) -> None:
    probe = "node013:37715:38896 [0] NCCL INFO NET/IB : No device found."
    run = "\n".join(
        [probe]
        + [f"node013:37715:38896 [0] NCCL INFO Channel {i:02d}/02 : 0 1" for i in range(6)]
        + ["node013:37715:38896 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE"]
    )
    diag = diagnose_text(shipped, run)
    assert diag.causes == []
    assert any("InfiniBand" in n.text for n in diag.notes)
    assert diag.causes == [] and diagnose_text(shipped, probe).causes  # the paste alone asks


def test_a_note_not_marked_asked_is_no_question(shipped) -> None:
    # NVIDIA/TensorRT-LLM#2225: GeForce GPUs have no P2P; the lines are normal there
    log = CORPORA / "healthy/dev-nccl/healthy-rtx4090-p2p-not-supported.log"
    assert diagnose_paths(shipped, [log]).causes == []


def test_the_text_output_says_nothing_failed(shipped) -> None:
    from kb.diagnosis.render import render

    line = "node013:37715:38896 [0] NCCL INFO NET/IB : No device found."
    text = render(diagnose_text(shipped, line), shipped)
    assert "Nothing in these lines failed" in text
    assert "[nccl-ib-missing, " in text and "a sign seen: nothing failed]" in text
    assert "No known problem found" not in text


def test_gate_batch_2026_12_01_paddle_gpus_visible_to_one_plain_python(shipped) -> None:
    # PaddlePaddle/PaddleOCR#1846: `CUDA_VISIBLE_DEVICES=0,1 && python3 tools/train.py -c
    # ...yml`, one process for two GPUs; the seed's advice is paddle.distributed.launch
    log = (
        CORPORA
        / "batch-2026-12-01/paddle-paddleocr-1846-cuda-visible-devices-train-py-not-launch.log"
    )
    diag = diagnose_paths(shipped, [log])
    assert _ids(diag)[:1] == [("paddle-launch-mode", BASIS_OBSERVATION)]
    assert diag.causes[0].evidence[0].line == 1


def test_one_process_per_gpu_or_another_framework_is_no_paddle_question(shipped) -> None:
    launched = (
        "CUDA_VISIBLE_DEVICES=0,1,2,3 python -m paddle.distributed.launch --gpus 0,1,2,3 "
        "tools/train.py -c configs/ppyolo/ppyolo.yml --eval"
    )
    mmdet = "CUDA_VISIBLE_DEVICES=0,1 python tools/train.py configs/faster_rcnn_r50_fpn_1x.py"
    one_gpu = "CUDA_VISIBLE_DEVICES=0 python tools/train.py -c configs/ppyolo/ppyolo.yml"
    for text in (launched, mmdet, one_gpu):
        assert all(c.id != "paddle-launch-mode" for c in diagnose_text(shipped, text).causes)


def test_gate_batch_2026_12_01d_a_pasted_gloo_mesh_failure_asks_about_the_interface(
    shipped,
) -> None:
    # gpustack/gpustack#2125: one line in backticks, Ray's and c10d's prefixes before it
    log = (
        CORPORA / "batch-2026-12-01d/iface-gpustack-2125-short-gloo-connectfullmesh-two-workers.log"
    )
    diag = diagnose_paths(shipped, [log])
    # a failure wherever it shows: its own signature, not an observation, names the cause
    assert _ids(diag)[:1] == [("nccl-wrong-interface", "evidence")]


def test_gate_batch_2026_12_01d_a_pasted_nccl_tuning_variable_asks_about_it(shipped) -> None:
    # NVIDIA/nccl#1240: `NCCL_GRAPH_FILE set by environment to .../ncv4/graph.xml`
    log = CORPORA / "batch-2026-12-01d/envtune-nccl-1240-short-nccl-graph-file-set-ncv4.log"
    diag = diagnose_paths(shipped, [log])
    assert _ids(diag)[:1] == [("framework-env-tuning", BASIS_OBSERVATION)]
    # the interface and InfiniBand variables are no tuning: they say where traffic goes
    line = "gpu1:7:7 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0"
    assert all(c.id != "framework-env-tuning" for c in diagnose_text(shipped, line).causes)
