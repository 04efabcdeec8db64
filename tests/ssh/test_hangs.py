"""Nodes that hang, flood or never speak SSH: every deadline is the client's.

Each test stands for a defect reproduced against a real sshd (issue 11): a ForceCommand or
a blocking ~/.bashrc hung `check` for ever, a hung nvidia-smi cost 20 s per check, endless
stderr ran to its timeout, a mute port printed a paramiko traceback, Ctrl-C left the
remote command running, a failing nvidia-smi made gpu-shared-by-ranks pass, a malformed
--from-diagnosis file gave an internal error.  Deadlines here are 2-3 s to stay quick.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ssh_helpers import REPO, node_targets
from sshd_nodes import Cluster, Node

from kb.authoring.checked import load_kb
from kb.checks import RunOptions, RunReport, plan, run_checks, ssh_runners
from kb.cluster.survey import collect
from kb.rules.knowledge import KnowledgeBase
from kb.runners.ssh import SSHRunner
from kb.runners.sshoptions import SSHOptions

pytestmark = pytest.mark.ssh
MakeCluster = Callable[[int], Cluster]
HANG_RULES = Path(__file__).parent / "rules_hangs"
HUNG_SMI = "#!/bin/sh\nexec sleep 1000\n"


@pytest.fixture(scope="module")
def hang_rules() -> KnowledgeBase:
    return load_kb(HANG_RULES)


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "--rules", str(HANG_RULES), "check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def _login(cluster: Cluster, node: Node) -> list[str]:
    return [
        "--host",
        node.spec,
        "-i",
        str(cluster.client_key),
        "--known-hosts",
        str(cluster.known_hosts),
    ]


def _run(
    cluster: Cluster, kb: KnowledgeBase, checks: list[str], **options: float
) -> tuple[RunReport, float]:
    make, session = ssh_runners(
        SSHOptions(
            known_hosts=cluster.known_hosts,
            identity_files=[cluster.client_key],
            connect_timeout=options.pop("connect_timeout", 5),
        )
    )
    start = time.monotonic()
    try:
        report = run_checks(
            node_targets(cluster),
            plan.for_checks(kb, checks),
            make,
            RunOptions(pairs=False, **options),  # type: ignore[arg-type]
        )
    finally:
        session.close()
    return report, time.monotonic() - start


def _checks(report: RunReport) -> dict[str, tuple[str, str]]:
    return {c.id: (c.status, c.reason) for c in report.hosts[0].checks}


def _gone(node: Node, name: str, within: float = 5.0) -> bool:
    """True once no process called `name` runs under the node's sshd."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if name not in node.processes():
            return True
        time.sleep(0.1)
    return False


# ---------------------------------------------------------------- shells that never start


@pytest.mark.parametrize(
    "setup",
    # 30 s stands for "for ever" (the run must end long before); a root login (as here)
    # cannot have sshd signal the session, so the sleep ends by itself, soon
    ["ForceCommand sleep 30", "ForceCommand cat /dev/zero", "bashrc: sleep 30"],
)
def test_a_shell_that_never_starts_our_command_is_cut_and_json_still_printed(
    make_cluster: MakeCluster, setup: str
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    if setup.startswith("bashrc: "):
        node.write_rc(setup.removeprefix("bashrc: ") + "\n")  # a hung NFS mount, a slow conda
    else:
        cluster.reconfigure(node, setup)
    start = time.monotonic()
    proc = _cli(
        "--check", "smi-list", "--check", "cpus", "--connect-timeout", "3", "--json",
        *_login(cluster, node), timeout=40,
    )  # fmt: skip
    seconds = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    [host] = json.loads(proc.stdout)["hosts"]  # the JSON document, although nothing ran
    assert host["ok"] and [c["status"] for c in host["checks"]] == ["error", "error"]
    for check in host["checks"]:
        assert "the remote shell did not start the command within 3 s" in check["reason"]
        assert "ForceCommand" in check["reason"] and "~/.bashrc" in check["reason"]
    assert seconds < 15  # 3 s to log in, 3 s for the shell, then it is cut
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------- one probe per tool


def test_a_hung_nvidia_smi_costs_one_timeout_not_one_per_check(
    make_cluster: MakeCluster, hang_rules: KnowledgeBase
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    node.write_tool("nvidia-smi", HUNG_SMI)
    smi = ["smi-list", "smi-topo", "smi-banner", "smi-and-nproc"]
    report, seconds = _run(cluster, hang_rules, [*smi, "cpus"], timeout=2)
    checks = _checks(report)
    timed_out = [c for c in smi if checks[c] == ("error", "timed out after 2 s")]
    assert len(timed_out) == 1  # the probe
    for name in set(smi) - set(timed_out):
        status, reason = checks[name]
        assert status == "unavailable", (name, checks[name])
        assert reason.startswith("nvidia-smi did not answer") and "not asked again" in reason
    assert checks["cpus"][0] == "pass"  # nproc answered: not blamed
    assert seconds < 2 + 6  # one timeout (the rest at once), not 4 x 2 s after it
    assert _gone(node, "sleep")  # the probe was killed on the node


def test_the_survey_asks_a_hung_nvidia_smi_once(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    node.write_tool("nvidia-smi", HUNG_SMI)
    [target] = node_targets(cluster)
    make, session = ssh_runners(
        SSHOptions(known_hosts=cluster.known_hosts, identity_files=[cluster.client_key])
    )
    runner = make(target)
    start = time.monotonic()
    try:
        doc = collect(runner, timeout=60, tool_timeout=2)
    finally:
        runner.close()
        session.close()
    seconds = time.monotonic() - start
    why = doc["unavailable"]
    assert why["gpu_count"] == "nvidia-smi did not answer within 2 s"
    for fact in ("cuda_version", "gpu_topology"):  # the other nvidia-smi sections
        assert why[fact].startswith("nvidia-smi did not answer") and "not asked again" in why[fact]
    assert doc["facts"]["hostname"] == node.name
    assert seconds < 2 + 2 + 6  # one timeout (+ timeout's kill grace), not three


def test_a_failing_nvidia_smi_is_not_a_pass_for_gpu_shared_by_ranks(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    node.write_tool(
        "nvidia-smi",
        "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn''t communicate with the "
        "NVIDIA driver.'\nexit 9\n",
    )
    report, _ = _run(cluster, load_kb(), ["gpu-shared-by-ranks"])
    status, reason = _checks(report)["gpu-shared-by-ranks"]
    assert status == "error" and "exit 9" in reason and "NVIDIA-SMI has failed" in reason
    node.write_tool("nvidia-smi", "#!/bin/sh\nprintf '0000:18:00.0\\n0000:18:00.0\\n'\n")
    report, _ = _run(cluster, load_kb(), ["gpu-shared-by-ranks"])
    assert _checks(report)["gpu-shared-by-ranks"][0] == "fail"  # it still finds sharing


# ---------------------------------------------------------------- streams and budgets


def test_endless_stderr_stops_the_command_at_the_cap(
    make_cluster: MakeCluster, hang_rules: KnowledgeBase
) -> None:
    cluster = make_cluster(1)
    report, seconds = _run(cluster, hang_rules, ["stderr-flood", "cpus"])
    flood = report.hosts[0].checks[[c.id for c in report.hosts[0].checks].index("stderr-flood")]
    assert flood.status == "error" and flood.truncated
    assert flood.reason.startswith("stderr passed 64 kB; the command was stopped")
    assert _checks(report)["cpus"][0] == "pass"  # the lane goes on
    assert seconds < 10  # its timeout is 20 s: stopped at the cap, not waited out
    assert _gone(cluster.nodes[0], "yes")


def test_a_spent_host_budget_stops_the_host_and_marks_the_rest_unavailable(
    make_cluster: MakeCluster, hang_rules: KnowledgeBase
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    report, seconds = _run(
        cluster, hang_rules, ["sleeps-a-bit", "sleeps-long", "cpus"], host_budget=5
    )
    checks = _checks(report)
    assert checks["sleeps-a-bit"][0] == "pass"
    status, reason = checks["sleeps-long"]
    assert status == "unavailable" and reason.startswith("host budget spent (5 s) while it ran")
    assert checks["cpus"] == ("unavailable", "host budget spent (5 s)")
    assert seconds < 5 + 4
    assert _gone(node, "sleep")  # killed on the node, not left behind


# ---------------------------------------------------------------- a port that is not SSH


@pytest.fixture
def mute_port() -> Iterator[int]:
    """A port that accepts TCP and never says a word."""
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(8)
        yield mute.getsockname()[1]


@pytest.mark.parametrize("json_out", [False, True])
def test_a_port_that_never_speaks_ssh_is_one_line_with_the_host_and_the_banner(
    mute_port: int, json_out: bool, tmp_path: Path
) -> None:
    host = f"127.0.0.1:{mute_port}"
    args = ["--check", "cpus", "--host", host, "--connect-timeout", "1"]
    proc = _cli(*args, "--known-hosts", str(tmp_path / "kh"), *(["--json"] if json_out else []))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr + proc.stdout
    if json_out:
        [doc] = json.loads(proc.stdout)["hosts"]
        message = doc["error"]
        assert proc.stderr.count("\n") <= 2  # progress lines only
    else:
        # the report on stdout (stderr had the progress): the host's own line
        [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"✗ {host}")]
        message = line
    assert host in message and "SSH banner" in message and "within 1 s" in message


def test_the_host_budget_also_bounds_connecting(mute_port: int, tmp_path: Path) -> None:
    host = f"127.0.0.1:{mute_port}"
    start = time.monotonic()
    proc = _cli(
        "--check", "cpus", "--host", host, "--connect-timeout", "60", "--host-budget", "2",
        "--known-hosts", str(tmp_path / "kh"), "--json",
    )  # fmt: skip
    assert time.monotonic() - start < 2 + 8  # not the 60 s connect timeout
    [doc] = json.loads(proc.stdout)["hosts"]
    assert proc.returncode == 1 and doc["error_kind"] == "timeout"
    assert doc["error"].startswith("host budget spent (2 s) while connecting")


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_kills_the_remote_command_and_prints_the_partial_json(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kb.cli.main", "--rules", str(HANG_RULES), "check",
         "--check", "cpus", "--check", "sleeps-long", "--json", *_login(cluster, node)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        while "  cpus" not in (line := proc.stderr.readline()):  # progress goes to stderr
            assert line, "the command ended early"
        deadline = time.monotonic() + 20
        while "sleep" not in node.processes():
            assert time.monotonic() < deadline and proc.poll() is None, "sleep never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["interrupted"] is True
    checks = {c["id"]: c for c in doc["hosts"][0]["checks"]}
    assert checks["cpus"]["status"] == "pass"  # what finished is kept
    assert (checks["sleeps-long"]["status"], checks["sleeps-long"]["reason"]) == (
        "skipped",
        "cancelled",
    )
    assert _gone(node, "sleep")  # `sleep 99999` does not stay on the node


def test_cancel_through_the_api_kills_the_remote_command(
    make_cluster: MakeCluster, hang_rules: KnowledgeBase
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    [target] = node_targets(cluster)
    make, session = ssh_runners(
        SSHOptions(known_hosts=cluster.known_hosts, identity_files=[cluster.client_key])
    )
    runner = make(target)
    assert isinstance(runner, SSHRunner)
    results: list[object] = []
    worker = threading.Thread(
        target=lambda: results.extend(runner.run_batch([("sleep 99999", 600.0)])), daemon=True
    )
    worker.start()
    deadline = time.monotonic() + 20
    while "sleep" not in node.processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    start = time.monotonic()
    runner.cancel()
    worker.join(10)
    runner.close()
    session.close()
    assert not worker.is_alive() and time.monotonic() - start < 5
    assert [getattr(r, "error", None) for r in results] == ["cancelled"]
    assert _gone(node, "sleep")


# ---------------------------------------------------------------- --from-diagnosis


@pytest.mark.parametrize(
    "content, words",
    [
        ('{"causes": [\n  {"id": "x",}\n]}', ":2: not JSON"),
        (b"\xff\xfe\x00garbage", "not UTF-8 text"),
        ('{"causes": "nccl"}', "expected an object with a list of causes"),
        ("[1, 2]", "expected an object with a list of causes"),
        ('{"causes": [{"params": {}}]}', "cause 1 has no id"),
        ('{"causes": [{"id": "hostile-nodes", "params": ["a"]}]}', "are not name: value"),
        ('{"causes": [{"id": "hostile-nodes", "params": {"a": {"b": 1}}}]}', "not name: value"),
    ],
)
def test_a_malformed_from_diagnosis_file_is_one_line_naming_it(
    tmp_path: Path, content: str | bytes, words: str
) -> None:
    path = tmp_path / "diagnosis.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    proc = _cli("--from-diagnosis", str(path), "--json")
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert str(path) in line and words in line and "internal error" not in line


def test_cancel_while_connecting_is_a_cancel_not_a_fault_of_the_node(
    mute_port: int, hang_rules: KnowledgeBase, tmp_path: Path
) -> None:
    from kb.runners.hosts import parse_host, targets

    make, session = ssh_runners(
        SSHOptions(known_hosts=tmp_path / "kh", connect_timeout=30, use_agent=False)
    )
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    start = time.monotonic()
    try:
        report = run_checks(
            targets(parse_host(f"127.0.0.1:{mute_port}"), None, None, "me"),
            plan.for_checks(hang_rules, ["cpus"]),
            make,
            RunOptions(pairs=False),
            cancel=cancel,
        )
    finally:
        session.close()
    assert time.monotonic() - start < 1 + 6  # not the 30 s connect timeout
    [host] = report.hosts
    assert report.interrupted and host.ok and host.error is None
    assert [(c.id, c.status, c.reason) for c in host.checks] == [("cpus", "skipped", "cancelled")]
