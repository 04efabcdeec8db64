"""The frameworks a log shows, from the markers of rules/vocabulary/traits.yaml.

A symptom's candidates are weighed by the framework the logs show (a cause of another
framework's rule folder: x0.2), so the setting analyzer must know each framework by the
lines it really prints: PyTorch's c10d (`[c10d]`, `c10d::` frames, `c10::` errors,
`TCPStore`), torchrun's `[rank0]:` prefix, DeepSpeed, Paddle's C++ frames, launcher and
variables, MXNet's `src/operator/` log lines, Horovod's variables. The markers are data:
their patterns are linted like the rules' (RE2, some literal text, a known framework).
Each line below is quoted from the public thread in its comment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis import reader
from kb.diagnosis.compiled import ensure_compiled
from kb.diagnosis.pipeline import Session
from kb.diagnosis.ranking import analyze
from kb.rules import loader
from kb.rules.vocabulary import Vocabulary


def _frameworks(rules: Any, text: str) -> set[str]:
    session = Session(ensure_compiled(rules), fast=True, use_hyperscan=True)
    outcome = session.run([("pasted", lambda: reader.text_stream(text))])
    _, facts = analyze(outcome.analyzers)
    return set(facts["frameworks"])


@pytest.mark.parametrize(
    ("line", "framework"),
    [
        # https://github.com/ofsoundof/GRL-Image-Restoration/issues/27
        (
            "trainer/0 [1]:[W socket.cpp:558] [c10d] The client socket has failed to connect "
            "to [::ffff:0.0.0.5]:40323 (errno: 110 - Connection timed out).",
            "pytorch",
        ),
        # https://github.com/TheTom/vllm-swift/issues/9
        (
            "[W426 16:56:01.831041000 TCPStore.cpp:347] [c10d] TCP client failed to "
            "connect/validate to host 100.64.0.1:59782 - retrying (try=6, timeout=1800000ms, "
            "delay=5241ms): Connection reset by peer",
            "pytorch",
        ),
        # https://github.com/sgl-project/sglang/issues/1693
        ("terminate called after throwing an instance of 'c10::DistBackendError'", "pytorch"),
        # https://github.com/NVIDIA/nccl/issues/1928
        (
            '[rank2]:   File "/lus/scratch/builder/pytorch_dist_resnet_benchmark.py", '
            "line 301, in <module>",
            "pytorch",
        ),
        # https://github.com/deepspeedai/DeepSpeedExamples/issues/615
        (
            "[2023-06-30 11:01:34,361] [INFO] [real_accelerator.py:110:get_accelerator] "
            "Setting ds_accelerator to cuda (auto detect)",
            "pytorch",
        ),
        (
            "[2023-06-30 11:01:39,534] [WARNING] [comm.py:152:init_deepspeed_backend] NCCL "
            "backend in DeepSpeed not yet implemented",
            "pytorch",
        ),
        # https://github.com/PaddlePaddle/PaddleSeg/issues/1713
        (
            "I0112 18:33:17.212489 10443 nccl_context.cc:74] init nccl context nranks: 2 "
            "local rank: 0 gpu id: 0 ring id: 0",
            "paddle",
        ),
        # https://github.com/PaddlePaddle/Paddle/issues/27081
        (
            "2   paddle::platform::NCCLCommContext::CreateNCCLComm(ncclUniqueId*, int, int, "
            "int, int)",
            "paddle",
        ),
        # https://github.com/PaddlePaddle/PaddleYOLO/issues/121
        ("LAUNCH INFO 2023-04-06 22:26:19,689 devices: 0,1,2,3", "paddle"),
        # https://github.com/PaddlePaddle/PaddleDetection/issues/7380
        ("OSError: (External) NCCL error(2), unhandled system error.", "paddle"),
        # https://github.com/apache/mxnet/issues/10567
        (
            "[20:48:19] src/operator/nn/./cudnn/./cudnn_algoreg-inl.h:107: Running performance "
            "tests to find the best convolution algorithm, this can take a while... (setting "
            "env variable MXNET_CUDNN_AUTOTUNE_DEFAULT to 0 to disable",
            "mxnet",
        ),
        # https://github.com/apache/mxnet/issues/7631 (a Windows build's path)
        (
            "d:\\program files (x86)\\jenkins\\workspace\\mxnet\\mxnet\\src\\operator\\"
            "./cudnn_algoreg-inl.h:112: Running performance tests to find the best "
            "convolution algorithm",
            "mxnet",
        ),
        # https://github.com/tensorflow/tensorflow/issues/39922 (field notes, signature 25)
        ("UnavailableError: Socket closed [Op:CollectiveBcastRecv]", "tensorflow"),
        # https://github.com/dmlc/gluon-cv/issues/1453
        (
            "[1,2]<stderr>:INFO:root:Namespace(amp=False, batch_size=32, data_shape=416, "
            "dataset='coco', epochs=5, gpus='0', horovod=True, label_smooth=True)",
            "horovod",
        ),
    ],
)
def test_a_frameworks_own_line_shows_it(shipped, line: str, framework: str) -> None:
    assert _frameworks(shipped, line + "\n") == {framework}


def test_paddles_process_group_is_not_pytorchs(shipped) -> None:
    # https://github.com/PaddlePaddle/PaddleDetection/issues/7380: Paddle has its own
    # ProcessGroupNCCL (.cc), PyTorch's is ProcessGroupNCCL.cpp
    hint = (
        "  [Hint: Please search for the error code(2) on website (https://docs.nvidia.com/"
        "deeplearning/nccl/user-guide/docs/api/types.html#ncclresult-t) to get Nvidia's "
        "official solution and advice about NCCL Error.] (at /paddle/paddle/fluid/"
        "distributed/collective/ProcessGroupNCCL.cc:236)"
    )
    assert _frameworks(shipped, hint + "\n") == {"paddle"}


def test_a_product_named_in_prose_is_no_marker(shipped) -> None:
    prose = "I tried PyTorch, TensorFlow and Paddle on the same two nodes; all of them hang.\n"
    assert _frameworks(shipped, prose) == set()


def _vocab(tmp_path: Path, markers: str) -> list[tuple[str, int, str]]:
    root = tmp_path / "rules"
    (root / "vocabulary").mkdir(parents=True)
    path = root / "vocabulary" / "traits.yaml"
    path.write_text("frameworks:\n  areas: [pytorch]\n  markers:\n" + markers)
    vocab = Vocabulary()
    assert loader.load_vocabulary_file(path, root, vocab) == []
    return vocab.bad_words()


def test_a_bad_marker_is_a_lint_error_on_its_line(tmp_path: Path) -> None:
    problems = _vocab(
        tmp_path,
        "    pytorch:\n"
        "      - '\\btorch[/.]'\n"
        "      - '(?!torch)c10d'\n"  # lookahead is not RE2
        "      - '\\d+'\n"  # no literal text: most lines would be candidates
        "    keras:\n"  # not a framework area
        "      - 'keras/'\n",
    )
    where = {line: message for _, line, message in problems}
    assert sorted(where) == [6, 7, 9], problems
    assert "negative lookahead is not RE2" in where[6]
    assert "no literal text" in where[7]
    assert "'keras', which is not in areas" in where[9]
    assert all(file == "rules/vocabulary/traits.yaml" for file, _, _ in problems)


def test_the_shipped_markers_are_clean(shipped) -> None:
    kb, _ = loader.load(Path(__file__).resolve().parents[2] / "rules")
    assert kb.vocabulary.frameworks.markers, "the markers are in the vocabulary"
    assert kb.vocabulary._bad_markers() == []
    assert set(kb.vocabulary.frameworks.markers) <= set(kb.vocabulary.frameworks.areas)
