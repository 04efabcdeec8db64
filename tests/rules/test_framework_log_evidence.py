"""What the framework rules read from logs: the data-time signature never claims an input
bottleneck unless data loading takes at least half the step, and real failure logs get
the specific cause rather than a neighbouring one."""

from __future__ import annotations

import random

import pytest

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.matching import run_signatures
from kb.rules.knowledge import KnowledgeBase
from tests import corpora_loader as corpora

LOGS = corpora.ROOT / "dev"


def _data_time_signature(rules: KnowledgeBase):  # type: ignore[no-untyped-def]
    cause = rules.causes["input-pipeline-bottleneck"]
    return next(s for s in cause.signatures if s.id == "data-time-dominates-step")


def _progress_lines(step: float, data: float) -> list[str]:
    return [
        f"Epoch: [0][ 100/5005]\tTime {step:6.3f} ({step:6.3f})\tData {data:6.3f} ({data:6.3f})\tLoss 6.9e+00",
        f"Epoch: [0][100/5005]\tTime {step:.3f} ({step:.3f})\tData {data:.3f} ({data:.3f})\tLoss 6.9",
        f"epoch: [1/120], iter: 100, loss: 4.88, reader_cost: {data:.5f} s, batch_cost: {step:.5f} s, ips: 16.0",
        f"[TRAIN] epoch=1, iter=5/100, loss=2.87, batch_cost={step:.4f}, reader_cost={data:.4f} | ETA 00:01:24",
    ]


@pytest.mark.slow
def test_the_data_time_signature_only_fires_when_data_is_at_least_half_the_step(
    rules: KnowledgeBase,
) -> None:
    sig = _data_time_signature(rules)
    rng = random.Random(20200810)
    fired = 0
    for _ in range(3000):
        step = round(10 ** rng.uniform(-1, 2), 3)
        data = round(step * rng.uniform(0.0, 1.0), 3)
        for line in _progress_lines(step, data):
            if run_signatures([sig], [line]):
                fired += 1
                assert data >= 0.5 * step - 0.001, line
    assert fired > 1000  # the property is not vacuous: it fires on many lines


@pytest.mark.parametrize(
    ("step", "data"),
    [(0.398, 0.371), (7.498, 7.070), (8.010, 7.720), (2.189, 2.070), (0.512, 0.466), (23.4, 21.9)],
)
def test_data_time_close_to_step_time_is_recognised_in_every_log_format(
    rules: KnowledgeBase, step: float, data: float
) -> None:
    sig = _data_time_signature(rules)
    for line in _progress_lines(step, data):
        results = run_signatures([sig], [line])
        assert results, line
        assert abs(float(results[0].params["data_time"]) - data) < 0.001


def test_a_healthy_data_loader_gives_no_input_pipeline_finding(rules: KnowledgeBase) -> None:
    log = "\n".join(_progress_lines(0.305, 0.003))
    diag = diagnose_text(rules, log)
    assert "input-pipeline-bottleneck" not in [c.id for c in diag.causes]


def test_the_libcudart_corpus_log_is_a_missing_cuda_library_not_an_nccl_problem(
    rules: KnowledgeBase,
) -> None:
    diag = diagnose_paths(rules, [LOGS / "h200-libcudart-10.1-missing.log"])
    assert [c.id for c in diag.causes][:1] == ["cuda-lib-missing"]
    assert diag.causes[0].params["library"] == "libcudart.so.10.1"
    assert "nccl-missing-or-mismatch" not in [c.id for c in diag.causes]


def test_a_missing_libnccl_is_left_to_the_nccl_rules(rules: KnowledgeBase) -> None:
    diag = diagnose_text(
        rules, "OSError: libnccl.so.2: cannot open shared object file: No such file or directory"
    )
    assert "cuda-lib-missing" not in [c.id for c in diag.causes]


@pytest.mark.parametrize(
    ("log", "cause"),
    [
        ("cudalib-tensorflow-45930-libcudart-11.0-jupyter.log", "cuda-lib-missing"),
        ("hvddoc-libcuda-so1-missing-at-install.log", "cuda-lib-missing"),
        ("driver-cudf-328-insufficient-driver.log", "cuda-driver-too-old"),
        ("tfdist-models-9109-mwms-socket-closed.log", "tf-distribution-strategy"),
        ("tfdist-tensorflow-17854-tf-config-task-type.log", "tf-distribution-strategy"),
        ("pythonpath-models-11102-movinet-notebook.log", "pythonpath-missing"),
        ("pythonpath-models-8986-object-detection-official.log", "pythonpath-missing"),
        ("tfds-tensorflow-38122-tf2.0beta-tfds2.1.log", "tfds-version"),
        ("tfds-datasets-4216-tfds-4.6-no-dataset-builders.log", "tfds-version"),
        ("codever-dffml-343-tf-1.15.1-estimator-inputs.log", "code-version-mismatch"),
        ("codever-obama-12-tf1-code-on-tf2.log", "code-version-mismatch"),
        ("paddle-paddledetection-7998-ips-127-on-master.log", "paddle-launch-mode"),
        ("dataset-models-7684-tfrecord-shard-missing.log", "dataset-format"),
        ("codever-frontalization-2-dali-nvjpegdecoder-removed.log", "code-version-mismatch"),
    ],
)
def test_real_failure_logs_get_their_cause_first(
    rules: KnowledgeBase, log: str, cause: str
) -> None:
    path = LOGS / log
    if not path.exists():
        pytest.skip(f"{log} is not in corpora/dev")
    diag = diagnose_paths(rules, [path])
    assert [c.id for c in diag.causes][:1] == [cause]


@pytest.mark.slow
def test_healthy_corpus_logs_get_no_framework_cause(rules: KnowledgeBase) -> None:
    mine = {
        c.id
        for c in rules.causes.values()
        if rules.area_of(c.id)
        in {"cuda", "tensorflow", "paddle", "mxnet", "pytorch", "perf", "data"}
    }
    healthy = corpora.healthy("dev")
    assert healthy
    for path in healthy:
        found = {c.id for c in diagnose_paths(rules, [path]).causes}
        assert not found & mine, (path.name, found & mine)
