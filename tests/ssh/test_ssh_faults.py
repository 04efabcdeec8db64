"""Each way a node can fail is reported for that node while every other node is checked."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ssh_helpers import by_id, logins_settled, run_on
from sshd_nodes import Cluster, descendants, keygen

from kb.checks import CheckEvent, RunOptions, run_checks, ssh_runners
from kb.checks.plan import for_checks
from kb.rules.knowledge import KnowledgeBase
from kb.runners.base import OUTPUT_CAP, Runner
from kb.runners.hosts import Target, parse_host, targets
from kb.runners.sshoptions import SSHOptions

pytestmark = pytest.mark.ssh
MakeCluster = Callable[[int], Cluster]


def _run_with_extra(cluster: Cluster, rules: KnowledgeBase, extra: str, timeout: float = 2):
    """gpu-list on the cluster's first node plus one more host spec that is broken.

    Only the broken host gets the short connect `timeout`: the good node must not have to
    log in within it (on a loaded 2-core machine, sshd's fork and re-exec alone can take
    longer than 1 s).
    """
    good, bad = parse_host(cluster.nodes[0].spec), parse_host(extra)
    sessions = []
    for limit in (10.0, timeout):
        make, session = ssh_runners(
            SSHOptions(
                known_hosts=cluster.known_hosts,
                identity_files=[cluster.client_key],
                connect_timeout=limit,
            )
        )
        sessions.append((make, session))
    broken = {spec.label for spec in bad}

    def make_runner(target: Target) -> Runner:
        return sessions[target.label in broken][0](target)

    start = time.monotonic()
    report = run_checks(
        targets(good + bad, None, None, cluster.user),
        for_checks(rules, ["gpu-list"]),
        make_runner,
        RunOptions(pairs=False),
    )
    for _, session in sessions:
        session.close()
    return report, time.monotonic() - start


def _assert_good_first_host(report) -> None:
    first = report.hosts[0]
    assert first.ok and by_id(report)["gpu-list"].status == "pass"


def test_connection_refused_is_reported_and_the_other_node_is_checked(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    dead = cluster.nodes[1]
    dead.kill()
    report, _ = _run_with_extra(cluster, rules, dead.spec)
    _assert_good_first_host(report)
    bad = report.hosts[1]
    assert not bad.ok and bad.error_kind == "refused"
    assert f"connection refused on 127.0.0.1:{dead.port}" in (bad.error or "")
    assert [(c.id, c.status) for c in bad.checks] == [("gpu-list", "skipped")]
    assert report.found_problem


@pytest.fixture
def silent_port() -> Iterator[tuple[int, int]]:
    """(a port that accepts TCP but never speaks SSH, a port whose accept queue is full)."""
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(8)
    full = socket.socket()
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    filler = socket.create_connection(full.getsockname())  # fills the queue: SYNs now drop
    yield mute.getsockname()[1], full.getsockname()[1]
    for s in (mute, full, filler):
        s.close()


def test_server_that_never_answers_times_out_without_holding_the_others(
    make_cluster: MakeCluster, rules: KnowledgeBase, silent_port: tuple[int, int]
) -> None:
    cluster = make_cluster(1)
    for port, words in (
        (silent_port[0], "no SSH server answered within 1 s"),
        (silent_port[1], "timed out connecting to 127.0.0.1"),
    ):
        report, seconds = _run_with_extra(cluster, rules, f"127.0.0.1:{port}", timeout=1)
        _assert_good_first_host(report)
        bad = report.hosts[1]
        assert bad.error_kind == "timeout" and words in (bad.error or "")
        assert seconds < 6


def test_unknown_host_name_is_a_dns_failure(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    report, _ = _run_with_extra(make_cluster(1), rules, "no-such-node.invalid:22")
    _assert_good_first_host(report)
    assert report.hosts[1].error_kind == "dns"
    assert "cannot resolve" in (report.hosts[1].error or "")


def test_key_not_authorized_is_an_authentication_failure(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(2)
    other = keygen(tmp_path / "someone_else")
    (cluster.nodes[1].root / "authorized_keys").write_text(Path(f"{other}.pub").read_text())
    report, _ = _run_with_extra(cluster, rules, cluster.nodes[1].spec)
    _assert_good_first_host(report)
    bad = report.hosts[1]
    assert bad.error_kind == "auth" and "authentication failed" in (bad.error or "")
    assert str(cluster.client_key) in (bad.error or "")  # says which key it tried


def test_hanging_command_times_out_is_killed_on_the_node_and_the_rest_runs(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(1)
    start = time.monotonic()
    report = run_on(cluster, rules, ["hangs", "gpu-list"])
    checks = by_id(report)
    assert checks["hangs"].status == "error" and checks["hangs"].reason == "timed out after 1 s"
    assert checks["gpu-list"].status == "pass"
    assert time.monotonic() - start < 8
    node = cluster.nodes[0]
    assert node.proc is not None
    assert "sleep" not in _names(descendants(node.proc.pid))


def _names(pids: list[int]) -> list[str]:
    """The command names of processes that still exist."""
    names = []
    for pid in pids:
        with contextlib.suppress(OSError):  # it may end between listing and reading
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
    return names


def test_endless_output_is_capped_and_said_so(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(1)
    start = time.monotonic()
    report = run_on(cluster, rules, ["floods", "gpu-list"])
    flood = by_id(report)["floods"]
    assert flood.status == "error" and flood.truncated
    assert len(flood.output) == OUTPUT_CAP and "the command was stopped" in flood.reason
    assert by_id(report)["gpu-list"].status == "pass"
    assert time.monotonic() - start < 10


def test_sshd_killed_mid_command_is_reported_for_that_node_only(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    victim = cluster.nodes[1]

    killed_at: list[float] = []

    def kill_when_sleeping() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and victim.proc is not None:
            if "sleep" in _names(descendants(victim.proc.pid)):
                victim.kill()
                killed_at.append(time.monotonic())
                return
            time.sleep(0.05)

    threading.Thread(target=kill_when_sleeping, daemon=True).start()
    arrived: dict[tuple[str, str], float] = {}

    def note(event: object) -> None:
        if isinstance(event, CheckEvent):
            arrived[(event.result.host, event.result.id)] = time.monotonic()

    report = run_on(cluster, rules, ["gpu-list", "slow"], on_event=note)
    lost = by_id(report, 1)["slow"]
    assert lost.status == "error" and "connection lost" in lost.reason  # sleep was killed too
    assert arrived[(victim.spec, "slow")] - killed_at[0] < 2.5  # noticed, not waited out
    assert by_id(report, 1)["gpu-list"].status == "pass"  # what finished before is kept
    assert by_id(report, 0)["slow"].status == "pass"  # the other node went on


def test_one_connection_per_host_carries_all_its_checks(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(1)
    report = run_on(cluster, rules, ["gpu-list", "gpu-no-nvlink", "gpu-processes", "missing-tool"])
    assert [c.status for c in report.hosts[0].checks] == ["pass", "pass", "pass", "unavailable"]
    assert logins_settled(cluster.nodes[0]) == 1
