"""Safety rules: host keys, confirmation before changes, quoting of log values, secrets."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from ssh_helpers import by_id, cli, run_on
from sshd_nodes import Cluster, keygen

from kb.checks import RunOptions
from kb.diagnosis.matching import run_signatures
from kb.rules.knowledge import KnowledgeBase
from kb.runners.sshoptions import SSHOptions

pytestmark = pytest.mark.ssh
MakeCluster = Callable[[int], Cluster]


def _ssh(cluster: Cluster, known: Path, accept_new: bool = False) -> SSHOptions:
    return SSHOptions(
        known_hosts=known,
        identity_files=[cluster.client_key],
        connect_timeout=5,
        accept_new_host_keys=accept_new,
    )


def test_unknown_host_key_is_refused_and_nothing_is_recorded(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    known = tmp_path / "known_hosts"
    report = run_on(cluster, rules, ["gpu-list"], ssh=_ssh(cluster, known))
    host = report.hosts[0]
    assert not host.ok and host.error_kind == "unknown-host-key"
    assert "--accept-new-host-keys" in (host.error or "") and "SHA256:" in (host.error or "")
    assert not known.exists()


def test_accept_new_records_the_key_like_openssh_and_later_runs_trust_it(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    known = tmp_path / "ssh" / "known_hosts"
    first = run_on(cluster, rules, ["gpu-list"], ssh=_ssh(cluster, known, accept_new=True))
    assert first.hosts[0].ok
    kind, blob = (node.root / "hostkey.pub").read_text().split()[:2]
    assert known.read_text() == f"[127.0.0.1]:{node.port} {kind} {blob}\n"
    assert oct(known.stat().st_mode & 0o777) == "0o600"
    again = run_on(cluster, rules, ["gpu-list"], ssh=_ssh(cluster, known))
    assert again.hosts[0].ok and by_id(again)["gpu-list"].status == "pass"


def test_changed_host_key_is_refused_with_a_warning_even_with_accept_new(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    impostor = keygen(tmp_path / "old_hostkey")
    kind, blob = Path(f"{impostor}.pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{node.port} {kind} {blob}\n")
    before = known.read_text()
    report = run_on(cluster, rules, ["gpu-list"], ssh=_ssh(cluster, known, accept_new=True))
    host = report.hosts[0]
    assert not host.ok and host.error_kind == "changed-host-key"
    assert "WARNING" in (host.error or "") and "CHANGED" in (host.error or "")
    assert by_id(report)["gpu-list"].status == "skipped"
    assert known.read_text() == before


def test_hashed_known_hosts_entries_are_understood(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    known = tmp_path / "known_hosts"
    known.write_text(cluster.known_hosts.read_text())
    subprocess.run(["ssh-keygen", "-H", "-f", str(known)], check=True, capture_output=True)
    assert "|1|" in known.read_text()
    assert run_on(cluster, rules, ["gpu-list"], ssh=_ssh(cluster, known)).hosts[0].ok


def test_in_json_mode_checks_and_fixes_that_change_the_machine_are_skipped(
    make_cluster: MakeCluster, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    marker = tmp_path / "written"
    proc = cli(
        "--host",
        cluster.nodes[0].spec,
        "-i",
        str(cluster.client_key),
        "--known-hosts",
        str(cluster.known_hosts),
        "--check",
        "write-marker",
        "--fix",
        "touch-marker",
        "--param",
        f"marker={marker}",
        "--json",
    )
    checks = {c["id"]: c for c in json.loads(proc.stdout)["hosts"][0]["checks"]}
    for changer in ("write-marker", "touch-marker#1"):
        assert checks[changer]["status"] == "skipped"
        assert "confirmed" in checks[changer]["reason"]
    assert checks["gpu-list"]["status"] == "pass"  # the fix's verifying check still runs
    assert not marker.exists()


def test_changes_run_only_where_the_user_confirmed_the_exact_command(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(2)
    marker = tmp_path / "written"
    asked: list[tuple[str, str]] = []

    def confirm(host: str, command: str) -> bool:
        asked.append((host, command))
        return host == cluster.nodes[0].spec

    options = RunOptions(pairs=False, params={"marker": str(marker)}, confirm=confirm)
    report = run_on(cluster, rules, ["write-marker"], options=options)
    assert asked == [(n.spec, f"touch {marker}") for n in cluster.nodes]
    assert by_id(report, 0)["write-marker"].status == "pass" and marker.exists()
    refused = by_id(report, 1)["write-marker"]
    assert (refused.status, refused.reason) == ("skipped", "not confirmed")


def _hostile_log(where: Path) -> str:
    m = [where / f"pwned{i}" for i in range(4)]
    return (
        f"NCCL WARN Connect to 10.0.0.1;touch${{IFS}}{m[0]} said "
        f"$(touch${{IFS}}{m[1]})`touch${{IFS}}{m[2]}`;touch${{IFS}}{m[3]} failed"
    )


def test_values_from_a_log_cannot_run_anything_on_the_node(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    [found] = run_signatures(rules.causes["log-values"].signatures, [_hostile_log(tmp_path)])
    assert "$(" in found.params["message"] and ";" in found.params["address"]
    report = run_on(
        cluster,
        rules,
        ["echo-message", "echo-address"],
        options=RunOptions(pairs=False, params=found.params),
    )
    echoed = by_id(report)["echo-message"]
    assert echoed.status == "pass" and echoed.output == found.params["message"] + "\n"
    refused = by_id(report)["echo-address"]
    assert refused.status == "skipped" and "not a host name" in refused.reason
    assert list(tmp_path.glob("pwned*")) == []


def test_values_from_a_diagnosis_file_are_quoted_by_the_cli_too(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    [found] = run_signatures(rules.causes["log-values"].signatures, [_hostile_log(tmp_path)])
    diagnosis = tmp_path / "diagnosis.json"
    diagnosis.write_text(json.dumps({"causes": [{"id": "log-values", "params": found.params}]}))
    login = [
        "--host",
        cluster.nodes[0].spec,
        "-i",
        str(cluster.client_key),
        "--known-hosts",
        str(cluster.known_hosts),
    ]
    proc = cli(*login, "--from-diagnosis", str(diagnosis), "--json")
    # the address its kind refuses stops the run in one line, exit 2: nothing runs with it
    assert proc.returncode == 2 and proc.stdout == ""
    [line] = proc.stderr.strip().splitlines()
    assert "is not a host name" in line and str(diagnosis) in line
    assert list(tmp_path.glob("pwned*")) == []
    # free text (the message) is accepted, and reaches the node as one inert word
    message = {"message": found.params["message"]}
    diagnosis.write_text(json.dumps({"causes": [{"id": "log-values", "params": message}]}))
    proc = cli(*login, "--check", "echo-message", "--from-diagnosis", str(diagnosis), "--json")
    checks = {c["id"]: c for c in json.loads(proc.stdout)["hosts"][0]["checks"]}
    assert checks["echo-message"]["output"] == found.params["message"] + "\n"
    assert list(tmp_path.glob("pwned*")) == []


def test_key_passphrase_is_asked_once_for_all_hosts_and_never_shown(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(2)
    secret = "correct horse 42"
    key = keygen(tmp_path / "locked_key", passphrase=secret)
    for node in cluster.nodes:
        (node.root / "authorized_keys").write_text(Path(f"{key}.pub").read_text())
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return secret

    ssh = SSHOptions(known_hosts=cluster.known_hosts, identity_files=[key], ask_secret=ask)
    report = run_on(cluster, rules, ["gpu-list"], ssh=ssh)
    assert [h.ok for h in report.hosts] == [True, True]
    assert prompts == [f"Enter passphrase for key '{key}': "]
    assert secret not in json.dumps(report.as_json())


def test_without_a_terminal_an_encrypted_key_is_not_asked_for_and_says_why(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    key = keygen(tmp_path / "locked_key", passphrase="s3cret")
    (cluster.nodes[0].root / "authorized_keys").write_text(Path(f"{key}.pub").read_text())
    ssh = SSHOptions(known_hosts=cluster.known_hosts, identity_files=[key], use_agent=False)
    host = run_on(cluster, rules, ["gpu-list"], ssh=ssh).hosts[0]
    assert host.error_kind == "auth" and "needs a passphrase" in (host.error or "")


def test_a_node_known_by_its_rsa_key_is_asked_for_that_key_type(
    make_cluster: MakeCluster, rules: KnowledgeBase, tmp_path: Path
) -> None:
    cluster = make_cluster(1)
    node = cluster.nodes[0]
    rsa = node.root / "hostkey_rsa"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)],
        check=True,
        capture_output=True,
    )
    config = node.root / "sshd_config"
    config.write_text(config.read_text() + f"HostKey {rsa}\n")  # it now offers ed25519 and RSA
    node.kill()
    node.start()
    kind, blob = Path(f"{rsa}.pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{node.port} {kind} {blob}\n")
    report = run_on(cluster, rules, ["gpu-list"], ssh=_ssh(cluster, known))
    assert report.hosts[0].ok, report.hosts[0].error
