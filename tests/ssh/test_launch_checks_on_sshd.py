"""The node-to-node SSH checks against a real OpenSSH server on loopback.

`ssh-batchmode-login`, `sshd-listening-on-port` and `mpi-remote-path` are run exactly
as the rules write them, with `{peer}` and `{port}` filled, towards a throw-away sshd
(its own host key, authorized keys and port). A wrapper `ssh` first on PATH points the
client at a private config, so the user's own ~/.ssh is never read or written.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from kb.checks.evaluate import evaluate
from kb.diagnosis.engine import diagnose_text
from kb.rules import loader
from kb.rules.placeholders import fill_command
from kb.rules.schema.models import Check
from kb.util.paths import rules_dir
from tests.shipped_rules import knowledge

pytestmark = pytest.mark.ssh

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
SSH = shutil.which("ssh")


@cache
def check(check_id: str) -> Check:
    kb, _ = loader.load(rules_dir())
    return kb.checks[check_id][1]


@dataclass
class Node:
    """A throw-away sshd and a client set up to reach it."""

    root: Path
    port: int
    path: str  # PATH with the wrapper ssh first

    def run(self, check_id: str) -> str:
        chk = check(check_id)
        cmd = fill_command(chk.run, {"peer": "127.0.0.1", "port": str(self.port)})
        env = {"PATH": self.path, "HOME": str(self.root), "LANG": "C"}
        proc = subprocess.run(
            ["/bin/sh", "-c", cmd], capture_output=True, text=True, env=env, timeout=chk.timeout
        )
        return evaluate(chk, proc.stdout, proc.returncode, proc.stderr).status


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text()


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(100):
        if proc.poll() is not None:
            pytest.skip(f"sshd exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    pytest.skip("sshd did not start listening")


@pytest.fixture
def node(tmp_path: Path) -> Iterator[Node]:
    if SSH is None or not os.path.exists(SSHD) or shutil.which("ssh-keygen") is None:
        pytest.skip("OpenSSH client and server are needed")
    if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
        pytest.skip("sshd as root needs /run/sshd")
    port = _free_port()
    host_pub = _keygen(tmp_path / "host_ed25519")
    client_pub = _keygen(tmp_path / "client_ed25519")
    (tmp_path / "authorized_keys").write_text(client_pub)
    (tmp_path / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub}")
    (tmp_path / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {tmp_path}/host_ed25519\n"
        f"AuthorizedKeysFile {tmp_path}/authorized_keys\nPidFile {tmp_path}/sshd.pid\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPermitRootLogin yes\nLogLevel ERROR\n"
        f"SetEnv PATH={tmp_path}/remote-bin\n"
    )  # the session's PATH, as a node's shell sets it
    (tmp_path / "remote-bin").mkdir()
    (tmp_path / "ssh_config").write_text(
        f"Host *\n  IdentityFile {tmp_path}/client_ed25519\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {tmp_path}/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
        "  StrictHostKeyChecking yes\n  LogLevel ERROR\n"
    )
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "ssh"
    wrapper.write_text(f'#!/bin/sh\nexec {SSH} -F {tmp_path}/ssh_config "$@"\n')
    wrapper.chmod(0o755)
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(tmp_path / "sshd_config")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_listening(port, proc)
        yield Node(tmp_path, port, f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_a_node_with_an_authorized_key_and_known_host_key_passes(node: Node) -> None:
    assert node.run("ssh-batchmode-login") == "pass"
    assert node.run("sshd-listening-on-port") == "pass"


def test_a_key_missing_from_authorized_keys_fails_the_login_check(node: Node) -> None:
    (node.root / "authorized_keys").write_text("")
    assert node.run("ssh-batchmode-login") == "fail"


def test_an_unknown_host_key_fails_the_login_check(node: Node) -> None:
    (node.root / "known_hosts").write_text("")
    assert node.run("ssh-batchmode-login") == "fail"


def test_a_closed_port_is_not_mistaken_for_a_key_problem(node: Node) -> None:
    node.port = _free_port()  # nothing listens there
    assert node.run("ssh-batchmode-login") == "error"
    assert node.run("sshd-listening-on-port") == "fail"


@pytest.mark.slow
def test_remote_path_check_passes_when_the_ssh_session_finds_orted(node: Node) -> None:
    orted = node.root / "remote-bin" / "orted"
    orted.write_text("#!/bin/sh\nexit 0\n")
    orted.chmod(0o755)
    assert node.run("mpi-remote-path") == "pass"


def test_remote_path_check_fails_when_open_mpi_is_only_on_the_interactive_path(node: Node) -> None:
    assert node.run("mpi-remote-path") == "fail"


# ---------------------------------------------------------------- what the launchers print


def _ranked(text: str) -> list[str]:
    return [c.id for c in diagnose_text(knowledge(), text).causes]


def _ssh_debug(node: Node, *extra: str) -> str:
    """The `ssh -vvv` transcript a user pastes: a batch-mode login to the node."""
    env = {"PATH": node.path, "HOME": str(node.root), "LANG": "C"}
    proc = subprocess.run(
        ["ssh", "-vvv", "-o", "BatchMode=yes", "-p", str(node.port), *extra, "127.0.0.1", "true"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    return proc.stderr


def _launcher_probe(node: Node, command: str, hide_ssh: bool) -> str:
    """What DeepSpeed's runner prints when its ssh probe fails: Python's CalledProcessError
    for `command` run through the shell, with ssh's own message hidden or shown."""
    code = (
        "import subprocess, sys\n"
        f"kw = {{'stderr': subprocess.DEVNULL}} if {hide_ssh} else {{}}\n"
        "subprocess.check_output([sys.argv[1]], shell=True, **kw)\n"
    )
    env = {"PATH": node.path, "HOME": str(node.root), "LANG": "C"}
    proc = subprocess.run(
        [sys.executable, "-c", code, command], capture_output=True, text=True, env=env, timeout=30
    )
    assert proc.returncode != 0
    return proc.stderr


def test_a_debug_transcript_of_a_refused_key_is_a_passwordless_problem(node: Node) -> None:
    (node.root / "authorized_keys").write_text("")
    text = _ssh_debug(node)
    assert "Permission denied (publickey)" in text
    assert _ranked(text)[:1] == ["ssh-passwordless-missing"]
    # the debug lines alone (the final message cut off) say the same
    debug = "\n".join(ln for ln in text.splitlines() if ln.startswith("debug"))
    assert _ranked(debug)[:1] == ["ssh-passwordless-missing"]
    # and so does a transcript that stops at a keys-only server's login stage
    lines = debug.splitlines()
    stop = next(i for i, ln in enumerate(lines) if "Authentications that can continue" in ln)
    assert _ranked("\n".join(lines[: stop + 3]))[:1] == ["ssh-passwordless-missing"]


@pytest.mark.slow
def test_a_debug_transcript_of_a_successful_login_is_no_ssh_problem(node: Node) -> None:
    text = _ssh_debug(node)
    assert "Authenticated to" in text or "Authentication succeeded" in text
    assert not {"ssh-passwordless-missing", "ssh-port-unreachable"} & set(_ranked(text))


def test_a_debug_transcript_of_a_closed_port_is_a_port_problem(node: Node) -> None:
    node.port = _free_port()
    text = _ssh_debug(node)
    assert _ranked(text)[:1] == ["ssh-port-unreachable"]


def test_a_failed_address_probe_with_its_ssh_message_hidden_is_read_as_the_port(
    node: Node,
) -> None:
    node.port = _free_port()  # DeepSpeed's `ssh <host> hostname -I`, without --ssh_port
    text = _launcher_probe(node, f"ssh -p {node.port} 127.0.0.1 hostname -I", hide_ssh=True)
    assert "returned non-zero exit status 255" in text
    assert _ranked(text)[:1] == ["ssh-port-unreachable"]


def test_a_failed_address_probe_that_shows_a_refused_key_is_a_key_problem(node: Node) -> None:
    (node.root / "authorized_keys").write_text("")
    text = _launcher_probe(node, f"ssh -p {node.port} 127.0.0.1 hostname -I", hide_ssh=False)
    assert "Permission denied" in text
    assert _ranked(text)[:1] == ["ssh-passwordless-missing"]
    assert "ssh-port-unreachable" not in _ranked(text)


def test_a_failed_passwordless_probe_is_a_key_problem_unless_ssh_says_otherwise(
    node: Node,
) -> None:
    (node.root / "authorized_keys").write_text("")
    probe = f"ssh -o PasswordAuthentication=no -p {node.port} 127.0.0.1 hostname"
    assert _ranked(_launcher_probe(node, probe, hide_ssh=True))[:1] == ["ssh-passwordless-missing"]
    node.port = _free_port()
    probe = f"ssh -o PasswordAuthentication=no -p {node.port} 127.0.0.1 hostname"
    shown = _launcher_probe(node, probe, hide_ssh=False)
    assert "Connection refused" in shown
    assert _ranked(shown)[:1] == ["ssh-port-unreachable"]
    assert "ssh-passwordless-missing" not in _ranked(shown)


def test_a_remote_command_missing_on_the_node_is_a_launch_failure(node: Node) -> None:
    env = {"PATH": node.path, "HOME": str(node.root), "LANG": "C"}
    missing = node.root / "conda" / "bin" / "python3"
    proc = subprocess.run(
        ["ssh", "-v", "-p", str(node.port), "127.0.0.1", str(missing), "train.py"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert proc.returncode == 127
    text = "Launching horovodrun task function was not successful:\n" + proc.stderr
    assert _ranked(text)[:1] == ["mpi-launch-failure"]
