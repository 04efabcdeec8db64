"""Facts that no single NCCL (or Gloo) line states, read across lines.

- an interface list that continues over the following lines, one `[N]iface:addr<0>`
  per line, or that holds bridges and veths beside the real NIC -> nccl-wrong-interface;
- two machines NCCL takes for one: every rank called `localhost` in a job the launcher
  spread over two hosts; two ranks on one GPU in what NCCL joined by P2P/IPC
  -> duplicate-hostname;
- Gloo peers that advertise the loopback address in a mesh of many ranks
  -> nccl-wrong-interface.
"""

from __future__ import annotations

from kb.diagnosis.engine import diagnose_paths, diagnose_text

from .conftest import HELDOUT


def _ids(diag) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.id for c in diag.causes]


def test_an_interface_list_continued_on_the_next_lines_is_read_whole(rules) -> None:
    diag = diagnose_paths(rules, [HELDOUT / "wrong-iface-nccl-697-docker-bridges-veth.log"])
    assert _ids(diag) == ["nccl-wrong-interface"]
    cause = diag.causes[0]
    assert cause.params["iface"] == "br-05ab815fa14e"
    assert "NET/Socket list holds 15 virtual interface(s)" in cause.explanation
    assert {e.line for e in cause.evidence} >= {2, 3}  # [0]bond0 and [1]br-... lines


def test_a_list_of_virtual_interfaces_on_one_line_is_the_same_finding(rules) -> None:
    line = (
        "gpu1:7:7 [0] NCCL INFO NET/Socket : Using [0]enp1s0:10.0.0.1<0> "
        "[1]virbr0:192.168.122.1<0> [2]docker0:172.17.0.1<0>"
    )
    assert _ids(diagnose_text(rules, line)) == ["nccl-wrong-interface"]
    one_node = "torchrun --nnodes=1 --nproc_per_node=8 train.py\n" + line
    assert diagnose_text(rules, one_node).causes == []  # harmless on one node
    real = "gpu1:7:7 [0] NCCL INFO NET/Socket : Using [0]enp1s0:10.0.0.1<0> [1]ib0:10.1.0.1<0>"
    assert diagnose_text(rules, real).causes == []


def test_ranks_on_one_gpu_joined_by_p2p_ipc_are_two_machines_with_one_name(rules) -> None:
    diag = diagnose_paths(
        rules, [HELDOUT / "duphost-nccl-187-hostname-prefix-p2p-ipc-across-hosts.log"]
    )
    assert _ids(diag) == ["duplicate-hostname"]
    cause = diag.causes[0]
    assert cause.params["host"] == "learngpu060"
    assert any("6[6] -> 10[2] via P2P/IPC" in e.text for e in cause.evidence)


def test_ranks_that_each_see_one_gpu_as_device_0_are_fine(rules) -> None:
    lines = [
        f"gpu01:{10 + r}:{20 + r} [0] NCCL INFO Ring 00 : {r}[0] -> {(r + 1) % 4}[0] via P2P/IPC"
        for r in range(4)
    ]
    assert diagnose_text(rules, "\n".join(lines)).causes == []


def test_two_named_nodes_reusing_gpu_numbers_are_fine(rules) -> None:
    diag = diagnose_paths(
        rules, [HELDOUT / "healthy-deepspeed-4715-two-node-ibext-p2p-channels.log"]
    )
    assert "duplicate-hostname" not in _ids(diag)


def test_localhost_on_every_rank_of_a_two_host_job_is_a_duplicate_hostname(rules) -> None:
    diag = diagnose_paths(rules, [HELDOUT / "duphost-horovod-610-two-hosts-both-localhost.log"])
    assert _ids(diag)[0] == "duplicate-hostname"
    assert diag.causes[0].params["host"] == "localhost"
    assert "the launcher starts ranks on 2 hosts" in diag.causes[0].explanation


def test_localhost_in_a_one_host_job_is_fine(rules) -> None:
    log = (
        "mpirun -np 2 -H 10.0.0.1:2 python train.py\n"
        "localhost:1:1 [0] NCCL INFO NET : Using interface eth0:10.0.0.1<0>\n"
        "localhost:2:2 [1] NCCL INFO NET : Using interface eth0:10.0.0.1<0>\n"
    )
    assert diagnose_text(rules, log).causes == []


def test_gloo_peers_at_a_loopback_address_are_the_wrong_interface(rules) -> None:
    diag = diagnose_paths(rules, [HELDOUT / "wrong-iface-aws-do-eks-69-gloo-loopback-fullmesh.log"])
    assert _ids(diag) == ["nccl-wrong-interface"]
    assert "a mesh of 16 ranks" in diag.causes[0].explanation


def test_gloo_peers_at_real_addresses_or_on_one_node_are_not(rules) -> None:
    real = "Gloo connectFullMesh failed: Connection refused, remote=[10.0.0.2]:40011 (size=16)"
    assert diagnose_text(rules, real).causes == []
    loop = "Gloo connectFullMesh failed: Connection refused, remote=[127.0.0.1]:40011 (size=16)"
    assert diagnose_text(rules, "torchrun --nnodes=1 train.py\n" + loop).causes == []


def test_both_ends_of_a_ring_printed_by_each_rank_on_two_named_nodes_are_fine(rules) -> None:
    # each rank prints its send (r -> next) and its receive (prev -> r) without a marker,
    # and ranks on both nodes use GPUs 0-3: the line's prefix device tells who printed it
    lines = []
    for r in range(8):
        host, dev = f"gpu0{1 + r // 4}", r % 4
        nxt, prv = (r + 1) % 8, (r - 1) % 8
        for a, b in ((r, nxt), (prv, r)):
            via = "P2P/IPC" if a // 4 == b // 4 else "NET/IB/0"
            lines.append(
                f"{host}:{100 + r}:{100 + r} [{dev}] NCCL INFO Channel 00/0 : "
                f"{a}[{a % 4}] -> {b}[{b % 4}] via {via}"
            )
    assert "duplicate-hostname" not in _ids(diagnose_text(rules, "\n".join(lines)))
