"""Round 6: failure families recognised from variants nobody tuned on.

The fifth held-out corpus missed four families that have words to match: a framework's
loader that cannot load libnccl itself (even when the missing piece it names is the CUDA
runtime that libnccl needs), RDMA user-space libraries that do not match each other
(`libmlx5.so: undefined symbol: mlx5dv_...`), an HCA whose own error counters are not
zero, a report saying that a containerised job works with host networking and not on
Docker's bridge network, and a container's sshd that cannot start. Each test feeds the shipped rules short text from public threads
outside every corpus (named at each case), checks that the expected cause ranks first,
and that the healthy look-alike next to it stays clean.
"""

from __future__ import annotations

import pytest

from tests.shipped_rules import fired, ranked

# ---------------------------------------------------------------- a loader cannot load libnccl


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "ngimel/nccl.torch#12 (libnccl found, its CUDA runtime not)",
            "Tried loading libnccl.so.1 but got error ...share/lua/5.1/nccl/ffi.lua:192: "
            "libcudart.so.7.5: cannot open shared object file: No such file or directory\n",
        ),
        (
            "vllm-project/vllm#4312 (issue title)",
            "Failed to import NCCL library: Cannot find libnccl.so.2 in the system.\n",
        ),
        (
            "PaddlePaddle/PaddleOCR#256 (Paddle's dynamic loader)",
            "Error: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared "
            "object file: No such file or directory ) \n"
            " Please specify its path correctly using following ways: \n",
        ),
    ],
)
def test_a_loader_that_cannot_load_libnccl_is_nccl_missing(source: str, text: str) -> None:
    assert ranked(text)[:1] == ["nccl-missing-or-mismatch"], source


def test_optional_nccl_plugins_and_a_missing_cuda_runtime_are_not_nccl_missing() -> None:
    plugin = (
        "ubuntu:9621:9621 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : "
        "libnccl-net.so: cannot open shared object file: No such file or directory\n"
    )
    assert fired(plugin) == []
    cudart = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"
    assert ranked(cudart)[:1] == ["cuda-lib-missing"]


# ---------------------------------------------------------------- RDMA libraries do not match


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "cisco-system-traffic-generator/trex-core#968 (bundled libmlx5 older than OFED)",
            "EAL: so/x86_64/libmlx5-64.so: undefined symbol: mlx5dv_query_devx_port\n"
            "EAL: FATAL: Cannot init plugins\n",
        ),
        (
            "openucx/ucx#5469 (login and compute nodes with different OFED packages)",
            "./a.out: relocation error: /gpfs/projects/opt/ucx/git/lib/ucx/libuct_ib.so.0: "
            "symbol mlx5dv_is_supported, version MLX5_1.8 not defined in file libmlx5.so.1 "
            "with link time reference\n",
        ),
        (
            "microsoft/Freeflow#16 (libibverbs that does not match its provider)",
            "ib_send_bw: symbol lookup error: /usr/lib/libibverbs.so.1: undefined symbol: "
            "mempool_create\n",
        ),
    ],
)
def test_mismatched_rdma_libraries_make_ib_unusable(source: str, text: str) -> None:
    assert ranked(text)[:1] == ["nccl-ib-missing"], source


def test_other_undefined_symbols_and_ib_settings_are_not_ib_missing() -> None:
    ucx_only = (
        "ucx_info: symbol lookup error: /share/software/user/open/ucx/1.7.0/lib/ucx/"
        "libuct_ib.so.0: undefined symbol: uct_ib_exp_qp_fill_attr"
    )
    assert "nccl-ib-missing" not in ranked(ucx_only)
    assert fired("cn76:155:155 [5] NCCL INFO NCCL_IB_DISABLE set by environment to 0.") == []


# ---------------------------------------------------------------- HCA error counters


def test_non_zero_rdma_error_counters_are_an_ib_fabric_error() -> None:
    counters = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/"
    text = (
        f"{counters}implied_nak_seq_err:0\n"
        f"{counters}lifespan:12\n"
        f"{counters}local_ack_timeout_err:2705\n"
        f"{counters}np_cnp_sent:1333\n"
    )
    # bytedance/byteps#179 (RDMA slower than TCP on RoCE)
    assert ranked(text)[:1] == ["nccl-ib-fabric-error"]


def test_clean_rdma_counters_are_not_a_failure() -> None:
    counters = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/"
    text = (
        f"{counters}duplicate_request:0\n"
        f"{counters}local_ack_timeout_err:0\n"
        f"{counters}lifespan:10\n"
        f"{counters}np_cnp_sent:17269947\n"
        f"{counters}out_of_sequence:0\n"
    )
    assert fired(text) == []
    exporter = (
        'implied_nak_seq_err_total{ifName="mlx5_10",otel_scope_name="spiderpool_agent",'
        'podName="rdma-test-gpu-tool-s9bwg",port="1"} 0'
    )
    # spidernet-io/spiderpool#4112 (a metrics exporter listing the counters)
    assert fired(exporter) == []


# ---------------------------------------------------------------- works only on host network


def test_a_job_that_needs_host_networking_is_docker_network_mode() -> None:
    # horovod/horovod#1466
    text = (
        "Can you run Horovod in Docker without using host networking but using the default "
        "bridge network instead, when each worker container lives on a separate Docker host?"
    )
    assert ranked(text)[:1] == ["docker-network-mode"]


def test_describing_the_network_modes_or_trying_host_mode_is_not_a_failure() -> None:
    seed = (
        "• docker的host模式\n"
        "• docker的bridge模式\n"
        "host模式，需要通过docker run时添加参数 --net=host 指定，该模式下表示容器和物理机共用端口\n"
    )
    assert "docker-network-mode" not in ranked(seed)
    # facebookarchive/caffe2#2446: host mode named, no bridge network, no failure
    trying = (
        "i will try to run the image on host mode to see whether it's worked, deploying with "
        "docker on multiple nodes will save a lot of efforts."
    )
    assert fired(trying) == []


# ---------------------------------------------------------------- the container's sshd cannot start


@pytest.mark.parametrize(
    ("source", "line"),
    [
        (
            "OpenHands/OpenHands#1297 (sshd started by hand in a sandbox container)",
            "ssh_box.py:325 - b'Missing privilege separation directory: /run/sshd\\r\\n'",
        ),
        (
            "moby/moby#19351 (CMD /usr/sbin/sshd -D, older lower-case wording)",
            "missing privilege separation directory /var/run/sshd;",
        ),
    ],
)
def test_an_sshd_that_cannot_start_leaves_the_ssh_port_unreachable(source: str, line: str) -> None:
    assert ranked(line)[:1] == ["ssh-port-unreachable"], source


def test_creating_the_sshd_directory_in_a_dockerfile_is_not_a_failure() -> None:
    assert fired("RUN mkdir -p /var/run/sshd") == []
