"""NCCL's error codes read in every wrapping: nccl-tests' quoted texts of newer NCCL too.

nccl-tests prints `Test NCCL failure common.cu:<line> '<ncclGetErrorString>'` and, built
with an NCCL that has ncclGetLastError, appends ` / <last error>`; newer NCCL texts carry
`(run with NCCL_DEBUG=... for details)` or `- please report this issue to the NCCL
developers`. Each must give `facts["nccl_error"]` its kind, so the symptom's candidates are
weighed by it, as for the frameworks' wrappings. Each line is quoted from the public thread
in its comment.
"""

from __future__ import annotations

from typing import Any

import pytest

from kb.diagnosis import reader
from kb.diagnosis.compiled import ensure_compiled
from kb.diagnosis.engine import diagnose_text
from kb.diagnosis.pipeline import Session
from kb.diagnosis.ranking import analyze


def _kind(rules: Any, text: str) -> str:
    session = Session(ensure_compiled(rules), fast=True, use_hyperscan=True)
    outcome = session.run([("pasted", lambda: reader.text_stream(text))])
    _, facts = analyze(outcome.analyzers)
    return str(facts.get("nccl_error", ""))


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # https://github.com/NVIDIA/nccl-tests/issues/204
        (
            "DisAI-4090-2: Test NCCL failure common.cu:961 'internal error - please report "
            "this issue to the NCCL developers / '",
            "internal",
        ),
        # https://github.com/NVIDIA/nccl-tests/issues/166 (its title)
        (
            "Test NCCL failure common.cu:958 'internal error - please report this issue to the "
            "NCCL developers / '",
            "internal",
        ),
        # https://github.com/NVIDIA/nccl-tests/issues/58 (older NCCL: the bare text)
        ("Test NCCL failure common.cu:752 'internal error'", "internal"),
        # https://github.com/NVIDIA/nccl-tests/issues/231 (a title cut after the text)
        ("Test NCCL failure common.cu:997 'internal error", "internal"),
        # https://github.com/NVIDIA/nccl-tests/issues/322
        (
            "HCA-14: Test NCCL failure common.cu:1204 'unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for details) / '",
            "cuda",
        ),
        # https://github.com/NVIDIA/nccl-tests/issues/280 (capitalised by newer NCCL)
        ("c2211f46f318: Test NCCL failure common.cu:1005 'unhandled CUDA error'", "cuda"),
        # https://github.com/NVIDIA/nccl/issues/473
        ("fastmoe: Test NCCL failure common.cu:777 'unhandled system error'", "system"),
        # https://github.com/NVIDIA/nccl/issues/1928
        (
            "[rank3]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/"
            "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3763, remote process exited or "
            "there was a network error, NCCL version 2.28.8",
            "remote",
        ),
        # https://github.com/vllm-project/vllm/issues/7548 (its title)
        (
            "[Bug]: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)",
            "invalid-usage",
        ),
        # https://github.com/PaddlePaddle/PaddleDetection/issues/7380 (Paddle gives the code)
        ("OSError: (External) NCCL error(2), unhandled system error.", "system"),
        # https://github.com/hiyouga/LlamaFactory/issues/3405 (its title, cut short)
        (
            "torch.distributed.DistBackendError: NCCL error in: /opt/conda/conda-bld/"
            "pytorch_1704987288773/work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
            "internal error - please report this issue to t",
            "internal",
        ),
    ],
)
def test_each_wrapping_gives_the_errors_kind(shipped, line: str, kind: str) -> None:
    assert _kind(shipped, line + "\n") == kind


@pytest.mark.parametrize(
    "line",
    [
        # https://github.com/NVIDIA/nccl-tests/issues/171: a CUDA failure inside nccl-tests
        "CUDA failure common.cu:892 'invalid device ordinal'",
        # the words of an NCCL code on a line that names no NCCL are not NCCL's
        "RuntimeError: CUDA error: invalid argument",
    ],
)
def test_error_words_on_a_line_without_nccl_are_no_nccl_error(shipped, line: str) -> None:
    assert _kind(shipped, line + "\n") == ""


def test_the_nccl_tests_internal_error_weighs_its_candidates(shipped) -> None:
    # https://github.com/NVIDIA/nccl-tests/issues/166
    line = (
        "Test NCCL failure common.cu:958 'internal error - please report this issue to the "
        "NCCL developers / '"
    )
    diag = diagnose_text(shipped, line + "\n")
    assert diag.symptoms == ["nccl-init-fails"]
    assert diag.causes and all(c.basis == "symptom" for c in diag.causes)
    assert all("internal error: x" in c.explanation for c in diag.causes)
    rules = ensure_compiled(shipped)
    # a cause that NCCL reports as an internal error outranks one it never does
    first = rules.causes[diag.causes[0].id]
    assert "err-internal" in first.traits, first.id
