"""Several nodes, each replaying different real outputs, surveyed over real SSH and reported.

The nodes are OpenSSH servers on 127.0.0.1 (tests/ssh/sshd_nodes.py); each one's
PATH starts with scripts that print recorded outputs, with planted differences:
NCCL 2.7.3 on three nodes and 2.6.4 on one, two nodes calling themselves gpu02,
MLNX_OFED 5.4 against 4.0, and a node whose only NIC is a container's veth.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import FIXTURES, FakeNode, NetnsRunner, ssh_runner

from kb.cli.main import main
from kb.cluster import survey
from kb.runners.local import LocalRunner

IP = FIXTURES / "ip"
OFED54 = (FIXTURES / "software" / "ofed-5.4.txt").read_text()
OFED40 = (FIXTURES / "software" / "ofed-4.0.txt").read_text()


def survey_nodes(cluster: object, specs: list[FakeNode], out: Path) -> list[Path]:
    """Install each node's recordings, survey it over SSH, write survey-<n>.json as srun would."""
    files = []
    for i, (node, spec) in enumerate(zip(cluster.nodes, specs, strict=True)):  # type: ignore[attr-defined]
        spec.install(node.root)
        runner = ssh_runner(cluster, node)
        try:
            doc = survey.collect(runner, timeout=120)
        finally:
            runner.close()
        assert "error" not in doc, doc.get("error")
        path = out / f"survey-{i + 1}.json"
        path.write_text(json.dumps(doc, indent=2))
        files.append(path)
    return files


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["report", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.ssh
def test_the_report_finds_every_planted_difference_between_four_ssh_nodes(
    sshd_cluster: Callable[[int], object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = sshd_cluster(4)
    specs = [
        FakeNode(
            "gpu01", nccl="2.7.3", ofed=OFED54, ip=(IP / "two-nodes-ipoib-node1.txt").read_text()
        ),
        FakeNode(
            "gpu02", nccl="2.7.3", ofed=OFED54, ip=(IP / "two-nodes-ipoib-node2.txt").read_text()
        ),
        FakeNode("gpu02", nccl="2.7.3", ofed=OFED54, ip=(IP / "docker-host-ens33.txt").read_text()),
        FakeNode(
            "gpu04", nccl="2.6.4", ofed=OFED40, ip=(IP / "container-bridge-mode.txt").read_text()
        ),
    ]
    files = survey_nodes(cluster, specs, tmp_path)
    labels = [n.spec for n in cluster.nodes]  # type: ignore[attr-defined]
    code, rep = report(capsys, *map(str, files))
    assert code == 1
    assert rep["nodes"] == labels
    diffs = {d["fact"]: d["values"] for d in rep["differences"]}
    assert diffs["nccl_system_version"] == dict(
        zip(labels, ["2.7.3", "2.7.3", "2.7.3", "2.6.4"], strict=True)
    )
    assert diffs["ofed_version"][labels[3]] == "4.0-2.0.0.1"
    assert diffs["hostname"][labels[1]] == diffs["hostname"][labels[2]] == "gpu02"
    causes = {c["id"]: c for c in rep["causes"]}
    assert causes["nccl-missing-or-mismatch"]["params"]["nodes"] == labels[3]
    assert set(causes["duplicate-hostname"]["params"]["nodes"].split(", ")) == {
        labels[1],
        labels[2],
    }
    assert causes["nccl-ib-missing"]["params"]["fact"] == "ofed_version"
    assert causes["nccl-wrong-interface"]["params"]["nodes"] == labels[3]
    ev = causes["nccl-missing-or-mismatch"]["evidence"]
    assert {e["file"] for e in ev} == set(map(str, files))
    line = Path(ev[3]["file"]).read_text().splitlines()[ev[3]["line"] - 1]
    assert '"nccl_system_version"' in line
    advice = rep["interface_advice"]
    assert advice["ok"] is False and advice["problems"][0].startswith(
        f"{labels[3]}: no physical NIC"
    )
    # the same data as a table: nodes as columns, facts as rows
    code = main(["report", "--differences", *map(str, files)])
    text = capsys.readouterr().out
    assert code == 1 and "! nccl_system_version" in text and "2.6.4" in text


@pytest.mark.ssh
def test_two_ssh_nodes_that_agree_give_a_clean_report_and_the_ib_prefix(
    sshd_cluster: Callable[[int], object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = sshd_cluster(2)
    specs = [
        FakeNode(
            "gpu01", nccl="2.7.3", ofed=OFED54, ip=(IP / "two-nodes-ipoib-node1.txt").read_text()
        ),
        FakeNode(
            "gpu02", nccl="2.7.3", ofed=OFED54, ip=(IP / "two-nodes-ipoib-node2.txt").read_text()
        ),
    ]
    files = survey_nodes(cluster, specs, tmp_path)
    code, rep = report(capsys, *map(str, files))
    assert rep["differences"] == [] and rep["causes"] == []
    assert code == 0
    advice = rep["interface_advice"]
    assert advice["ok"] and advice["nccl_socket_ifname"] == "ib"
    assert {v["gloo_socket_ifname"] for v in advice["per_node"].values()} == {"ib0"}


@pytest.mark.slow
def test_a_real_container_like_namespace_next_to_this_host_gets_no_interface(
    netns: Callable[[list[str]], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real interfaces on both sides: this machine's NIC, and a namespace with only a veth."""
    ns = netns(
        [
            "ip link add eth0 type veth peer name veth9f1e2d",
            "ip addr add 172.17.0.3/16 dev eth0",
            "ip link set eth0 up",
            "ip link set veth9f1e2d up",
        ]
    )
    host = survey.collect(LocalRunner("host01"), timeout=120)
    ctr = survey.collect(NetnsRunner(ns, "ctr01"), timeout=120)
    (tmp_path / "all.jsonl").write_text(json.dumps(host) + "\n" + json.dumps(ctr) + "\n")
    code, rep = report(capsys, str(tmp_path / "all.jsonl"))
    assert code == 1 and rep["nodes"] == ["host01", "ctr01"]
    causes = {c["id"]: c for c in rep["causes"]}
    assert causes["nccl-wrong-interface"]["params"]["nodes"] == "ctr01"
    # one kernel, two network namespaces, one hostname: NCCL would take them for one node
    dup = causes["duplicate-hostname"]["params"]
    assert dup["nodes"] == "host01, ctr01" and "containers of one host" in dup["why"]
    # the very same node surveyed twice is only a note
    (tmp_path / "twice.jsonl").write_text(json.dumps(host) + "\n" + json.dumps(host) + "\n")
    code, rep = report(capsys, str(tmp_path / "twice.jsonl"))
    assert "duplicate-hostname" not in {c["id"] for c in rep["causes"]}
    assert [n["id"] for n in rep["notes"]][:1] == ["same-node-twice"]
