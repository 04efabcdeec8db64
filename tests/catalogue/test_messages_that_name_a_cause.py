"""Messages whose source says what caused them are catalogued as that cause: real lines
from public threads (the blind batch of 2026-12-01 and the threads its messages come
from) match the entry their library prints, with its class, and a one-line paste of
each is answered with that cause first. The C++ extractor keeps the conversions of a
message built first and used later as a printf format (Paddle's dynamic loader)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.engine import diagnose_text
from kb.rules.catalogue import Catalogue
from tests.catalogue.entry_label import label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import cppmsg  # noqa: E402

# (real line, library, label of its most specific entry)
LINES = [
    (  # kubeflow/mpi-operator#429: ssh ignores a key others can read
        "tensorflow-bencharmark worker Authentication: Permissions 0640 for "
        "'/root/.ssh/id_rsa' are too open.",
        "openssh",
        "cause/ssh-passwordless-missing",
    ),
    (  # open-mpi/ompi#11464 (help-mpi-btl-tcp.txt, "dropped inbound connection")
        "Open MPI detected an inbound MPI TCP connection request from a peer",
        "ompi",
        "cause/mpi-launch-failure",
    ),
    (  # PaddlePaddle/Paddle#55377 (phi/backends/dynload/cudnn.cc)
        "PreconditionNotMetError: Cannot load cudnn shared library. Cannot invoke method "
        "cudnnGetVersion.",
        "paddle",
        "cause/cuda-lib-missing",
    ),
    (  # Zehaos/MobileNet#71 (TF-slim's parallel_reader.get_data_files)
        "ValueError: No data files found in /data/ilsvrc12_shrt_256/validation-*",
        "tensorflow",
        "cause/dataset-format",
    ),
    (  # hiyouga/LlamaFactory#2072 (ProcessGroupNCCL's broadcastUniqueNCCLID)
        "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from "
        "[0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
        "torch",
        "symptom/rendezvous-failure",
    ),
    (  # torch 2.13.0 distributed_c10d.py, on a build without NCCL (Windows, macOS)
        "RuntimeError: Distributed package doesn't have NCCL built in",
        "torch",
        "cause/nccl-missing-or-mismatch",
    ),
    (  # torch 2.13.0 elastic/agent/server/local_elastic_agent.py
        "ValueError: local_rank 4 exceeds available GPUs in CUDA_VISIBLE_DEVICES=0,1,2,3",
        "torch",
        "cause/gpu-rank-mapping",
    ),
    (  # DeepSpeed's runner (launcher/runner.py): its passwordless-ssh check failed
        "RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via "
        "ssh. If you are running with a single node please remove /job/hostfile or setup "
        "passwordless ssh.",
        "deepspeed",
        "symptom/launch-failure",
    ),
    (  # DeepSpeed's launch.py sigkill_handler, as a fine-tuning run's notes quote it
        "[ERROR] [launch.py:341:sigkill_handler] exits with return code = -9",
        "deepspeed",
        "symptom/peer-failure",
    ),
    (  # torch 2.13.0 utils/data/dataloader.py
        "RuntimeError: DataLoader worker (pid(s) 2187) exited unexpectedly",
        "torch",
        "symptom/process-killed",
    ),
    (  # vllm-project/vllm#3069 (NCCL 2.19.3+cuda11.0 under a CUDA 11.6 setup; strongstream.cc)
        "NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA "
        "runtime >= 11.3 or if the installed CUDA driver < R465.",
        "nccl",
        "cause/nccl-missing-or-mismatch",
    ),
    (  # NVIDIA/ai-cloud-validation#643 (no /dev/shm volume in the pod; uct/sm/mm/base/mm_iface.c)
        "mm_iface failed to allocate receive FIFO",
        "ucx",
        "cause/nccl-shm-too-small",
    ),
]


@pytest.mark.parametrize(("line", "library", "label"), LINES)
def test_a_real_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, library: str, label: str
) -> None:
    got, template = label_of(cat, line, library)
    assert got == label, (line, template)


@pytest.fixture(scope="module")
def rules():  # type: ignore[no-untyped-def]
    return load_rules()


@pytest.mark.parametrize(
    ("paste", "cause"),
    [
        (LINES[0][0], "ssh-passwordless-missing"),
        (LINES[1][0], "mpi-launch-failure"),
        (LINES[2][0], "cuda-lib-missing"),
        (LINES[3][0], "dataset-format"),
        (LINES[4][0], "nccl-timeout-hang"),
        (LINES[5][0], "nccl-missing-or-mismatch"),
        ("Error: Building package openmpi:x64-linux failed with: BUILD_FAILED", "mpi-build-deps"),
        ("  eval_samples_per_second     =     -9.554", "benchmark-misconfig"),
        (LINES[-2][0], "nccl-missing-or-mismatch"),
        (LINES[-1][0], "nccl-shm-too-small"),
    ],
)
def test_a_one_line_paste_gets_its_cause_first(rules, paste: str, cause: str) -> None:  # type: ignore[no-untyped-def]
    got = [c.id for c in diagnose_text(rules, paste + "\n").causes]
    assert got[:1] == [cause], got


def test_rank_0_dying_is_no_store_timeout(rules) -> None:  # type: ignore[no-untyped-def]
    """The same store message with a reset connection: rank 0 died, it did not lag; the
    paste is still a failure (the catalogue's rendezvous message), never healthy, though
    the "RuntimeError:" it starts with is no traceback's last line."""
    line = LINES[4][0].replace("Socket Timeout", "Connection reset by peer")
    diag = diagnose_text(rules, line + "\n")
    assert diag.failure is not None
    assert (diag.failure.kind, diag.failure.symptom) == ("exception", "rendezvous-fails")
    assert all(c.basis == "symptom" for c in diag.causes), diag.causes
    assert "nccl-timeout-hang" not in [c.id for c in diag.causes if not c.basis]


def test_a_built_message_used_as_a_format_keeps_its_conversions() -> None:
    src = r"""
    auto error_msg =
        "The third-party dynamic library (%s) that Paddle depends on is not "
        "configured correctly. (error code is %s)\n"
        "  - Windows: set PATH by `set PATH=XXX;%%PATH%%`\n";
    PADDLE_THROW(phi::errors::PreconditionNotMet(error_msg, dso_name, errorno));
    std::string exceptionMsg = c10::str("[Rank ", rank_, "] timed out: 100%");
    LOG(ERROR) << exceptionMsg;
"""
    got = {m.template for m in cppmsg.messages(src)}
    assert (
        "The third-party dynamic library (%s) that Paddle depends on is not configured "
        "correctly. (error code is %s)\n  - Windows: set PATH by `set PATH=XXX;%%PATH%%`\n"
    ) in got
    assert "[Rank %s] timed out: 100%%" in got  # a plain message keeps its literal %


def test_a_rank_the_deepspeed_launcher_saw_killed_is_a_killed_failure(rules) -> None:  # type: ignore[no-untyped-def]
    diag = diagnose_text(
        rules, "[ERROR] [launch.py:341:sigkill_handler] exits with return code = -9\n"
    )
    assert diag.failure is not None and diag.failure.kind == "killed", diag.failure


def test_deepspeed_is_catalogued_from_its_releases(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["deepspeed"].versions.startswith("0.5.0-")
    assert all(m.class_ for m in cat.by_library("deepspeed"))
