"""Node-to-node checks, live events and cancelling, ProxyJump: through the public API."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from ssh_helpers import by_id, logins_settled, node_targets, ping_state, run_on
from sshd_nodes import Cluster, free_port

from kb.checks import CheckEvent, HostEvent, PairEvent, RunOptions, run_checks, ssh_runners
from kb.checks.plan import for_checks
from kb.checks.render import event_line, summary
from kb.rules.knowledge import KnowledgeBase
from kb.runners.hosts import load_config, parse_host, targets
from kb.runners.sshoptions import SSHOptions

pytestmark = pytest.mark.ssh
MakeCluster = Callable[[int], Cluster]


def test_matrix_shows_who_can_log_in_to_whom_and_why_not(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(4)
    a, b, c, d = cluster.nodes
    cluster.authorize(c, a, c, d)  # c does not accept b's key
    d_spec = d.spec
    report = run_on(cluster, rules, ["gpu-list"], nodes=[a, b, c], options=RunOptions(pairs=True))
    assert report.matrix[b.spec] == {a.spec: "ok", c.spec: "auth"}
    assert report.matrix[a.spec] == {b.spec: "ok", c.spec: "ok"}
    failing = by_id(report, 1)["ssh-to-peers"]
    assert failing.status == "fail" and failing.finding == f"{c.spec}: auth"
    d.kill()
    report = run_on(cluster, rules, ["gpu-list"], options=RunOptions(pairs=True))
    assert report.matrix[a.spec][d_spec] == "refused"
    assert report.matrix[d_spec] == {a.spec: "skipped", b.spec: "skipped", c.spec: "skipped"}
    assert not report.hosts[3].ok and report.found_problem


def test_each_node_reports_its_interfaces_and_routes_to_the_others(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    report = run_on(cluster, rules, ["gpu-list"], options=RunOptions(pairs=True))
    b = cluster.nodes[1]
    network = report.hosts[0].network
    assert network is not None
    assert "127.0.0.1/8" in network["interfaces"]["lo"], report.hosts[0].checks
    assert " dev lo " in network["routes"][b.spec]


@pytest.mark.skipif(ping_state() != "works", reason="needs iputils-ping allowed to ping here")
def test_large_packet_ping_between_nodes_with_the_real_ping(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    report = run_on(cluster, rules, ["gpu-list"], options=RunOptions(pairs=True))
    a, b = (n.spec for n in cluster.nodes)
    assert report.ping == {a: {b: "ok"}, b: {a: "ok"}}
    assert by_id(report, 0)["ping-peers"].status == "pass"


def test_a_node_without_ping_says_unavailable_not_a_failure(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    for node in cluster.nodes:
        node.remove_tool("ping")
    report = run_on(cluster, rules, ["gpu-list"], options=RunOptions(pairs=True))
    a, b = (n.spec for n in cluster.nodes)
    assert report.ping == {a: {b: "unavailable"}, b: {a: "unavailable"}}
    assert by_id(report, 0)["ping-peers"].status == "unavailable"
    assert not report.found_problem


def test_packet_loss_and_silence_are_reported_per_pair(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(3)
    a, b, c = cluster.nodes
    for node in cluster.nodes:  # a ping that answers like iputils for the large packets
        node.write_tool(
            "ping",
            f"""#!/bin/sh
for last; do :; done
case "$(cat {node.root}/ping-to-$last 2>/dev/null)" in
  lost) echo "3 packets transmitted, 2 received, 33.3333% packet loss, time 402ms"; exit 1 ;;
  dead) echo "3 packets transmitted, 0 received, 100% packet loss, time 2040ms"; exit 1 ;;
  *) echo "3 packets transmitted, 3 received, 0% packet loss, time 401ms" ;;
esac
""",
        )
    (a.root / "ping-to-127.0.0.1").write_text("lost")
    (c.root / "ping-to-127.0.0.1").write_text("dead")
    report = run_on(cluster, rules, ["gpu-list"], options=RunOptions(pairs=True))
    assert report.ping[a.spec] == {b.spec: "loss 33.3333%", c.spec: "loss 33.3333%"}
    assert report.ping[b.spec] == {a.spec: "ok", c.spec: "ok"}
    assert report.ping[c.spec] == {a.spec: "no-reply", b.spec: "no-reply"}
    assert by_id(report, 2)["ping-peers"].finding == f"{a.spec}: no-reply, {b.spec}: no-reply"
    assert report.found_problem


def test_pair_checks_run_from_each_node_towards_each_peer_on_the_job_port(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    closed = free_port()
    report = run_on(cluster, rules, ["peer-echo"], options=RunOptions(pairs=True, job_port=closed))
    for i, node in enumerate(cluster.nodes):
        [check] = [c for c in report.hosts[i].checks if c.id == "peer-echo"]
        other = cluster.nodes[1 - i]
        assert (check.peer, check.output) == (other.spec, f"to 127.0.0.1 port {closed}\n")
        assert report.matrix[node.spec] == {other.spec: "refused"}  # nothing on the job port


def test_events_stream_as_results_arrive_and_read_as_lines(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    events: list[object] = []
    report = run_on(
        cluster,
        rules,
        ["gpu-list", "missing-tool"],
        options=RunOptions(pairs=True),
        on_event=events.append,
    )
    states = [(e.host, e.state) for e in events if isinstance(e, HostEvent)]
    for node in cluster.nodes:
        assert [s for h, s in states if h == node.spec] == ["connecting", "connected", "done"]
    pairs = {
        (e.source, e.target, e.status)
        for e in events
        if isinstance(e, PairEvent) and e.kind == "ssh"
    }
    a, b = (n.spec for n in cluster.nodes)
    assert pairs == {(a, b, "ok"), (b, a, "ok")}
    lines = [event_line(e) for e in events if isinstance(e, CheckEvent)]
    assert f"{a}  ok     gpu-list  (driver 580.159.04)" in lines
    assert f"{b}  n/a    missing-tool  (dlperf-no-such-tool is not installed on this node)" in lines
    ping = {"works": "pass", "missing": "unavailable"}.get(ping_state(), "error")
    pinged = [c.status for h in report.hosts for c in h.checks if c.id == "ping-peers"]
    assert pinged == [ping, ping]
    counts = "6 pass, 2 unavailable" if ping == "pass" else "4 pass, 4 unavailable"
    if ping == "error":  # ping installed but not allowed here: its check could not run
        counts = "4 pass, 2 error, 2 unavailable"
    assert summary(report).splitlines()[-1] == f"2 host(s), 0 unreachable; checks: {counts}"


def test_cancel_stops_running_commands_and_marks_the_rest_skipped(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    cancel = threading.Event()

    def on_event(event: object) -> None:
        if isinstance(event, CheckEvent) and event.result.id == "gpu-list":
            cancel.set()

    start = time.monotonic()
    report = run_on(
        cluster,
        rules,
        ["gpu-list", "very-slow"],
        cancel=cancel,
        on_event=on_event,
        options=RunOptions(pairs=False, parallel=1),
    )
    assert time.monotonic() - start < 10
    doc = report.as_json()
    assert doc["interrupted"] is True
    first = {c["id"]: (c["status"], c.get("reason")) for c in doc["hosts"][0]["checks"]}
    assert first == {"gpu-list": ("pass", None), "very-slow": ("skipped", "cancelled")}
    second = {c["id"]: c["status"] for c in doc["hosts"][1]["checks"]}
    assert second == {"gpu-list": "skipped", "very-slow": "skipped"}  # never started


def test_proxyjump_reaches_a_node_through_a_jump_host(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(2)
    jump, node = cluster.nodes
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host inner\n  HostName 127.0.0.1\n  Port {node.port}\n"
        f"  ProxyJump {jump.user}@127.0.0.1:{jump.port}\n"
    )
    make_runner, session = ssh_runners(
        SSHOptions(known_hosts=cluster.known_hosts, identity_files=[cluster.client_key])
    )
    found = targets(parse_host("inner"), load_config(config), None, cluster.user)
    report = run_checks(
        found, for_checks(rules, ["gpu-list"]), make_runner, RunOptions(pairs=False)
    )
    session.close()
    assert report.hosts[0].ok and by_id(report)["gpu-list"].status == "pass"
    assert logins_settled(jump) == 1 and logins_settled(node) == 1


def test_hosts_given_by_target_list_keep_the_order_given(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(3)
    order = list(reversed(cluster.nodes))
    report = run_on(cluster, rules, ["gpu-list"], nodes=order)
    assert [h.host for h in report.hosts] == [n.spec for n in order]
    assert [t.label for t in node_targets(cluster, order)] == [n.spec for n in order]


def test_a_ping_that_may_not_run_is_an_error_of_the_check_not_a_network_fault(
    make_cluster: MakeCluster, rules: KnowledgeBase
) -> None:
    cluster = make_cluster(2)
    for node in cluster.nodes:  # iputils-ping without CAP_NET_RAW for this user
        node.write_tool("ping", "#!/bin/sh\necho 'ping: socket: Operation not permitted'\nexit 2\n")
    report = run_on(cluster, rules, ["gpu-list"], options=RunOptions(pairs=True))
    check = by_id(report, 0)["ping-peers"]
    assert check.status == "error" and check.finding is None
    assert check.reason == "ping did not run: ping: socket: Operation not permitted"
    a, b = (n.spec for n in cluster.nodes)
    assert report.ping == {a: {b: "error"}, b: {a: "error"}}
