"""Fixtures for the cluster tests: fake GPU nodes, sshd nodes, network namespaces.

The helpers live in `cluster_helpers.py` (importable by the tests: this directory is
put on sys.path, as tests/ssh does for its helpers).
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cluster_helpers import FakeNode, fake_path, netns_possible, sshd_nodes

from kb.runners.local import LocalRunner


@pytest.fixture
def fake_node(tmp_path: Path) -> Callable[..., LocalRunner]:
    """`fake_node(FakeNode(...), name)` -> a LocalRunner that plays that node."""

    def make(spec: FakeNode, name: str | None = None) -> LocalRunner:
        bindir = spec.install(tmp_path / (name or spec.hostname) / uuid.uuid4().hex[:6])
        return LocalRunner(name or "local", env={"PATH": fake_path(bindir)})

    return make


@pytest.fixture
def sshd_cluster(tmp_path: Path) -> Iterator[Callable[[int], object]]:
    """Start N real sshd nodes on 127.0.0.1 (stopped at the end); skip without sshd."""
    nodes = sshd_nodes()
    if not nodes.have_sshd():
        pytest.skip("needs OpenSSH's /usr/sbin/sshd and ssh-keygen (package openssh-server)")
    started: list[Any] = []

    def make(count: int) -> object:
        root = tmp_path / f"cluster{len(started)}"
        root.mkdir()
        cluster = nodes.Cluster(root, count)
        started.append(cluster)
        return cluster.start()

    yield make
    for cluster in started:
        cluster.stop()


@pytest.fixture
def netns() -> Iterator[Callable[[list[str]], str]]:
    """`netns(["ip link add ...", ...])` -> the name of a new namespace set up by those commands."""
    why = netns_possible()
    if why:
        pytest.skip(why)
    made: list[str] = []

    def make(setup: list[str]) -> str:
        ns = f"dlpt-{uuid.uuid4().hex[:8]}"
        done = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot create a network namespace: {done.stderr.strip()}")
        made.append(ns)
        for cmd in ["ip link set lo up", *setup]:
            subprocess.run(
                ["ip", "netns", "exec", ns, "sh", "-c", cmd], check=True, capture_output=True
            )
        return ns

    yield make
    for ns in made:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
