"""known_hosts as OpenSSH reads it: plain and hashed names, patterns, @revoked, bad lines."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from pathlib import Path

import pytest

from kb.runners.base import Unreachable
from kb.runners.knownhosts import KnownHosts
from kb.runners.ssh import Session
from kb.runners.sshoptions import SSHOptions


class FakeKey:
    """What the SSH runner reads from a server's host key."""

    def __init__(self, kind: str, blob: bytes) -> None:
        self.kind, self.blob = kind, blob

    def get_name(self) -> str:
        return self.kind

    def asbytes(self) -> bytes:
        return self.blob

    def get_base64(self) -> str:
        return base64.b64encode(self.blob).decode()


A, B, C = (FakeKey("ssh-ed25519", os.urandom(51)) for _ in range(3))
RSA = FakeKey("ssh-rsa", os.urandom(279))


def line(names: str, key: FakeKey) -> str:
    return f"{names} {key.get_name()} {key.get_base64()}\n"


def hashed(name: str) -> str:
    salt = os.urandom(20)
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


def test_plain_hashed_and_pattern_entries_are_found_and_bad_lines_skipped(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(
        "# a comment\n\n"
        + line("gpu01,10.0.0.11", A)
        + line(hashed("[10.0.0.12]:10001"), B)
        + "gpu03 ssh-ed25519 !!not-base64!!\n"
        + "half a line\n"
        + line("gpu*,!gpu13", C)
        + line("gpu01", RSA)
    )
    hosts = KnownHosts([known, tmp_path / "missing"])
    assert hosts.lookup("gpu01") == {"ssh-ed25519": [A.blob, C.blob], "ssh-rsa": [RSA.blob]}
    assert hosts.lookup("10.0.0.11") == {"ssh-ed25519": [A.blob]}
    assert hosts.lookup("[10.0.0.12]:10001") == {"ssh-ed25519": [B.blob]}
    assert hosts.lookup("10.0.0.12") == {}  # the port is part of the hashed name
    assert hosts.lookup("gpu07") == {"ssh-ed25519": [C.blob]}
    assert hosts.lookup("gpu13") == {}  # negated
    assert hosts.lookup("gpu03") == {"ssh-ed25519": [C.blob]}  # its own line was unreadable


def _session(tmp_path: Path, text: str, accept_new: bool = False) -> tuple[Session, Path]:
    known = tmp_path / "known_hosts"
    known.write_text(text)
    options = SSHOptions(
        known_hosts=known, global_known_hosts=None, accept_new_host_keys=accept_new
    )
    return Session(options), known


def test_any_listed_key_of_the_offered_type_is_accepted(tmp_path: Path) -> None:
    session, _ = _session(tmp_path, line("gpu01", A) + line("gpu01", B))  # key rotation
    session.verify_host_key("gpu01", A)
    session.verify_host_key("gpu01", B)
    with pytest.raises(Unreachable) as err:
        session.verify_host_key("gpu01", C)
    assert err.value.kind == "changed-host-key" and "CHANGED" in str(err.value)


def test_a_revoked_key_is_refused_even_with_accept_new(tmp_path: Path) -> None:
    session, known = _session(tmp_path, "@revoked * " + line("", A).strip() + "\n", True)
    before = known.read_text()
    with pytest.raises(Unreachable) as err:
        session.verify_host_key("gpu01", A)
    assert err.value.kind == "revoked-host-key" and "@revoked" in str(err.value)
    assert known.read_text() == before


def test_accept_new_records_a_key_once_and_trusts_it_afterwards(tmp_path: Path) -> None:
    session, known = _session(tmp_path, line("gpu02", B), accept_new=True)
    session.verify_host_key("[gpu01]:2222", A)
    session.verify_host_key("[gpu01]:2222", A)
    assert known.read_text() == line("gpu02", B) + line("[gpu01]:2222", A)
    assert session.known_key_types("[gpu01]:2222") == ["ssh-ed25519"]
    assert KnownHosts([known]).lookup("[gpu01]:2222") == {"ssh-ed25519": [A.blob]}
