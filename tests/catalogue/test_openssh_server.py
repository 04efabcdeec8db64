"""The OpenSSH server (sshd) in the catalogue, apart from the client: the reader takes the
daemon's, sshd_config's and the logins' log calls at every release tag with the level they
print at, and the lines users paste when sshd in a container will not start or refuses a
key match the entry sshd prints, with its class: a daemon that ends before it listens is
`ssh-port-unreachable`, a refused key or user `ssh-passwordless-missing`."""

from __future__ import annotations

import sys
from pathlib import Path

from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import check_pasted_lines, label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import csources  # noqa: E402


def test_the_level_is_the_one_sshd_prints_at() -> None:
    # shapes of sshd.c and auth.c (10.5p1)
    src = r"""
    for (i = 0; i < options.num_host_key_files; i++) {
        int ll = options.host_key_file_userprovided[i] ?
            SYSLOG_LEVEL_ERROR : SYSLOG_LEVEL_DEBUG1;
            do_log2_r(r, ll, "Unable to load host key \"%s\"",
                options.host_key_files[i]);
    }
    if (!sensitive_data.have_ssh2_key) {
        logit("sshd: no hostkeys available -- exiting.");
        exit(1);
    }
    logit("Received signal %d; terminating.", (int) received_sigterm);
    exit(0);
    int level = SYSLOG_LEVEL_VERBOSE;
        level = SYSLOG_LEVEL_INFO;
    do_log2(level, "%s %s%s%s for %s%.100s from %.200s port %d ssh2%s%s",
        authmsg, method);
        error_r(r, "Could not connect to agent \"%s\"", options.host_key_agent);
        ssh_packet_disconnect(ssh, "Too many authentication failures");
"""
    assert csources._read_sshd(src) == [
        ("error", 'Unable to load host key "%s"', {}),
        ("fatal", "sshd: no hostkeys available -- exiting.", {}),
        ("info", "Received signal %d; terminating.", {}),
        ("info", "%s %s%s%s for %s%.100s from %.200s port %d ssh2%s%s", {}),
        ("error", 'Could not connect to agent "%s"', {}),
        ("error", "Too many authentication failures", {}),
    ]


def test_sshd_is_catalogued_over_the_clients_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["openssh-server"].versions == libs["openssh"].versions == "7.2p1-10.5p1"
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == "openssh-server"]
    assert row["messages"] > 600
    assert row["classified"] == row["messages"]
    assert row["causes"] > 50
    files = {m.file for m in cat.by_library("openssh-server")}
    assert {"sshd.c", "sshd-session.c", "sshd-auth.c", "servconf.c", "auth2-pubkey.c"} <= files


def test_no_cause_of_sshd_is_a_text_the_client_prints_too(cat: Catalogue) -> None:
    # sshd_config's line errors share their texts with ~/.ssh/config's (readconf.c): a
    # cause there would name sshd's stopping on a client's configuration line
    client = {m.template for m in cat.by_library("openssh")}
    shared = [
        m.template for m in cat.by_library("openssh-server")
        if m.class_ == "cause" and m.template in client
    ]  # fmt: skip
    assert shared == []


# (a line as sshd prints it, the label of its most specific entry)
LINES = [
    ('Unable to load host key "/root/.ssh/id_rsa": bad permissions', "symptom/host-key-failure"),
    ("sshd: no hostkeys available -- exiting.", "cause/ssh-port-unreachable"),
    ("Missing privilege separation directory: /run/sshd", "cause/ssh-port-unreachable"),
    ("Bind to port 22 on 0.0.0.0 failed: Address already in use.", "symptom/bind-failure"),
    (
        "Authentication refused: bad ownership or modes for directory /root/.ssh",
        "cause/ssh-passwordless-missing",
    ),
    ("error: Could not load host key: /etc/ssh/ssh_host_ed25519_key", "symptom/host-key-failure"),
    ("sshd re-exec requires execution with an absolute path", "cause/ssh-port-unreachable"),
    ("Cannot bind any address.", "cause/ssh-port-unreachable"),
    ("User root not allowed because account is locked", "cause/ssh-passwordless-missing"),
    ("Invalid user ubuntu from 10.0.0.12 port 51234", "cause/ssh-passwordless-missing"),
    (
        "userauth_pubkey: signature algorithm ssh-rsa not in PubkeyAcceptedAlgorithms [preauth]",
        "cause/ssh-passwordless-missing",
    ),
    ("Server listening on 0.0.0.0 port 22.", "benign"),
]


def test_each_line_matches_the_entry_sshd_prints_with_its_class(cat: Catalogue) -> None:
    for line, label in LINES:
        assert label_of(cat, line, "openssh-server")[0] == label, line


def test_a_daemon_that_never_listens_is_the_ssh_port_pasted_alone() -> None:
    check_pasted_lines(
        [
            ("sshd: no hostkeys available -- exiting.", "cause/ssh-port-unreachable"),
            ("Missing privilege separation directory: /run/sshd", "cause/ssh-port-unreachable"),
            ("sshd re-exec requires execution with an absolute path", "cause/ssh-port-unreachable"),
            (
                "Authentication refused: bad ownership or modes for directory /root/.ssh",
                "cause/ssh-passwordless-missing",
            ),
        ]
    )
