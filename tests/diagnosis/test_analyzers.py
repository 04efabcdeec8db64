"""The analyzers on real captured logs and pasted command outputs.

The fixture rules give the analyzers' causes no signatures of their own, so every
cause found here comes from what the analyzers derived, not from a rule's regex.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.diagnosis.engine import diagnose_paths, diagnose_text

from .conftest import DEV_CORPUS, H200_FIXTURES

SOCKET_LOG = DEV_CORPUS / "h200-nccl-intranode-via-socket.log"
HEALTHY_LOG = DEV_CORPUS / "h200-nccl-allreduce-healthy.log"


def _finding_ids(diag, cause: str) -> list[str]:  # type: ignore[no-untyped-def]
    for c in diag.causes:
        if c.id == cause:
            return sorted({e.signature for e in c.evidence})
    return []


@pytest.mark.slow
def test_intra_node_traffic_over_sockets_is_a_p2p_failure(rules) -> None:
    diag = diagnose_paths(rules, [SOCKET_LOG])
    assert [c.id for c in diag.causes] == ["nccl-p2p-failure"]
    cause = diag.causes[0]
    assert cause.params["host"] == "vm"
    assert cause.params["transport"] == "NET/Socket/0"
    assert cause.params["bandwidth"] == "2.9 GB/s"
    assert any("via NET/Socket/0" in e.text for e in cause.evidence)
    notes = {n.id for n in diag.notes}
    assert {"nccl-env-nccl_p2p_disable", "nccl-env-nccl_shm_disable"} <= notes


def test_the_healthy_nvlink_run_gives_no_cause_and_no_finding(rules) -> None:
    diag = diagnose_paths(rules, [HEALTHY_LOG])
    assert diag.causes == []


@pytest.mark.parametrize("fixture", sorted(p.name for p in H200_FIXTURES.glob("*.txt")))
def test_real_command_outputs_of_a_healthy_host_give_no_cause(rules, fixture: str) -> None:
    diag = diagnose_paths(rules, [H200_FIXTURES / fixture])
    assert diag.causes == [], [c.id for c in diag.causes]


def _nccl(host: str, pid: int, dev: int, msg: str) -> str:
    return f"{host}:{pid}:{pid} [{dev}] NCCL INFO {msg}"


def test_different_nccl_versions_in_one_communicator(rules) -> None:
    lines = []
    for rank, (host, version) in enumerate([("gpu01", "2.7.3"), ("gpu02", "2.6.4")]):
        pid = 100 + rank
        lines += [
            _nccl(host, pid, 0, f"NCCL version {version}+cuda10.2"),
            _nccl(
                host,
                pid,
                0,
                f"ncclCommInitRank comm 0x55{rank} rank {rank} nranks 2 cudaDev 0 "
                "busId 1a000 commId 0xabc - Init START",
            ),
        ]
    diag = diagnose_text(rules, "\n".join(lines))
    assert [c.id for c in diag.causes] == ["nccl-missing-or-mismatch"]
    assert diag.causes[0].params["nccl_versions"] == "2.6.4, 2.7.3"


def test_version_differences_between_separate_runs_on_one_host_are_not_a_mismatch(rules) -> None:
    lines = [
        _nccl("gpu01", 100, 0, "NCCL version 2.7.3"),
        _nccl("gpu01", 100, 0, "comm 0x1 rank 0 nranks 1 cudaDev 0 busId 1a000 - Init COMPLETE"),
        _nccl("gpu01", 200, 0, "NCCL version 2.8.4"),
        _nccl("gpu01", 200, 0, "comm 0x2 rank 0 nranks 1 cudaDev 0 busId 1a000 - Init COMPLETE"),
    ]
    assert diagnose_text(rules, "\n".join(lines)).causes == []


def _two_nodes(iface: str, a1: str, a2: str, via: str = "NET/IB/0") -> str:
    lines = []
    for rank, (host, addr) in enumerate([("gpu01", a1), ("gpu02", a2)]):
        pid = 10 + rank
        lines += [
            _nccl(host, pid, 0, f"Bootstrap : Using {iface}:{addr}<0>"),
            _nccl(
                host,
                pid,
                0,
                f"ncclCommInitRank comm 0x9{rank} rank {rank} nranks 2 cudaDev 0 "
                "busId 1a000 commId 0x77 - Init START",
            ),
            _nccl(host, pid, 0, f"Channel 00/0 : {rank}[0] -> {1 - rank}[0] [send] via {via}"),
        ]
    return "\n".join(lines)


def test_a_virtual_interface_across_nodes_is_the_wrong_interface(rules) -> None:
    diag = diagnose_text(rules, _two_nodes("docker0", "172.17.0.1", "172.17.0.2"))
    assert [c.id for c in diag.causes] == ["nccl-wrong-interface"]
    assert diag.causes[0].params["iface"] == "docker0"


def test_one_address_on_two_hosts_is_the_wrong_interface(rules) -> None:
    diag = diagnose_text(rules, _two_nodes("eth0", "10.0.0.5", "10.0.0.5"))
    assert diag.causes[0].id == "nccl-wrong-interface"
    assert diag.causes[0].params["address"] == "10.0.0.5"


def test_a_physical_interface_across_nodes_is_fine(rules) -> None:
    assert diagnose_text(rules, _two_nodes("ib0", "10.0.0.5", "10.0.0.6")).causes == []


def test_sockets_between_nodes_are_a_note_until_ib_was_expected(rules) -> None:
    log = _two_nodes("eth0", "10.0.0.5", "10.0.0.6", via="NET/Socket/0")
    quiet = diagnose_text(rules, log)
    assert quiet.causes == []
    # (the snippet also ends in NCCL's init lines: a note of its own)
    assert [n.id for n in quiet.notes] == ["nccl-inter-node-sockets", "log-ends-in-nccl-init"]
    # low bandwidth over TCP is what TCP gives: an Ethernet cluster is not slow by it
    measured = log + "\n#  Avg bus bandwidth    : 1.12 \n"
    tcp = diagnose_text(rules, measured)
    assert tcp.causes == []
    assert "bus bandwidth 1.12 GB/s" in {n.id: n for n in tcp.notes}["nccl-inter-node-sockets"].text
    # ... but the job was meant to use InfiniBand: now it is slow, and IB is missing
    expected = _nccl("gpu01", 10, 0, "NCCL_IB_HCA set by environment to mlx5_0") + "\n"
    slow = diagnose_text(rules, expected + measured)
    assert [c.id for c in slow.causes] == ["nccl-ib-missing"]
    assert "InfiniBand/RoCE was expected" in slow.causes[0].explanation


def test_one_hostname_with_two_addresses_is_a_duplicate_hostname(rules) -> None:
    lines = [
        "node1:18226:18240 [1] INFO NET : Using interface eth1:100.102.32.176<0>",
        "node1:22671:22795 [1] INFO NET : Using interface eth1:100.102.32.175<0>",
    ]
    diag = diagnose_text(rules, "\n".join(lines))
    assert [c.id for c in diag.causes] == ["duplicate-hostname"]


TOPO_SYS = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity
GPU0\t X \tPIX\tSYS\tSYS\t0-11\t0
GPU1\tPIX\t X \tSYS\tSYS\t0-11\t0
GPU2\tSYS\tSYS\t X \tPIX\t12-23\t1
GPU3\tSYS\tSYS\tPIX\t X \t12-23\t1
"""


SLOW_SPEEDUP = "1 GPU: 1000 img/s\n8 GPUs: 2000 img/s\n"  # 2x on 8 GPUs: far below linear


def test_a_topology_with_sys_links_is_a_cause_where_the_job_is_slow(rules) -> None:
    diag = diagnose_text(rules, TOPO_SYS + SLOW_SPEEDUP)
    assert [c.id for c in diag.causes] == ["gpu-topology-slow"]
    assert diag.causes[0].params["link"] == "SYS"
    assert diag.causes[0].evidence[0].line == 2


def test_a_topology_matrix_alone_is_the_machine_not_a_failure(rules) -> None:
    # kubernetes/kubernetes#53497 posts such a matrix as an example output: two sockets,
    # SYS between them; said as a note, no cause (nothing shows the job is slow)
    diag = diagnose_text(rules, TOPO_SYS)
    assert diag.causes == [] and diag.failure is None
    notes = [n for n in diag.notes if n.id == "gpu-topology-slow-links"]
    assert notes and "SYS" in notes[0].text and notes[0].evidence[0].line == 2


def test_dlperfs_nvlink_cube_mesh_with_sys_pairs_is_not_slow(rules) -> None:
    from kb.sysinfo.topology import DLPERF_TOPOLOGY

    diag = diagnose_text(rules, DLPERF_TOPOLOGY)
    assert diag.causes == []


def test_a_p2p_matrix_with_unsupported_pairs_supports_a_p2p_failure(rules) -> None:
    p2p = " \tGPU0\tGPU1\t\n GPU0\tX\tCNS\t\n GPU1\tCNS\tX\t\n"
    alone = diagnose_text(rules, p2p)
    assert alone.causes == []  # supporting evidence only
    with_env = diagnose_text(
        rules, p2p + "vm:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n"
    )
    assert [c.id for c in with_env.causes] == ["nccl-p2p-failure"]


def test_nvlink_topology_is_fine(rules) -> None:
    assert diagnose_paths(rules, [H200_FIXTURES / "topo.txt"]).causes == []


CHECK_BUILD = """\
Horovod v0.19.0:

Available Frameworks:
    [X] TensorFlow
    [X] PyTorch

Available Controllers:
    [X] MPI
    [X] Gloo

Available Tensor Operations:
    [ ] NCCL
    [ ] DDL
    [X] MPI
    [X] Gloo
"""


def test_horovod_check_build_without_nccl(rules) -> None:
    diag = diagnose_text(rules, CHECK_BUILD)
    assert [c.id for c in diag.causes] == ["horovod-built-without-nccl"]
    assert diag.causes[0].params["horovod_version"] == "0.19.0"
    assert diag.causes[0].evidence[0].text.strip() == "[ ] NCCL"


def test_horovod_check_build_with_nccl_is_fine(rules) -> None:
    assert diagnose_text(rules, CHECK_BUILD.replace("[ ] NCCL", "[X] NCCL")).causes == []


IBSTAT = """\
CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tPort 1:
\t\tState: {state}
\t\tPhysical state: {phys}
\t\tRate: 100
\t\tLink layer: InfiniBand
"""


def test_ibstat_without_an_active_port(rules) -> None:
    diag = diagnose_text(rules, IBSTAT.format(state="Down", phys="Disabled"))
    assert [c.id for c in diag.causes] == ["nccl-ib-missing"]
    assert diagnose_text(rules, IBSTAT.format(state="Active", phys="LinkUp")).causes == []


def test_data_time_close_to_step_time_is_an_input_bottleneck(rules) -> None:
    lines = [
        f"Epoch [1][{i * 10}/500]\tlr: 1.000e-02, eta: 0:10:00, time: 0.{500 + i}, "
        f"data_time: 0.{400 + i}, memory: 3000, loss: 1.2"
        for i in range(10)
    ]
    diag = diagnose_text(rules, "\n".join(lines))
    assert [c.id for c in diag.causes] == ["input-pipeline-bottleneck"]
    assert diag.causes[0].params["data_share"] == "80%"


@pytest.mark.parametrize(("data", "found"), [(0.35, True), (0.02, False)])
def test_data_time_printed_beside_the_update_time_is_part_of_the_step(
    rules, data: float, found: bool
) -> None:
    # LeRobot's form: the update (forward, backward, optimizer) and the data wait apart
    lines = [
        f"INFO 2025-07-11 08:20:{i:02d} ts/train.py:232 step:{i} smpl:{64 * i} ep:2 "
        f"loss:1.05 grdn:4.4 lr:1.8e-06 updt_s:0.300 data_s:{data:.3f}"
        for i in range(10, 20)
    ]
    diag = diagnose_text(rules, "\n".join(lines))
    assert [c.id for c in diag.causes] == (["input-pipeline-bottleneck"] if found else [])
    if found:
        assert diag.causes[0].params["data_share"] == "54%"


def test_small_data_time_is_fine(rules) -> None:
    lines = [
        f"Epoch: [0][{i}/100]\tTime  0.512 ( 0.530)\tData  0.012 ( 0.020)\tLoss 6.9"
        for i in range(10)
    ]
    assert diagnose_text(rules, "\n".join(lines)).causes == []


def test_throughput_table_far_below_linear_is_a_symptom_not_a_cause(rules) -> None:
    table = "| GPUs | Throughput (img/s) |\n|---|---|\n| 1 | 320 |\n| 8 | 1100 |\n"
    diag = diagnose_text(rules, table)
    assert diag.causes == []
    assert [n.id for n in diag.notes] == ["speedup-below-linear"]
    assert "43% of linear" in diag.notes[0].text


def test_slow_scaling_makes_socket_traffic_between_nodes_the_cause(rules, tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(
        _two_nodes("eth0", "10.0.0.5", "10.0.0.6", via="NET/Socket/0")
        + "\n1n8g 2400.5 img/s\n2n8g 2600.1 img/s\n"
    )
    diag = diagnose_paths(rules, [log])
    assert [c.id for c in diag.causes] == ["nccl-ib-missing"]


def test_command_output_blocks_split_across_reads_are_read_whole(
    rules, tmp_path: Path, monkeypatch
) -> None:
    from kb.diagnosis import reader

    monkeypatch.setattr(reader, "CHUNK", 64)
    log = tmp_path / "pasted.txt"
    log.write_text(
        CHECK_BUILD + "\n" + IBSTAT.format(state="Down", phys="Disabled") + TOPO_SYS + SLOW_SPEEDUP
    )
    diag = diagnose_paths(rules, [log])
    assert {c.id for c in diag.causes} == {
        "horovod-built-without-nccl",
        "nccl-ib-missing",
        "gpu-topology-slow",
    }
