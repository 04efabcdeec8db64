"""The network side of an SSH connection, without paramiko: resolving, connecting, naming faults.

Each way a connection can fail gets a stable kind and a sentence a person understands
(`connection refused on gpu03:10001 (is sshd running on that port?)`), so one dead node
is reported as such while the others go on.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import ipaddress
import os
import socket
import threading
from pathlib import Path
from typing import Any

from kb.runners.base import Unreachable


class QuickAckSocket(socket.socket):
    """A TCP socket that acknowledges at once what it receives (Linux `TCP_QUICKACK`).

    sshd does not set TCP_NODELAY on sessions without a terminal, so when it writes
    two small packets in a row (after login: a global request, then the answer to our
    channel open) the second waits for our ACK of the first, and Linux delays that ACK
    up to 40 ms.  That stall cost 44 ms of the 100 ms a one-command login took here.
    The kernel leaves quick-ack mode by itself, so it is asked again before each read.
    """

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        with contextlib.suppress(OSError):
            self.setsockopt(socket.IPPROTO_TCP, QUICKACK, 1)
        return super().recv(bufsize, flags)


QUICKACK: int = getattr(socket, "TCP_QUICKACK", 0)  # Linux only
SOCKET = QuickAckSocket if QUICKACK else socket.socket


def resolve(host: str, port: int, timeout: float) -> list[tuple[Any, ...]]:
    """getaddrinfo with a deadline (a dead resolver must not hold a worker forever).

    An address needs no resolver, so it is converted here without a helper thread.
    """
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        flags = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
        try:
            return list(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=flags))
        except OSError as exc:
            raise Unreachable("unreachable", f"cannot use the address '{host}' ({exc})") from None
    box: list[Any] = []
    done = threading.Event()

    def work() -> None:
        try:
            box.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            box.append(exc)
        done.set()

    threading.Thread(target=work, daemon=True, name=f"dns-{host}").start()
    if not done.wait(timeout):
        raise Unreachable("dns", f"cannot resolve '{host}': no answer within {timeout:g} s")
    if isinstance(box[0], OSError):
        reason = getattr(box[0], "strerror", None) or str(box[0])
        raise Unreachable("dns", f"cannot resolve host name '{host}' ({reason})")
    return list(box[0])


def open_socket(host: str, port: int, timeout: float) -> socket.socket:
    """A connected TCP socket with TCP_NODELAY, or `Unreachable` saying why not."""
    where = f"{host}:{port}"
    last: Unreachable | None = None
    for family, kind, proto, _, addr in resolve(host, port, timeout):
        sock = SOCKET(family, kind, proto)
        sock.settimeout(timeout)
        try:
            sock.connect(addr)
        except OSError as exc:
            sock.close()
            last = connect_error(exc, where, timeout)
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(None)
        return sock
    raise last or Unreachable("dns", f"'{host}' has no address")


def connect_error(exc: OSError, where: str, timeout: float) -> Unreachable:
    if isinstance(exc, ConnectionRefusedError):
        return Unreachable(
            "refused", f"connection refused on {where} (is an SSH server running on that port?)"
        )
    if isinstance(exc, socket.timeout | TimeoutError):
        return Unreachable("timeout", f"timed out connecting to {where} after {timeout:g} s")
    if exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return Unreachable("unreachable", f"no route to {where} ({exc.strerror})")
    return Unreachable("unreachable", f"cannot connect to {where} ({exc.strerror or exc})")


def negotiation_error(exc: BaseException, where: str, timeout: float) -> Unreachable:
    """An SSH-level failure before authentication, in words."""
    text = str(exc)
    if "banner" in text.lower() or isinstance(exc, socket.timeout | TimeoutError):
        return Unreachable(
            "timeout",
            f"connected to {where} but no SSH server answered within {timeout:g} s "
            f"(timed out waiting for the SSH banner)",
        )
    if isinstance(exc, EOFError) or "closed" in text.lower() or not text:
        return Unreachable("protocol", f"{where} closed the connection during the SSH handshake")
    return Unreachable("protocol", f"SSH handshake with {where} failed ({text})")


def fingerprint(blob: bytes) -> str:
    """OpenSSH's SHA256 fingerprint of a host key's blob (what `ssh-keygen -lf` prints)."""
    digest = hashlib.sha256(blob).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def known_hosts_name(host: str, port: int) -> str:
    """How known_hosts names a host: `name` on port 22, `[name]:port` otherwise."""
    return host if port == 22 else f"[{host}]:{port}"


def append_known_host(path: Path, line: str) -> None:
    """Record a new host key like OpenSSH does: append, never rewrite the file."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a") as fh:
        fh.write(line + "\n")
