"""The NCCL/IB/GPU checks read real command outputs the way a person would.

Each fixture in `tests/shared/fixtures/h200-x2/` is the recorded output of a command on a
2xH200 host (NVLink NV18, no InfiniBand, a large /dev/shm, memlock unlimited); the
checks of the NCCL, IB and GPU rules must reach the verdict that host deserves. Where
no fixture matches a check's exact command, the command runs on this machine and the
verdict is compared with what Python reads from the kernel directly.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from kb.authoring import lint
from kb.checks.evaluate import evaluate
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Check
from kb.util.paths import rules_dir

FIXTURES = Path(__file__).resolve().parents[1] / "shared" / "fixtures" / "h200-x2"


@cache
def knowledge() -> KnowledgeBase:
    kb, _ = lint.lint(rules_dir())
    return kb


def check(check_id: str) -> Check:
    return knowledge().checks[check_id][1]


def recorded(name: str) -> tuple[str, int]:
    """A fixture's output (without its `$ command` line) and its exit status."""
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    status = int(re.fullmatch(r"\[exit (\d+)\]", lines[-1]).group(1))  # type: ignore[union-attr]
    return "\n".join(lines[1:-1]), status


@pytest.mark.slow
def test_an_nvlink_topology_is_not_reported_as_slow() -> None:
    out, status = recorded("topo.txt")
    outcome = evaluate(check("gpu-topology-matrix"), out, status)
    assert outcome.status == "pass"
    assert outcome.params["gpu0_links"].split() == ["X", "NV18"]


@pytest.mark.slow
def test_a_pcie_only_topology_across_sockets_is_reported_as_slow() -> None:
    out, status = recorded("topo.txt")
    pcie = out.replace("NV18", "SYS")  # the same machine as if the GPUs met through QPI/UPI
    assert evaluate(check("gpu-topology-matrix"), pcie, status).status == "fail"


def test_peer_to_peer_reported_ok_between_the_h200s_passes() -> None:
    out, status = recorded("nvidia-smi-topo-p2p.txt")
    assert evaluate(check("gpu-p2p-status"), out, status).status == "pass"
    unsupported = out.replace(" GPU0\tX\tOK", " GPU0\tX\tCNS", 1)
    assert evaluate(check("gpu-p2p-status"), unsupported, status).status == "fail"


@pytest.mark.slow
def test_active_nvlinks_are_not_reported_down() -> None:
    out, status = recorded("nvlink.txt")
    assert evaluate(check("nvlink-inactive"), out, status).status == "pass"
    down = out.replace("Link 3: 26.562 GB/s", "Link 3: <inactive>", 1)
    assert evaluate(check("nvlink-inactive"), down, status).status == "fail"


def test_the_system_nccl_library_and_its_version_are_found() -> None:
    out, _ = recorded("nccl-libs.txt")
    outcome = evaluate(check("nccl-library-present"), out, 0)
    assert outcome.status == "pass"
    assert outcome.params["version"] == "2.28.3"
    assert outcome.finding == "system NCCL 2.28.3"


def test_no_system_nccl_library_is_a_problem() -> None:
    assert evaluate(check("nccl-library-present"), "", 1).status == "fail"


def test_a_host_without_infiniband_fails_the_device_checks_or_marks_them_unavailable() -> None:
    out, status = recorded("ib.txt")
    # /dev/infiniband holds only rdma_cm: no uverbs device for NCCL to open
    assert evaluate(check("ib-devices-in-container"), out, status).status == "fail"
    missing_tool = "bash: line 1: ibv_devinfo: command not found"
    assert evaluate(check("ib-hca-list"), missing_tool, 127).status == "unavailable"


def test_the_environment_of_the_h200_host_sets_no_transport_override() -> None:
    out, status = recorded("env-nccl.txt")
    assert "NCCL_NVLS_ENABLE=0" in out
    assert evaluate(check("nccl-p2p-shm-overrides"), out, status).status == "pass"
    assert evaluate(check("nccl-ib-overrides"), out, status).status == "pass"
    forced = out + "\nNCCL_P2P_DISABLE=1\nNCCL_IB_DISABLE=1"
    p2p = evaluate(check("nccl-p2p-shm-overrides"), forced, status)
    assert (p2p.status, p2p.finding) == ("fail", "NCCL_P2P_DISABLE=1")
    assert evaluate(check("nccl-ib-overrides"), forced, status).status == "fail"


def test_a_named_host_is_not_a_default_hostname() -> None:
    out, status = recorded("hostname.txt")
    outcome = evaluate(check("hostname-not-default"), out, status)
    assert outcome.status == "pass"
    assert outcome.params["node_hostname"] == "vm"
    assert evaluate(check("hostname-not-default"), "localhost\nlocalhost\n", 0).status == "fail"


def test_gpus_without_fabric_state_are_not_reported_as_a_fabric_failure() -> None:
    out, status = recorded("smi-q.txt")
    assert evaluate(check("fabric-manager-state"), out, status).status == "pass"
    stuck = "    Fabric\n        State                 : In Progress\n        Status                : N/A\n"
    assert evaluate(check("fabric-manager-state"), stuck, 0).status == "fail"


@pytest.mark.skipif(shutil.which("df") is None, reason="df not installed")
def test_the_dev_shm_size_verdict_agrees_with_statvfs() -> None:
    proc = subprocess.run(["df", "-k", "/dev/shm"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip("no /dev/shm here")
    st = os.statvfs("/dev/shm")
    size_kb = st.f_blocks * st.f_frsize // 1024
    outcome = evaluate(check("dev-shm-size"), proc.stdout, proc.returncode)
    assert outcome.status == ("fail" if size_kb < 1024 * 1024 else "pass")
    assert abs(int(outcome.params["shm_kb"]) - size_kb) <= 1


def test_dockers_default_64_mb_dev_shm_is_too_small() -> None:
    docker_default = (
        "Filesystem     1K-blocks  Used Available Use% Mounted on\n"
        "shm                65536     0     65536   0% /dev/shm\n"
    )
    assert evaluate(check("dev-shm-size"), docker_default, 0).status == "fail"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_the_memlock_verdict_agrees_with_getrlimit() -> None:
    proc = subprocess.run(["bash", "-c", "ulimit -l"], capture_output=True, text=True, check=True)
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    outcome = evaluate(check("memlock-ulimit"), proc.stdout, 0)
    assert outcome.status == ("pass" if soft == resource.RLIM_INFINITY else "fail")


def test_the_recorded_unlimited_memlock_passes() -> None:
    out, _ = recorded("ulimit.txt")
    line = next(x for x in out.splitlines() if "max locked memory" in x)
    assert evaluate(check("memlock-ulimit"), line.split()[-1] + "\n", 0).status == "pass"
    assert evaluate(check("memlock-ulimit"), "65536\n", 0).status == "fail"


# `show_gids` as printed in NVIDIA/nccl#1510 (RoCE, two HCAs), after the link-layer lines
SHOW_GIDS_NCCL_1510 = """\
hca_id:\tmlx5_0
\t\t\tlink_layer:\t\tEthernet
DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
---     ----    -----   ---                                     ------------    ---     ---
mlx5_0  1       4       0000:0000:0000:0000:0000:ffff:0a0c:0015 10.12.0.21      v1      net1
mlx5_0  1       5       0000:0000:0000:0000:0000:ffff:0a0c:0015 10.12.0.21      v2      net1
mlx5_0  1       6       fe80:0000:0000:0000:9cbb:b7ff:feb3:937a                 v1      net1
mlx5_0  1       7       fe80:0000:0000:0000:9cbb:b7ff:feb3:937a                 v2      net1
"""


def test_a_roce_v2_gid_with_an_ipv4_address_is_found_and_its_index_extracted() -> None:
    outcome = evaluate(check("roce-gid-v2"), SHOW_GIDS_NCCL_1510, 0)
    assert outcome.status == "pass"
    assert outcome.params["gid_index"] == "5"
    only_link_local = "\n".join(
        line for line in SHOW_GIDS_NCCL_1510.splitlines() if "10.12.0.21" not in line
    )
    assert evaluate(check("roce-gid-v2"), only_link_local, 0).status == "fail"


def test_one_active_port_among_unused_ones_passes_and_no_active_port_fails() -> None:
    mixed = "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\nCA 'mlx5_1'\n\tPort 1:\n\t\tState: Down\n"
    assert evaluate(check("ib-port-state"), mixed, 0).status == "pass"
    assert evaluate(check("ib-port-state"), mixed.replace("Active", "Polling"), 0).status == "fail"


def signature_params(cause_id: str, signature_id: str, line: str) -> dict[str, str] | None:
    """The values one signature extracts from one line, or None when it does not fire."""
    from kb.diagnosis.matching import run_signatures

    sig = next(s for s in knowledge().causes[cause_id].signatures if s.id == signature_id)
    results = run_signatures([sig], [line])
    return results[0].params if results else None


def test_a_virtual_interface_in_the_socket_list_is_noted_with_its_name() -> None:
    nccl_941 = (
        "05-06-76-200:7839:7911 [0] NCCL INFO NET/Socket : Using [0]ens5f0np0:10.220.178.201<0> "
        "[1]ens3f0np0:192.17.3.33<0> [2]ens8f1np1:10.220.178.201<0> [3]bond0:10.220.178.201<0> "
        "[4]virbr0:192.168.122.1<0>"
    )
    found = signature_params("nccl-wrong-interface", "virtual-interface-chosen", nccl_941)
    assert found == {"iface": "virbr0"}


def test_physical_interfaces_in_old_and_new_bootstrap_formats_are_not_noted() -> None:
    for line in (
        "vm:727:727 [0] NCCL INFO Bootstrap: Using eth0:192.0.2.2<0>",
        "<cluster_name>:925:925 [6] NCCL INFO Bootstrap : Using ibp12s0:10.149.0.32<0>",
        "worker:101542:101542 [0] NCCL INFO NET/Socket : Using [0]eno1:172.18.40.41<0>",
    ):
        assert signature_params("nccl-wrong-interface", "virtual-interface-chosen", line) is None
