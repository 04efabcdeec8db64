"""Helpers shared by the SSH tests: run checks on test nodes through the API or the CLI."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sshd_nodes import TOOL_PATH, Cluster, Node, have_sshd

from kb.checks import CheckResult, Event, RunOptions, RunReport, plan, run_checks, ssh_runners
from kb.rules.knowledge import KnowledgeBase
from kb.runners.hosts import Target, parse_host, targets
from kb.runners.sshoptions import SSHOptions

RULES = Path(__file__).parent / "rules"
REPO = Path(__file__).resolve().parents[2]

needs_sshd = pytest.mark.skipif(
    not have_sshd(), reason="needs OpenSSH's /usr/sbin/sshd and ssh-keygen (openssh-server)"
)


def node_targets(cluster: Cluster, nodes: list[Node] | None = None) -> list[Target]:
    specs = [s for n in (nodes or cluster.nodes) for s in parse_host(n.spec)]
    return targets(specs, None, None, cluster.user)


def run_on(
    cluster: Cluster,
    kb: KnowledgeBase,
    check_ids: list[str],
    nodes: list[Node] | None = None,
    options: RunOptions | None = None,
    ssh: SSHOptions | None = None,
    on_event: Callable[[Event], None] | None = None,
    cancel: threading.Event | None = None,
) -> RunReport:
    """Run some of the test rules' checks on the nodes through the public API."""
    ssh = ssh or SSHOptions(
        known_hosts=cluster.known_hosts, identity_files=[cluster.client_key], connect_timeout=5
    )
    make_runner, session = ssh_runners(ssh)
    try:
        return run_checks(
            node_targets(cluster, nodes),
            plan.for_checks(kb, check_ids),
            make_runner,
            options or RunOptions(pairs=False),
            on_event,
            cancel,
        )
    finally:
        session.close()


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`dlperf-help --rules tests/ssh/rules check ARGS` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "--rules", str(RULES), "check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def by_id(report: RunReport, host: int = 0) -> dict[str, CheckResult]:
    return {c.id: c for c in report.hosts[host].checks}


def logins_settled(node: Node, quiet: float = 0.3, limit: float = 10.0) -> int:
    """The node's count of accepted logins once its log stops growing.

    sshd logs a login from its monitor process, which may run after the client has
    already finished on a loaded machine: wait for the log to be quiet instead of
    sleeping a fixed time.
    """
    deadline = time.monotonic() + limit
    size, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        now_size = len(node.log)
        if now_size != size:
            size, since = now_size, time.monotonic()
        elif node.accepted_logins() and time.monotonic() - since >= quiet:
            break
        time.sleep(0.05)
    return node.accepted_logins()


@functools.cache
def ping_state() -> str:
    """`missing` (no iputils-ping), `works` (it can send 10 kB packets to 127.0.0.1 here),
    or `refused` (installed, but this user may not ping: no CAP_NET_RAW, no ping group)."""
    ping = shutil.which("ping", path=TOOL_PATH)  # what the test nodes link into tools/
    if ping is None:
        return "missing"
    done = subprocess.run(
        [ping, "-c", "1", "-W", "2", "-s", "10240", "127.0.0.1"], capture_output=True, timeout=30
    )
    return "works" if done.returncode == 0 else "refused"
