"""The fake nodes are safe and deterministic: no write through a link, no shared port.

A node's tools/ holds symlinks to the real tools; a test once wrote a replay script
"into a node" through such a link and, running as root, replaced /usr/bin/ip.  These
tests link a decoy "real tool" (never the machine's own) and prove that every way the
fixture API offers to put a fake tool on a node leaves the decoy byte for byte intact.
The last one proves a node never mistakes another process on its port for its sshd.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from ssh_helpers import needs_sshd
from sshd_nodes import Cluster, Node, write_script

pytestmark = pytest.mark.skipif(
    shutil.which("ssh-keygen") is None, reason="needs ssh-keygen (package openssh-client)"
)
REAL_IP = "#!/bin/sh\necho the real ip\n"


@pytest.fixture
def decoy_node(tmp_path: Path) -> tuple[Node, Path]:
    """A node (sshd not started) whose `ip` links to a decoy standing for /usr/bin/ip."""
    system = tmp_path / "system-bin"
    system.mkdir()
    decoy = system / "ip"
    decoy.write_text(REAL_IP)
    decoy.chmod(0o755)
    (tmp_path / "cluster").mkdir()
    cluster = Cluster(tmp_path / "cluster", 1, tool_path=f"{system}:/usr/bin:/bin")
    node = cluster.nodes[0]
    assert (node.tools / "ip").is_symlink() and (node.tools / "ip").resolve() == decoy
    return node, decoy


def _run(node: Node, command: str) -> str:
    env = {"PATH": f"{node.bin}:{node.tools}"}  # the PATH sshd gives the node's sessions
    return subprocess.run(
        ["/bin/sh", "-c", command], env=env, capture_output=True, text=True, check=True
    ).stdout


def test_writing_a_fake_tool_over_a_linked_real_tool_leaves_the_real_tool_untouched(
    decoy_node: tuple[Node, Path],
) -> None:
    node, decoy = decoy_node
    assert _run(node, "ip") == "the real ip\n"
    written = node.write_tool("ip", "#!/bin/sh\necho replayed ip\n")
    assert written == node.bin.resolve() / "ip" and not written.is_symlink()
    assert decoy.read_text() == REAL_IP
    assert _run(node, "ip") == "replayed ip\n"  # the fake shadows the real tool on the node


def test_bin_holds_no_links_so_even_a_plain_write_there_cannot_reach_a_real_tool(
    decoy_node: tuple[Node, Path],
) -> None:
    node, decoy = decoy_node
    assert [p.name for p in node.bin.iterdir() if p.is_symlink()] == []
    (node.bin / "ip").write_text("#!/bin/sh\necho naive\n")  # what the old test did
    assert decoy.read_text() == REAL_IP


def test_a_link_put_in_bin_is_replaced_not_followed(decoy_node: tuple[Node, Path]) -> None:
    node, decoy = decoy_node
    (node.bin / "ip").symlink_to(decoy)
    node.write_tool("ip", "#!/bin/sh\necho replayed ip\n")
    assert not (node.bin / "ip").is_symlink() and decoy.read_text() == REAL_IP


def test_writes_that_resolve_outside_the_node_are_refused(
    decoy_node: tuple[Node, Path], tmp_path: Path
) -> None:
    node, decoy = decoy_node
    with pytest.raises(ValueError, match="a tool name, not a path"):
        node.write_tool("../../system-bin/ip", "x")
    with pytest.raises(ValueError, match="outside the node"):
        write_script(node.root, node.root / ".." / ".." / "system-bin" / "ip", "x")
    shutil.rmtree(node.bin)
    node.bin.symlink_to(decoy.parent)  # bin/ itself turned into a link to the system's bin
    with pytest.raises(ValueError, match="outside the node"):
        node.write_tool("ip", "x")
    assert decoy.read_text() == REAL_IP and list(tmp_path.glob("system-bin/*")) == [decoy]


def test_removing_a_tool_removes_the_link_only(decoy_node: tuple[Node, Path]) -> None:
    node, decoy = decoy_node
    node.remove_tool("ip")
    assert not (node.tools / "ip").is_symlink() and decoy.read_text() == REAL_IP
    assert _run(node, "command -v ip || echo missing") == "missing\n"


@needs_sshd
def test_a_node_whose_port_was_taken_meanwhile_moves_to_another_port(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, 1)
    node = cluster.nodes[0]
    squatter = socket.socket()  # another worker's server took the port after it was chosen
    squatter.bind(("127.0.0.1", node.port))
    squatter.listen(1)
    try:
        cluster.start()
        assert node.port != squatter.getsockname()[1]
        assert f"[127.0.0.1]:{node.port} " in cluster.known_hosts.read_text()
        with socket.create_connection(("127.0.0.1", node.port), timeout=5) as s:
            assert s.recv(64).startswith(b"SSH-2.0-OpenSSH")  # this node's sshd, not the squatter
    finally:
        cluster.stop()
        squatter.close()
