"""The launch rules judge a family of messages by its context, not by one wording.

Some launch messages mean a failure only next to another line: `[ ] MXNet` in
`horovodrun --check-build` is normal unless the install asked for MXNet, and a
172.17.x.x address is a Docker bridge problem only when a connection or rendezvous
fails. These tests take real check-build output and real healthy logs, add or remove
the deciding line, and check the diagnosis follows; and they keep every healthy log of
the first two held-out batches and of the H200 dev corpus free of launch causes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import corpora_loader as corpora
from tests.rules.launch_area import LAUNCH_CAUSES
from tests.shipped_rules import fired, ranked

CHECK_BUILD = corpora.path("dev", "healthy-horovod-3051-check-build-nccl.log")


def check_build() -> str:
    if not CHECK_BUILD.exists():
        pytest.skip("no repository test data")
    return CHECK_BUILD.read_text(encoding="utf-8")


def test_an_unchecked_framework_nobody_asked_for_is_not_a_failure() -> None:
    text = check_build()
    assert "    [ ] MXNet" in text
    assert ranked(text) == []
    assert ranked("HOROVOD_WITH_TENSORFLOW=1 pip install horovod[tensorflow]\n" + text) == []


@pytest.mark.parametrize(
    "request_line",
    [
        "$ HOROVOD_WITH_MXNET=1 HOROVOD_GPU_OPERATIONS=NCCL pip install --no-cache-dir horovod",
        "$ pip install --no-cache-dir horovod[mxnet]",
        "import horovod.mxnet as hvd",
    ],
)
def test_an_unchecked_framework_the_job_asked_for_is_a_failed_extension(request_line: str) -> None:
    assert ranked(request_line + "\n" + check_build())[:1] == ["horovod-built-without-nccl"]


def test_an_unchecked_mpi_controller_counts_only_when_mpi_was_requested() -> None:
    text = check_build().replace("    [X] MPI", "    [ ] MPI")
    assert ranked(text) == []
    asked = "$ HOROVOD_WITH_MPI=1 pip install --no-cache-dir horovod\n" + text
    assert ranked(asked)[:1] == ["mpi-build-deps"]


def test_a_bridge_address_alone_is_a_working_single_host_container() -> None:
    line = "e82c50601d13:213:213 [0] NCCL INFO Bootstrap : Using [0]eth0:172.17.0.3<0>\n"
    assert ranked(line * 3) == []
    failed = (
        "e82c50601d13:213:213 [0] include/socket.h:333 NCCL WARN Call to bind failed : "
        "Cannot assign requested address\n"
    )
    assert ranked(line + failed)[:1] == ["docker-network-mode"]


def test_the_docker0_gateway_is_not_read_as_another_container() -> None:
    text = (
        "node2:18553:18611 [0] include/socket.h:360 NCCL WARN Connect to 172.17.0.1<38847> "
        "failed : Connection refused\n"
    )
    # no rule reads it as another container's address; pasted alone the refused
    # connection is a failure whose likely causes (basis: symptom) may include it
    assert "docker-network-mode" not in fired(text)


# ---------------------------------------------------------------- remote node lacks a path

REMOTE_PYTHON = "bash: /home/lxw/anaconda3/envs/sys_py37/bin/python: No such file or directory"


@pytest.mark.parametrize(
    ("context", "launcher_line"),
    [
        ("horovodrun", "Launching horovodrun task function was not successful:"),
        ("older horovodrun", "Launching horovod task function was not successful:"),
        ("pdsh prefix", None),
    ],
)
def test_an_interpreter_missing_on_a_remote_node_is_a_launch_failure(
    context: str, launcher_line: str | None
) -> None:
    """Megatron-DeepSpeed#126 (pdsh) and horovod's task launcher print the remote shell's
    words; every launcher that starts ranks over ssh fails this way."""
    line = REMOTE_PYTHON if launcher_line else "172.16.220.18: " + REMOTE_PYTHON
    text = "\n".join(x for x in (launcher_line, line) if x)
    assert ranked(text)[:1] == ["mpi-launch-failure"], context


def test_a_missing_script_is_a_launch_failure_only_in_a_multi_host_launch() -> None:
    missing = "python: can't open file 'tensorflow_mnist.py': [Errno 2] No such file or directory"
    assert ranked(missing) == []
    local = "$ mpirun -np 2 -H localhost:2 python tensorflow_mnist.py\n" + missing
    assert "mpi-launch-failure" not in ranked(local)
    remote = (  # horovod/horovod#1068
        "$mpirun --allow-run-as-root -np 2 -H master:1,slave0:1 -bind-to none -map-by slot "
        "python tensorflow_mnist.py\n" + missing
    )
    assert ranked(remote)[:1] == ["mpi-launch-failure"]


# ---------------------------------------------------------------- GPU ops missing in Horovod


@pytest.mark.parametrize("dtype", ["Float", "Double", "Half", "Int", "Long"])
def test_a_cuda_tensor_type_every_gpu_build_reduces_means_no_gpu_operations(dtype: str) -> None:
    line = f"ValueError: Tensor type torch.cuda.{dtype}Tensor is not supported."
    assert ranked(line)[:1] == ["horovod-built-without-nccl"]


@pytest.mark.parametrize("dtype", ["Char", "Byte", "Bool"])
def test_a_cuda_tensor_type_no_build_reduces_is_not_a_build_problem(dtype: str) -> None:
    line = f"ValueError: Tensor type torch.cuda.{dtype}Tensor is not supported."
    assert "horovod-built-without-nccl" not in ranked(line)


HEALTHY = corpora.healthy("batch-2026-11-29", "batch-2026-11-30a", "dev-h200")


@pytest.mark.parametrize("path", HEALTHY, ids=[p.name for p in HEALTHY])
@pytest.mark.slow
def test_no_launch_cause_on_a_healthy_log(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    assert not LAUNCH_CAUSES & set(ranked(text))
