"""`dlperf-help check` end to end against real sshd nodes: JSON, hostfiles, Ctrl-C, errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from ssh_helpers import REPO, RULES, cli
from sshd_nodes import Cluster

pytestmark = pytest.mark.ssh
MakeCluster = Callable[[int], Cluster]


def test_node_survey_on_one_host_with_the_shipped_rules_returns_results(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kb.cli.main",
            "check",
            "--host",
            node.spec,
            "-i",
            str(cluster.client_key),
            "--known-hosts",
            str(cluster.known_hosts),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode in (0, 1), proc.stderr
    [host] = json.loads(proc.stdout)["hosts"]
    assert (host["host"], host["address"], host["port"], host["ok"], host["error"]) == (
        node.spec,
        "127.0.0.1",
        node.port,
        True,
        None,
    )
    assert host["checks"] and all(
        c["status"] in ("pass", "fail", "unavailable", "error") for c in host["checks"]
    )
    assert (
        host["facts"]["hostname"] == node.name
    )  # kb.cluster.survey ran through the same connection


def test_hostfile_with_ssh_config_aliases_gives_one_entry_per_host_and_the_matrix(
    make_cluster: MakeCluster, tmp_path: Path
) -> None:
    cluster = make_cluster(3)
    proc = cli(
        "--hostfile",
        str(cluster.hostfile(tmp_path / "hosts")),
        "--ssh-config",
        str(cluster.ssh_config(tmp_path / "ssh_config")),
        "--known-hosts",
        str(cluster.known_hosts),
        "--json",
    )
    doc = json.loads(proc.stdout)
    names = [n.name for n in cluster.nodes]
    assert [h["host"] for h in doc["hosts"]] == names
    assert [h["port"] for h in doc["hosts"]] == [n.port for n in cluster.nodes]
    assert doc["matrix"] == {a: {b: "ok" for b in names if b != a} for a in names}
    gpu = {c["id"]: c for c in doc["hosts"][0]["checks"]}["gpu-list"]
    assert (gpu["status"], gpu["finding"]) == ("pass", "driver 580.159.04")
    assert proc.returncode == 0, proc.stderr


def test_ctrl_c_stops_reports_what_finished_and_exits_130(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(2)
    args = [
        "--check",
        "gpu-list",
        "--check",
        "very-slow",
        "--no-pairs",
        "-i",
        str(cluster.client_key),
        "--known-hosts",
        str(cluster.known_hosts),
    ]
    for node in cluster.nodes:
        args += ["--host", node.spec]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kb.cli.main", "--rules", str(RULES), "check", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stderr is not None
    streamed: list[str] = []
    while len(streamed) < 2:  # one line per result on stderr, printed as it arrives
        line = proc.stderr.readline()
        assert line, "the command ended early"
        if " gpu-list " in line:
            streamed.append(line.rstrip("\n"))
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 130 and time.monotonic() - start < 8
    assert sorted(streamed) == sorted(
        f"{n.spec}  ok     gpu-list  (driver 580.159.04)" for n in cluster.nodes
    )
    assert out.splitlines()[-1] == (  # the report of what finished, on stdout
        "interrupted: 2 host(s): no problem found, 2 passed, 2 not run "
        "(--verbose lists every check)"
    )


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["--cause", "gpu-persistance-off"],
            "unknown cause 'gpu-persistance-off' (did you mean: gpu-persistence-off?)",
        ),
        (["--param", "peer=a;reboot", "--check", "peer-echo"], "is not a host name"),
        (["--param", "no-equals"], "expected NAME=VALUE"),
        (["--host", "gpu01:0"], "port 0 is out of range"),
        (["--port", "70000", "--host", "a"], "out of range"),
        (["--ssh-config", "/nonexistent/config", "--host", "a"], "no such SSH config file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], words: str) -> None:
    proc = cli(*args)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_bad_hostfile_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("node1 slots=8\nnode2 slots=eight\n")
    proc = cli("--hostfile", str(hosts))
    assert proc.returncode == 2 and f"{hosts}:2: slots 'eight' is not a number" in proc.stderr
