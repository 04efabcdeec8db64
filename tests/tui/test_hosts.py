"""Checks run on the job's nodes over SSH, from the hosts panel (real sshd on 127.0.0.1)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dlperf_tui.hosts import ALL, LOCAL, Hosts
from dlperf_tui.screens.cluster import short_headers
from kb.checks.model import CheckResult
from kb.rules.knowledge import KnowledgeBase
from kb.util.errors import UserError
from kb.walk.session import combine, run_check_on
from tests.tui.driving import export, screen_text, shows, until, until_screen

sys.path.insert(0, str(Path(__file__).parent.parent / "ssh"))
from sshd_nodes import Cluster, have_sshd


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    if not have_sshd():
        pytest.skip("needs OpenSSH's /usr/sbin/sshd and ssh-keygen (package openssh-server)")
    root = tmp_path / "cluster"
    root.mkdir()
    nodes = Cluster(root, 2).start()
    yield nodes
    nodes.stop()


def hosts_for(cluster: Cluster, tmp_path: Path) -> Hosts:
    return Hosts(
        ssh_config=cluster.ssh_config(tmp_path / "ssh_config"),
        known_hosts=cluster.known_hosts,
        identity_files=[cluster.client_key],
    )


def test_nodes_are_added_by_alias_and_slurm_range_and_answer(cluster: Cluster, tmp_path: Path):
    hosts = hosts_for(cluster, tmp_path)
    assert hosts.add("gpu[01-02]") == ["gpu01", "gpu02"]
    assert hosts.choices == [LOCAL, "gpu01", "gpu02", ALL]
    assert hosts.test("gpu01") is None and hosts.test("gpu02") is None
    hosts.close()


def test_a_bad_host_name_is_a_one_line_error(tmp_path: Path):
    with pytest.raises(UserError):
        Hosts(ssh_config=Path("/dev/null")).add("gpu01;rm -rf /")


def test_a_check_on_all_hosts_fails_when_one_node_fails(
    kb: KnowledgeBase, cluster: Cluster, tmp_path: Path
):
    hosts = hosts_for(cluster, tmp_path)
    hosts.add("gpu[01-02]")
    hosts.select(ALL)
    chk = kb.checks["list-interfaces"][1]
    record = run_check_on(chk, hosts.for_job(), hosts.make_runner, {})
    assert record.host == "local, gpu01, gpu02"
    assert "== gpu01:" in record.output and "== gpu02:" in record.output
    hosts.close()


def test_combining_records_keeps_each_hosts_verdict():
    def rec(host: str, status: str) -> CheckResult:
        return CheckResult(
            host, "c", "cmd", status, f"out {host}", finding=f"f {host}", exit_code=0
        )

    assert combine([rec("a", "pass"), rec("b", "fail")]).status == "fail"
    assert combine([rec("a", "pass"), rec("b", "pass")]).status == "pass"
    assert combine([rec("a", "pass"), rec("b", "unavailable")]).status == "unavailable"
    both = combine([rec("a", "pass"), rec("b", "error")])
    assert both.status == "error" and both.finding == "a: f a; b: f b"


@pytest.mark.slow
async def test_the_hosts_panel_connects_a_node_and_the_walk_runs_its_check_there(
    make_app: Callable, cluster: Cluster, tmp_path: Path
):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.runners = hosts_for(cluster, tmp_path)
        app.start_walk("multi-node-hang")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("h")
        await until_screen(pilot, "HostsScreen")
        await pilot.press(*"gpu01", "enter")
        await shows(pilot, "gpu01   ✔ reachable", timeout=30)
        await pilot.press("shift+tab")  # back to the list of hosts
        listing = app.screen.query_one("#host-list")
        while listing.highlighted_option.id != "gpu01":
            await pilot.press("down")
        await pilot.press("enter", "escape")
        await until_screen(pilot, "WalkScreen")
        await shows(pilot, "r  Run it on gpu01")
        await pilot.press("r")
        await until(pilot, lambda: bool(app.session.walk.path), timeout=30)
        record = app.session.walk.path[0].record
        assert record is not None and record.host == "gpu01"
        assert record.status in ("pass", "fail") and "inet" in record.output


@pytest.mark.slow
async def test_the_cluster_view_compares_every_host_and_goes_into_the_runbook(
    make_app: Callable, cluster: Cluster, tmp_path: Path
):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.runners = hosts_for(cluster, tmp_path)
        app.runners.add("gpu[01-02]")
        await until_screen(pilot, "StartScreen")
        await pilot.press("ctrl+k")
        await until_screen(pilot, "ClusterScreen")
        # this machine has no GPU; the nodes replay a 2xH200 host's nvidia-smi: rows differ
        shown = await shows(pilot, "3 node(s),", "driver_version", "580.159.04", timeout=60)
        assert "difference(s) (marked !" in shown
        await export(pilot)
        runbook = next(tmp_path.glob("dlperf-help-session-*.md")).read_text()
        assert "## Cluster consistency" in runbook and "| **driver_version** ⚠" in runbook


@pytest.mark.slow
async def test_trusting_host_keys_retests_the_node_that_was_refused(
    make_app: Callable, cluster: Cluster, tmp_path: Path
):
    unknown = tmp_path / "empty_known_hosts"
    unknown.write_text("")
    hosts = hosts_for(cluster, tmp_path)
    hosts.known_hosts = unknown  # no node's key is known yet
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.runners = hosts
        app.start_walk("multi-node-hang")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("h")
        await until_screen(pilot, "HostsScreen")
        await pilot.press(*"gpu01", "enter")
        await until(pilot, lambda: app.screen.state.get("gpu01", "").startswith("✘"), timeout=30)
        refused = app.screen.state["gpu01"]
        port = cluster.nodes[0].port
        assert f"unknown host key for [127.0.0.1]:{port}" in refused  # the host, not ":port"
        assert "turn on the trust switch below" in refused and "--accept" not in refused
        assert unknown.read_text() == ""  # never trusted silently
        app.screen.query_one("#accept-new").value = True  # the user trusts it now ...
        await until(pilot, lambda: app.screen.state["gpu01"] == "✔ reachable", timeout=30)
        assert "127.0.0.1" in unknown.read_text()  # ... retested at once, the key recorded


def test_node_columns_leave_out_the_login_they_share():
    assert short_headers(["fact", "vm", "root@10.0.0.1:2222", "root@10.0.0.2"]) == (
        ["fact", "vm", "10.0.0.1:2222", "10.0.0.2"],
        "root",
    )
    mixed = ["fact", "root@a", "ubuntu@b"]
    assert short_headers(mixed) == (mixed, "")


@pytest.mark.slow
async def test_the_cluster_view_at_80x24_names_nodes_without_the_shared_login(
    make_app: Callable, cluster: Cluster, tmp_path: Path
):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.runners = hosts_for(cluster, tmp_path)
        node = cluster.nodes[0]
        app.runners.add(node.spec)  # user@127.0.0.1:port
        await until_screen(pilot, "StartScreen")
        await pilot.press("ctrl+k")
        await until_screen(pilot, "ClusterScreen")
        await shows(pilot, "2 node(s),", f"as {node.user}", timeout=60)
        labels = [str(c.label) for c in app.screen.query_one("#facts").columns.values()]
        assert f"127.0.0.1:{node.port}" in labels and not any("@" in x for x in labels)
        header = screen_text(app).splitlines()[2]
        assert f"127.0.0.1:{node.port}" in header  # whole on the screen, not cut
