"""Fixtures for the SSH tests: real OpenSSH servers on 127.0.0.1 playing GPU nodes.

Tests that need sshd are skipped, with the reason, where /usr/sbin/sshd is missing
(`.ci/run` installs openssh-server, so they run in CI).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ssh_helpers import RULES
from sshd_nodes import Cluster, have_sshd

from kb.rules.knowledge import KnowledgeBase


@pytest.fixture
def make_cluster(tmp_path: Path) -> Iterator[Callable[[int], Cluster]]:
    """Start N sshd nodes (stopped at the end of the test)."""
    if not have_sshd():
        pytest.skip("needs OpenSSH's /usr/sbin/sshd and ssh-keygen (package openssh-server)")
    started: list[Cluster] = []

    def make(count: int) -> Cluster:
        root = tmp_path / f"cluster{len(started)}"
        root.mkdir()
        cluster = Cluster(root, count)
        started.append(cluster)
        return cluster.start()

    yield make
    for cluster in started:
        cluster.stop()


@pytest.fixture(scope="session")
def rules() -> KnowledgeBase:
    from kb.authoring.checked import load_kb

    return load_kb(RULES)
