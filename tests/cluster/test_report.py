"""The consistency report from files: formats, line numbers in evidence, rules, renderers.

The base document is the real survey of the 2xH200 host; each test plants one change
in a copy (said in the test) to play a second node.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import FIXTURES, shipped_book
from markdown_it import MarkdownIt

from kb.cli.main import main
from kb.cluster import survey
from kb.cluster.report import (
    build_report,
    load_file,
    load_text,
    table,
    to_markdown,
    to_text,
)
from kb.util.errors import UserError

H200 = survey.parse_output((FIXTURES / "survey" / "h200-survey-raw.txt").read_text())


def node(host: str, **facts: Any) -> dict[str, Any]:
    doc = copy.deepcopy(H200)
    doc["host"] = host
    doc["facts"]["hostname"] = host
    doc["facts"]["boot_id"] = f"boot-{host}"
    for i in doc["facts"]["interfaces"]:
        if i["kind"] != "loopback":
            i["mac"] = f"{i['mac'][:-2]}{abs(hash(host)) % 100:02d}"
    doc["facts"].update(facts)
    return doc


def write(tmp_path: Path, name: str, *docs: dict[str, Any], jsonl: bool = False) -> str:
    path = tmp_path / name
    if jsonl:
        path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    else:
        path.write_text("\n".join(json.dumps(d, indent=2) for d in docs))
    return str(path)


def causes(report: Any) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in report.causes}


def test_one_file_may_hold_one_survey_a_list_concatenated_documents_or_json_lines(
    tmp_path: Path,
) -> None:
    a, b = node("gpu01"), node("gpu02")
    assert [n.host for n in load_file(write(tmp_path, "one.json", a))] == ["gpu01"]
    (tmp_path / "list.json").write_text(json.dumps([a, b]))
    assert [n.host for n in load_file(str(tmp_path / "list.json"))] == ["gpu01", "gpu02"]
    assert [n.host for n in load_file(write(tmp_path, "cat.json", a, b))] == ["gpu01", "gpu02"]
    assert [n.host for n in load_file(write(tmp_path, "all.jsonl", a, b, jsonl=True))] == [
        "gpu01",
        "gpu02",
    ]


def test_each_fact_remembers_its_line_in_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "cat.json", node("gpu01"), node("gpu02"))
    second = load_file(path)[1]
    lines = Path(path).read_text().splitlines()
    assert '"nccl_system_version"' in lines[second.line_of("nccl_system_version") - 1]
    assert '"NCCL_NVLS_ENABLE"' in lines[second.line_of("NCCL_NVLS_ENABLE") - 1]
    assert second.line_of("nccl_system_version") > load_file(path)[0].line_of("nccl_system_version")


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty file"),
        ("{", "not JSON"),
        ('{"x": 1}', "neither `survey --json`"),
        ("[1, 2]", "neither `survey --json`"),
    ],
)
def test_unreadable_inputs_are_one_line_errors_with_the_file(text: str, message: str) -> None:
    with pytest.raises(UserError) as err:
        load_text(text, "bad.json")
    assert message in str(err.value) and str(err.value).startswith("bad.json")


def test_nccl_2_7_3_on_three_nodes_and_2_6_4_on_one_names_the_odd_one() -> None:
    """Planted: the system NCCL of gpu04."""
    docs = [node(f"gpu0{i}", nccl_system_version="2.7.3") for i in (1, 2, 3)]
    docs.append(node("gpu04", nccl_system_version="2.6.4"))
    rep = build_report(
        load_text("\n".join(json.dumps(d) for d in docs), "all.jsonl"), shipped_book()
    )
    assert rep.differences == [
        {
            "fact": "nccl_system_version",
            "values": {"gpu01": "2.7.3", "gpu02": "2.7.3", "gpu03": "2.7.3", "gpu04": "2.6.4"},
        }
    ]
    c = causes(rep)["nccl-missing-or-mismatch"]
    assert (
        c["params"]["nodes"] == "gpu04"
        and c["params"]["values"] == "2.7.3 on gpu01, gpu02, gpu03; 2.6.4 on gpu04"
    )
    assert c["confidence"] >= 0.9 and len(c["evidence"]) == 4


def test_ofed_and_ib_differences_point_at_the_node_without_rdma() -> None:
    """Planted: IB ports (from the public ibstatus capture's shape) on one node, OFED versions."""
    port = {
        "device": "mlx5_0",
        "port": 1,
        "state": "ACTIVE",
        "phys_state": "LinkUp",
        "rate": "100 Gb/sec (4X EDR)",
        "link_layer": "InfiniBand",
    }
    a = node(
        "gpu01",
        ofed_version="5.4-3.1.0.0",
        ib_devices=[port],
        ib_verbs_devices=["rdma_cm", "uverbs0"],
    )
    b = node("gpu02", ofed_version=None, ib_devices=[port], ib_verbs_devices=["rdma_cm"])
    c = node("gpu03", ofed_version="5.4-3.1.0.0", ib_devices=[], ib_verbs_devices=["rdma_cm"])
    rep = build_report(load_text(json.dumps([a, b, c]), "x.json"), shipped_book())
    got = causes(rep)["nccl-ib-missing"]
    texts = " | ".join(e["text"] for e in got["evidence"])
    assert "gpu03: ib_devices = none" in texts  # no active port while the others have one
    assert "gpu02: the HCA is active but /dev/infiniband has no uverbs device" in texts
    assert "gpu02: ofed_version = n/a" in texts
    assert got["confidence"] > 0.9  # three findings for the same cause


def test_single_node_limits_shm_memlock_and_horovod_build() -> None:
    """Planted: docker's default 64 MB /dev/shm, ulimit -l 64 KiB on an IB node, Horovod without NCCL."""
    port = {
        "device": "mlx5_0",
        "port": 1,
        "state": "ACTIVE",
        "rate": "100",
        "link_layer": "InfiniBand",
    }
    doc = node(
        "gpu01",
        shm_size_bytes=64 * 2**20,
        memlock_limit=64,
        ib_devices=[port],
        ib_verbs_devices=["uverbs0"],
        horovod_nccl=False,
        horovod_build={"operations": ["MPI", "Gloo"]},
    )
    rep = build_report(load_text(json.dumps(doc), "one.json"), shipped_book())
    got = causes(rep)
    assert {"nccl-shm-too-small", "memlock-limit", "horovod-built-without-nccl"} <= set(got)
    assert got["nccl-shm-too-small"]["evidence"][0]["text"] == "gpu01: /dev/shm is 64 MiB"
    assert rep.problem


def test_a_cuda_runtime_newer_than_the_driver_is_named() -> None:
    """Planted: PyTorch built for CUDA 13.0 on a driver that supports 12.2."""
    rep = build_report(
        load_text(json.dumps(node("gpu01", cuda_version="12.2")), "one.json"), shipped_book()
    )
    assert "cuda-driver-too-old" in causes(rep)


def test_topology_that_lost_nvlink_on_one_node_is_a_slow_topology() -> None:
    """Planted: gpu02's GPUs meet over SYS instead of NV18 (an NVLink bridge missing)."""
    topo = copy.deepcopy(H200["facts"]["gpu_topology"])
    topo["matrix"] = {"GPU0": {"GPU1": "SYS"}, "GPU1": {"GPU0": "SYS"}}
    rep = build_report(
        load_text(json.dumps([node("gpu01"), node("gpu02", gpu_topology=topo)]), "x"),
        shipped_book(),
    )
    assert [d["fact"] for d in rep.differences] == ["gpu_topology"]
    got = causes(rep)["gpu-topology-slow"]
    assert all(e["text"].startswith("gpu02:") for e in got["evidence"])
    assert any("NV18 on gpu01, SYS here" in e["text"] for e in got["evidence"])


def test_environment_rows_and_a_socket_ifname_that_selects_nothing() -> None:
    """Planted: NCCL_SOCKET_IFNAME=ib9 on gpu02 (no such NIC there), NCCL_DEBUG only on gpu01."""
    a = node("gpu01", env={**H200["facts"]["env"], "NCCL_DEBUG": "INFO"})
    b = node("gpu02", env={**H200["facts"]["env"], "NCCL_SOCKET_IFNAME": "ib9"})
    rep = build_report(load_text(json.dumps([a, b]), "x"), shipped_book())
    facts = {r.fact for r in rep.rows}
    assert {"env.NCCL_DEBUG", "env.NCCL_SOCKET_IFNAME", "env.NCCL_NVLS_ENABLE"} <= facts
    got = causes(rep)["nccl-wrong-interface"]
    assert "matches no interface" in got["evidence"][0]["text"]
    assert [n["id"] for n in rep.notes if n["id"] == "env-differs"]  # NCCL_DEBUG: a note, no cause


def test_check_json_hosts_become_columns_and_failing_checks_causes(tmp_path: Path) -> None:
    """Synthetic `check --json` in the GUIDE's shape, one host unreachable."""
    doc = {
        "hosts": [
            {
                "host": "gpu01",
                "address": "10.0.0.11",
                "port": 22,
                "ok": True,
                "error": None,
                "checks": [
                    {
                        "id": "nccl-version",
                        "cause": "nccl-missing-or-mismatch",
                        "command": "...",
                        "status": "pass",
                        "output": "",
                        "seconds": 0.4,
                        "finding": "NCCL 2.7.3",
                    }
                ],
            },
            {
                "host": "gpu02",
                "address": "10.0.0.12",
                "port": 22,
                "ok": True,
                "error": None,
                "checks": [
                    {
                        "id": "nccl-version",
                        "cause": "nccl-missing-or-mismatch",
                        "command": "...",
                        "status": "fail",
                        "output": "",
                        "seconds": 0.4,
                        "finding": "NCCL 2.6.4",
                    }
                ],
            },
            {
                "host": "gpu03",
                "address": None,
                "port": 22,
                "ok": False,
                "error": "connection refused",
                "checks": [],
            },
        ]
    }
    path = tmp_path / "check.json"
    path.write_text(json.dumps(doc, indent=2))
    rep = build_report(load_file(str(path)), shipped_book())
    assert rep.nodes == ["gpu01", "gpu02", "gpu03"]
    assert rep.differences == [
        {
            "fact": "check:nccl-version",
            "values": {"gpu01": "NCCL 2.7.3", "gpu02": "NCCL 2.6.4", "gpu03": None},
        }
    ]
    assert rep.unreachable == [{"node": "gpu03", "file": str(path), "error": "connection refused"}]
    ev = causes(rep)["nccl-missing-or-mismatch"]["evidence"]
    assert any(e["text"].startswith("gpu02: check nccl-version failed") for e in ev)
    assert '"nccl-version"' in path.read_text().splitlines()[ev[0]["line"] - 1]


def test_check_json_with_survey_facts_is_read_as_surveys(tmp_path: Path) -> None:
    host = {
        "host": "root@10.0.0.11:22",
        "ok": True,
        "error": None,
        "checks": [],
        "facts": H200["facts"],
        "unavailable": H200["unavailable"],
    }
    nodes = load_text(json.dumps({"hosts": [host]}, indent=2), "check.json")
    assert nodes[0].facts["nccl_version"] == "2.28.9"


def test_two_files_that_both_say_vm_stay_two_columns(tmp_path: Path) -> None:
    a = write(tmp_path, "a.json", H200)
    b = write(tmp_path, "b.json", H200)
    rep = build_report(load_file(a) + load_file(b), shipped_book())
    assert rep.nodes == ["vm", "vm [b.json]"]


def test_table_text_and_markdown_renderers(tmp_path: Path) -> None:
    docs = [node("gpu01", nccl_system_version="2.7.3"), node("gpu02", nccl_system_version="2.6.4")]
    rep = build_report(load_text(json.dumps(docs), "x.json"), shipped_book())
    columns, rows = table(rep)
    assert columns == ["fact", "gpu01", "gpu02"]
    diff = next(r for r in rows if r["fact"] == "nccl_system_version")
    assert diff == {"fact": "nccl_system_version", "cells": ["2.7.3", "2.6.4"], "differs": True}
    text = to_text(rep)
    assert "! nccl_system_version" in text and "nccl-missing-or-mismatch" in text
    md = to_markdown(rep)
    tokens = MarkdownIt().enable("table").parse(md)
    assert next(t.content for t in tokens if t.type == "inline") == "Cluster consistency"
    assert any(t.type == "table_open" for t in tokens)
    assert "**nccl_system_version** ⚠" in md and "`nccl-missing-or-mismatch`" in md


@pytest.mark.slow
def test_cli_exit_status_and_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    same = write(tmp_path, "same.jsonl", node("gpu01"), node("gpu02"), jsonl=True)
    assert main(["report", "--json", same]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"nodes", "differences", "causes"} and out["differences"] == []
    diff = write(
        tmp_path, "diff.jsonl", node("gpu01"), node("gpu02", ofed_version="4.0-2.0.0.1"), jsonl=True
    )
    assert main(["report", "--json", diff]) == 1
    capsys.readouterr()
    (tmp_path / "broken.json").write_text("{")
    assert main(["report", "--json", same, str(tmp_path / "broken.json")]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["errors"][0]["file"] == str(tmp_path / "broken.json")
    assert "broken.json:1: not JSON" in captured.err
    assert main(["report", str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
