"""Logging in to a node: keys first (-i, IdentityFile, the agent, the usual files), then a
password only where the user can be asked.  Secrets go through `Session`'s callback and
are never kept or logged.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Protocol

from kb.runners.base import Unreachable
from kb.runners.hosts import Target
from kb.runners.sshoptions import SSHOptions


class Session(Protocol):
    """What logging in needs of the run's SSH session (`kb.runners.ssh.Session`)."""

    options: SSHOptions

    def key(self, path: Path) -> Any: ...

    def key_error(self, path: Path) -> str | None: ...


DEFAULT_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")


def authenticate(transport: Any, target: Target, session: Session) -> None:
    """Keys (-i, IdentityFile, agent, defaults), then a prompted password if allowed.

    Keys are offered straight away, without the customary "none" request first: that
    request is one more round trip through sshd's privilege-separation monitor (10 ms
    here) and is only needed to learn the accepted methods when no key worked.
    """
    import paramiko

    user, tried, opts = target.user, [], session.options
    allowed: list[str] | None = None
    for key, label in _candidate_keys(target, session):
        tried.append(label)
        try:
            transport.auth_publickey(user, key)
        except paramiko.BadAuthenticationType as exc:  # the server takes no keys at all
            allowed = list(exc.allowed_types)
            break
        except paramiko.AuthenticationException:
            continue
        if transport.is_authenticated():
            return
    if allowed is None:
        try:
            transport.auth_none(user)  # also tells which methods the server accepts
            return
        except paramiko.BadAuthenticationType as exc:
            allowed = list(exc.allowed_types)
        except paramiko.SSHException:
            allowed = ["publickey"]
    ask = opts.ask_secret
    if ask is not None and "password" in allowed:
        tried.append("password")
        secret = ask(f"{user}@{target.hostname}'s password: ")
        if secret:
            with contextlib.suppress(paramiko.AuthenticationException):
                transport.auth_password(user, secret)
            if transport.is_authenticated():
                return
    problems = [e for p in identity_paths(target, session) if (e := session.key_error(p))]
    hint = f"; {'; '.join(problems)}" if problems else ""
    raise Unreachable(
        "auth",
        f"authentication failed for {user}@{target.hostname}:{target.port} (tried: "
        f"{', '.join(tried) or 'no keys found'}; the server accepts: {', '.join(allowed)}){hint}",
    )


def identity_paths(target: Target, session: Session) -> list[Path]:
    paths = [*session.options.identity_files, *target.identity_files]
    if not paths:
        ssh_dir = Path.home() / ".ssh"
        paths = [ssh_dir / n for n in DEFAULT_KEYS if (ssh_dir / n).is_file()]
    return list(dict.fromkeys(paths))


def _candidate_keys(target: Target, session: Session) -> list[tuple[Any, str]]:
    import paramiko

    keys = []
    for path in identity_paths(target, session):
        key = session.key(path)
        if key is not None:
            keys.append((key, str(path)))
    if session.options.use_agent and not target.identities_only and os.environ.get("SSH_AUTH_SOCK"):
        with contextlib.suppress(paramiko.SSHException):
            keys += [(k, "agent key") for k in paramiko.Agent().get_keys()]
    return keys
