"""known_hosts, read once per run and indexed, so a look-up does not scan the whole file.

paramiko's `HostKeys.lookup` walks every entry for every look-up and, for hashed entries
(`HashKnownHosts yes`, the default on Debian and Ubuntu), computes an HMAC per entry each
time: checking N nodes against a file of M entries cost N x M HMACs, twice per node.
Here plain names go into a dict, hashed entries are tried once per name and the answer
is kept, and `@revoked` lines are honoured as OpenSSH does.  Lines that cannot be parsed
are skipped, as OpenSSH skips them.  Keys are kept as (type, blob): comparing the blob
the server offered is all verification needs, so this module needs no paramiko.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import threading
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path

Keys = dict[str, list[bytes]]  # key type (ssh-ed25519, ssh-rsa, ...) -> blobs of that type


class KnownHosts:
    """The host keys of known_hosts files, by host name (`name` or `[name]:port`)."""

    def __init__(self, paths: Iterable[Path | None] = ()) -> None:
        self._lock = threading.Lock()
        self._plain: dict[str, Keys] = {}
        self._hashed: list[tuple[bytes, bytes, str, bytes]] = []  # salt, HMAC of name, type, blob
        self._patterns: list[tuple[list[str], str, bytes]] = []  # `*`/`?`/`!` patterns, type, blob
        self._revoked: set[bytes] = set()
        self._cache: dict[str, Keys] = {}
        for path in paths:
            if path is not None and path.is_file():
                self._load(path)

    def _load(self, path: Path) -> None:
        for raw in path.read_text(errors="replace").splitlines():
            fields = raw.split()
            if not fields or fields[0].startswith("#"):
                continue
            marker = fields.pop(0) if fields[0].startswith("@") else None
            if len(fields) < 3:
                continue
            names, kind, data = fields[:3]
            try:
                blob = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                continue  # OpenSSH skips lines it cannot read, too
            if marker == "@revoked":
                self._revoked.add(blob)
            elif marker is None:
                self._add_names(names.split(","), kind, blob)

    def _add_names(self, names: list[str], kind: str, blob: bytes) -> None:
        if any(n.startswith("!") or "*" in n or "?" in n for n in names):
            self._patterns.append((names, kind, blob))
            return
        for name in names:
            if name.startswith("|1|"):
                salt, _, digest = name[3:].partition("|")
                try:
                    self._hashed.append(
                        (base64.b64decode(salt), base64.b64decode(digest), kind, blob)
                    )
                except (binascii.Error, ValueError):
                    continue
            else:
                self._plain.setdefault(name, {}).setdefault(kind, []).append(blob)

    def lookup(self, name: str) -> Keys:
        """Every key known for `name`, by type (empty: the host is not known)."""
        with self._lock:
            found = self._cache.get(name)
            if found is None:
                found = self._cache[name] = self._find(name)
            return found

    def _find(self, name: str) -> Keys:
        found: Keys = {t: list(keys) for t, keys in self._plain.get(name, {}).items()}
        wanted = name.encode()
        for salt, digest, kind, blob in self._hashed:
            if hmac.compare_digest(hmac.new(salt, wanted, hashlib.sha1).digest(), digest):
                found.setdefault(kind, []).append(blob)
        for patterns, kind, blob in self._patterns:
            if _matches(name, patterns):
                found.setdefault(kind, []).append(blob)
        return found

    def is_revoked(self, blob: bytes) -> bool:
        return blob in self._revoked

    def add(self, name: str, kind: str, blob: bytes) -> None:
        with self._lock:
            self._plain.setdefault(name, {}).setdefault(kind, []).append(blob)
            self._cache.pop(name, None)


def _matches(name: str, patterns: list[str]) -> bool:
    """OpenSSH's host pattern lists: some pattern matches and no `!pattern` does."""
    hit = False
    for pattern in patterns:
        if pattern.startswith("!"):
            if fnmatchcase(name, pattern[1:]):
                return False
        elif fnmatchcase(name, pattern):
            hit = True
    return hit
