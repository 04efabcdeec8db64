"""Interfaces flagged physical or virtual, and the NCCL/Gloo/Open MPI interface advice."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from cluster_helpers import FIXTURES, NetnsRunner

from kb.cluster import survey
from kb.cluster.survey.net import interfaces_fact, parse_ip_addr, parse_net_section
from kb.sysinfo import ifadvice

IP = FIXTURES / "ip"


def ifaces(name: str) -> list[dict[str, Any]]:
    return interfaces_fact(parse_ip_addr((IP / name).read_text()), {})


def by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {i["name"]: i for i in items}


def test_docker_host_capture_flags_docker0_and_veth_and_keeps_eth0() -> None:
    got = by_name(ifaces("docker-host-eth0.txt"))
    assert got["eth0"]["virtual"] is False and got["eth0"]["routable"] == ["10.10.11.34/23"]
    assert got["docker0"]["virtual"] and got["docker0"]["kind"] == "docker"
    assert got["veth904ca0e"]["virtual"] and got["veth904ca0e"]["master"] == "docker0"
    assert got["lo"]["kind"] == "loopback"


def test_a_container_eth0_that_is_a_veth_end_is_virtual_whatever_its_name() -> None:
    got = by_name(ifaces("container-bridge-mode.txt"))
    assert got["eth0"]["kind"] == "veth" and got["eth0"]["virtual"]
    assert "peer if26" in got["eth0"]["why"]


def test_flannel_and_ipoib_captures() -> None:
    assert {i["kind"] for i in ifaces("flannel-host.txt")} == {"flannel", "docker", "veth"}
    node1 = by_name(ifaces("two-nodes-ipoib-node1.txt"))
    assert node1["ib0"]["kind"] == "ipoib" and node1["ib0"]["routable"] == ["172.162.42.56/24"]
    assert node1["ens6"]["routable"] == ["172.17.24.56/24"]  # fe80:: is not routable


@pytest.mark.slow
def test_this_machines_own_ip_and_sysfs_agree(tmp_path) -> None:
    """Real: `ip addr show` and /sys/class/net of the development machine, read by the survey."""
    doc = survey.collect(__import__("kb.runners.local", fromlist=["LocalRunner"]).LocalRunner())
    got = by_name(doc["facts"]["interfaces"])
    listed = sorted(p.name for p in __import__("pathlib").Path("/sys/class/net").iterdir())
    assert sorted(got) == listed
    for name, info in got.items():
        real = __import__("os").path.realpath(f"/sys/class/net/{name}")
        assert info["virtual"] == ("/devices/virtual/" in real or name == "lo"), name


def test_veth_pairs_in_a_network_namespace_are_virtual_even_when_named_eth0(
    netns: Callable[[list[str]], str],
) -> None:
    """Real interfaces: a namespace that looks like a bridge-mode container (eth0 is a veth)."""
    ns = netns(
        [
            "ip link add eth0 type veth peer name vethc0ffee",
            "ip addr add 172.17.0.2/16 dev eth0",
            "ip link set eth0 up",
            "ip link set vethc0ffee up",
        ]
    )
    doc = survey.collect(NetnsRunner(ns, "ctr01"), timeout=60)
    got = by_name(doc["facts"]["interfaces"])
    assert set(got) == {"lo", "eth0", "vethc0ffee"}
    assert got["eth0"]["virtual"] and got["eth0"]["routable"] == ["172.17.0.2/16"]
    assert got["eth0"]["kind"] in ("veth", "virtual")
    advice = ifadvice.advise({"ctr01": doc["facts"]["interfaces"]})
    assert not advice.ok and advice.problems[0].startswith("ctr01: no physical NIC")


def test_a_namespace_without_ip_tools_falls_back_to_proc_and_sysfs(
    netns: Callable[[list[str]], str], tmp_path
) -> None:
    """Real interfaces read without `ip` (as on the H200 host): /proc/net and /sys/class/net."""
    ns = netns(
        [
            "ip link add eth5 type veth peer name veth5",
            "ip addr add 10.9.0.5/24 dev eth5",
            "ip link set eth5 up",
            "ip link set veth5 up",
        ]
    )
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in (
        "sh",
        "cat",
        "head",
        "readlink",
        "sed",
        "printf",
        "grep",
        "ls",
        "df",
        "env",
        "true",
        "hostname",
        "uname",
        "awk",
        "timeout",
    ):
        path = subprocess.run(
            ["sh", "-c", f"command -v {tool}"], capture_output=True, text=True
        ).stdout.strip()
        if path.startswith("/"):
            (bindir / tool).symlink_to(path)
    doc = survey.collect(NetnsRunner(ns, "noip01", env={"PATH": str(bindir)}), timeout=60)
    got = by_name(doc["facts"]["interfaces"])
    assert "10.9.0.5/24" in got["eth5"]["addresses"] and got["eth5"]["virtual"]


def test_advice_picks_the_ib_prefix_on_the_subnet_both_nodes_share() -> None:
    adv = ifadvice.advise(
        {"node1": ifaces("two-nodes-ipoib-node1.txt"), "node2": ifaces("two-nodes-ipoib-node2.txt")}
    )
    assert adv.ok and adv.nccl_socket_ifname == "ib"
    assert adv.shared_network == "172.162.42.0/24"
    assert {n: v["gloo_socket_ifname"] for n, v in adv.per_node.items()} == {
        "node1": "ib0",
        "node2": "ib0",
    }
    assert adv.commands()[:2] == ["export NCCL_SOCKET_IFNAME=ib", "export GLOO_SOCKET_IFNAME=ib0"]


def test_advice_lists_one_prefix_per_naming_when_nics_are_named_differently() -> None:
    # as NVIDIA/nccl#286: eno1 on one node, eth0 on the other -> a prefix list
    adv = ifadvice.advise(
        {"a": ifaces("docker-host-eth0.txt"), "b": ifaces("docker-host-ens33.txt")}
    )
    assert adv.ok and adv.nccl_socket_ifname is not None
    assert sorted(adv.nccl_socket_ifname.split(",")) == ["ens", "eth"]
    assert ifadvice.nccl_matches(
        adv.nccl_socket_ifname, ["eth0", "docker0", "veth904ca0e", "lo"]
    ) == ["eth0"]
    assert {v["btl_tcp_if_include"] for v in adv.per_node.values()} == {"eth0", "ens33"}
    assert any("differ between nodes" in e for e in adv.explanation)


def test_advice_refuses_when_a_node_has_only_a_container_veth() -> None:
    adv = ifadvice.advise(
        {"a": ifaces("docker-host-eth0.txt"), "c": ifaces("container-bridge-mode.txt")}
    )
    assert not adv.ok and adv.nccl_socket_ifname is None and adv.commands() == []
    assert adv.problems == [p for p in adv.problems if p.startswith("c: ")]
    assert "--net=host" in adv.problems[0]


def test_advice_uses_exact_names_when_a_prefix_would_also_catch_a_veth() -> None:
    """Synthetic: node b's eth1 is a veth, so the prefix `eth` is unsafe; `=eth0` is not."""
    good = {
        "name": "eth0",
        "virtual": False,
        "up": True,
        "addresses": ["10.0.0.2/24"],
        "routable": ["10.0.0.2/24"],
        "kind": "physical",
    }
    veth = {
        "name": "eth1",
        "virtual": True,
        "up": True,
        "addresses": ["172.17.0.2/16"],
        "routable": ["172.17.0.2/16"],
        "kind": "veth",
    }
    adv = ifadvice.advise(
        {"a": [dict(good, addresses=["10.0.0.1/24"], routable=["10.0.0.1/24"])], "b": [good, veth]}
    )
    assert adv.ok and adv.nccl_socket_ifname == "eth0"
    assert ifadvice.nccl_matches("eth0", ["eth0", "eth1"]) == ["eth0"]
    # the prefix `eth1` would also select the veth eth10: only the exact form is safe
    adv2 = ifadvice.advise({"b": [dict(good, name="eth1"), dict(veth, name="eth10")]})
    assert adv2.nccl_socket_ifname == "=eth1"
    assert ifadvice.nccl_matches("=eth1", ["eth1", "eth10"]) == ["eth1"]


def test_nccl_matching_follows_prefix_exclude_and_exact_rules() -> None:
    names = ["eth0", "eth1", "docker0", "lo", "ib0", "bond0.2093"]
    assert ifadvice.nccl_matches("eth", names) == ["eth0", "eth1"]
    assert ifadvice.nccl_matches("^docker,lo", names) == ["eth0", "eth1", "ib0", "bond0.2093"]
    assert ifadvice.nccl_matches("=eth0,ib0", names) == ["eth0", "ib0"]
    assert ifadvice.nccl_matches("^=eth0", names) == ["eth1", "docker0", "lo", "ib0", "bond0.2093"]


def test_a_setting_that_matches_nothing_or_a_virtual_nic_is_named() -> None:
    host = ifaces("docker-host-eth0.txt")
    assert (
        ifadvice.check_setting("ib9", host)
        == "NCCL_SOCKET_IFNAME=ib9 matches no interface with an address on this node"
    )
    assert "docker0" in (ifadvice.check_setting("^lo", host) or "")
    assert ifadvice.check_setting("eth", host) is None


def test_sysfs_part_of_the_net_section_marks_names_ip_cannot_judge() -> None:
    text = (
        "@@part ip\n" + (IP / "docker-host-eth0.txt").read_text() + "@@part sys\n"
        "eth0|/sys/devices/virtual/net/eth0|up|1||00:50:56:b0:ed:3a\n"
    )
    got = by_name(parse_net_section(text))
    assert got["eth0"]["virtual"] and "sysfs" in got["eth0"]["why"]
