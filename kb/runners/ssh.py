"""Running checks on a user's node over SSH, with paramiko.

With `sshauth` (logging in), the only modules that import paramiko, and only when a
connection is made (the import costs about 0.2 s, which `dlperf-help diagnose` should
not pay).  One connection per host carries every check (a new channel costs ~3 ms; a new
connection a key exchange).  The socket has `TCP_NODELAY` (auth went from 49 to 6 ms)
and acknowledges at once (`sshnet.QuickAckSocket`: the first channel went from 44 to
3 ms); the key exchange and ciphers that cost the node least come first.  Host keys are
checked like OpenSSH's `StrictHostKeyChecking=yes`, or `accept-new` when the user asks,
against known_hosts read once per run (`knownhosts`); secrets are asked through a
callback and never kept or logged.

Every deadline is the client's: the per-command ones and the shell's start are kept by
`sshexec`'s loop; the host's budget (`limit`) is also backed by a timer that cuts the
connection outright, so nothing on the node (a server that never answers, a login that
stalls) can hold a host past it.  paramiko's own log (a 20-line traceback for a port
that accepts TCP and never speaks SSH) is silenced: each failure becomes one sentence.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kb.runners.base import (
    CommandResult,
    Job,
    OnLaneResult,
    OnResult,
    Runner,
    Unreachable,
    cancelled_result,
)
from kb.runners.hosts import Target
from kb.runners.knownhosts import KnownHosts
from kb.runners.probes import Needs
from kb.runners.sshauth import authenticate
from kb.runners.sshexec import KILL_WAIT, Limits, run_lanes
from kb.runners.sshnet import (
    append_known_host,
    fingerprint,
    known_hosts_name,
    negotiation_error,
    open_socket,
)
from kb.runners.sshoptions import SSHOptions

HARD_CUT = KILL_WAIT + 2.0  # seconds after a cancel or the budget before the link is cut


def quiet_paramiko() -> None:
    """Keep paramiko's log (tracebacks from its transport thread) off the user's terminal;
    our own errors say what failed in one line.  DLPERF_HELP_DEBUG=1 keeps it."""
    log = logging.getLogger("paramiko")
    if not os.environ.get("DLPERF_HELP_DEBUG") and not log.handlers:
        log.addHandler(logging.NullHandler())
        log.propagate = False


class Session:
    """State shared by every host of one run: known_hosts, loaded keys, jump hosts."""

    def __init__(self, options: SSHOptions) -> None:
        self.options = options
        self._lock = threading.Lock()
        self._known: KnownHosts | None = None
        self._keys: dict[Path, Any] = {}
        self._key_errors: dict[Path, str] = {}
        self._jumps: dict[tuple[str, str, int], SSHRunner] = {}

    # ---------------------------------------------------------------- host keys

    def verify_host_key(self, name: str, key: Any) -> None:
        """Refuse a changed or revoked key always, an unknown one unless accept-new (then
        record it)."""
        opts = self.options
        kind, blob = key.get_name(), key.asbytes()
        hosts = self._hosts()
        known = hosts.lookup(name)
        offered = f"{kind} {fingerprint(blob)}"
        if hosts.is_revoked(blob):
            raise Unreachable(
                "revoked-host-key",
                f"the host key of {name} ({offered}) is marked @revoked in known_hosts; refusing",
            )
        if kind in known:
            if blob in known[kind]:
                return
            raise Unreachable(
                "changed-host-key",
                f"WARNING: the host key of {name} has CHANGED (known_hosts: "
                f"{fingerprint(known[kind][0])}, offered: {offered}); someone may be "
                f"intercepting the connection, or the node was reinstalled. Refusing. If the "
                f"change is expected: ssh-keygen -R '{name}' -f {opts.known_hosts}",
            )
        if known:
            raise Unreachable(
                "changed-host-key",
                f"WARNING: {name} offered a {kind} key but {opts.known_hosts} "
                f"knows it by {', '.join(known)} only; refusing (possible impersonation)",
            )
        if not opts.accept_new_host_keys:
            raise Unreachable(
                "unknown-host-key",
                f"unknown host key for {name} ({offered}), not in {opts.known_hosts}; check "
                f"it, then rerun with --accept-new-host-keys to record it",
            )
        with self._lock:
            if blob not in hosts.lookup(name).get(kind, []):
                hosts.add(name, kind, blob)
                append_known_host(opts.known_hosts, f"{name} {kind} {key.get_base64()}")

    def known_key_types(self, name: str) -> list[str]:
        return list(self._hosts().lookup(name))

    def _hosts(self) -> KnownHosts:
        """known_hosts, read and indexed once per run."""
        with self._lock:
            if self._known is None:
                opts = self.options
                self._known = KnownHosts([opts.global_known_hosts, opts.known_hosts])
            return self._known

    # ---------------------------------------------------------------- private keys

    def key(self, path: Path) -> Any:
        """A private key, loaded once for all hosts (its passphrase asked once, then dropped)."""
        import paramiko

        with self._lock:
            if path in self._keys or path in self._key_errors:
                return self._keys.get(path)
            try:
                self._keys[path] = paramiko.PKey.from_path(str(path))
            except TypeError as exc:
                if "password" not in str(exc).lower():
                    self._key_errors[path] = f"{path}: {exc}"
                else:
                    self._unlock(path)
            except (OSError, ValueError, paramiko.SSHException) as exc:
                self._key_errors[path] = f"{path}: cannot load the key ({exc})"
            return self._keys.get(path)

    def _unlock(self, path: Path) -> None:
        import paramiko

        ask = self.options.ask_secret
        if ask is None:
            self._key_errors[path] = f"{path} needs a passphrase (not asked in batch/--json mode)"
            return
        for _ in range(3):
            secret = ask(f"Enter passphrase for key '{path}': ")
            if not secret:
                break
            try:
                self._keys[path] = paramiko.PKey.from_path(str(path), secret.encode())
                return
            except (TypeError, ValueError, paramiko.SSHException):
                continue
        self._key_errors[path] = f"{path}: wrong or no passphrase"

    def key_error(self, path: Path) -> str | None:
        return self._key_errors.get(path)

    # ---------------------------------------------------------------- jump hosts

    def jump(self, target: Target) -> SSHRunner:
        """One shared, connected runner per jump host (many nodes behind one bastion)."""
        ident = (target.user, target.hostname, target.port)
        with self._lock:
            runner = self._jumps.get(ident)
            if runner is None:
                runner = self._jumps[ident] = SSHRunner(target, self)
        runner.connect()
        return runner

    def close(self) -> None:
        with self._lock:
            jumps, self._jumps = list(self._jumps.values()), {}
        for runner in jumps:
            runner.close()


class SSHRunner(Runner):
    """Runs commands on one node over one SSH connection, opened on first use."""

    def __init__(self, target: Target, session: Session) -> None:
        self.target = target
        self.name = target.label
        self.session = session
        self.address: str | None = None  # the IP actually connected to
        self._transport: Any = None
        self._sock: Any = None  # while connecting, so that cancel() can cut it
        self._lock = threading.Lock()
        self._cancelled = False
        self._running = False  # the lanes loop runs: it cleans up on cancel itself
        self._deadline: float | None = None  # time.monotonic() when the budget is spent
        self._budget: float | None = None
        self._expired = False
        self._timers: list[threading.Timer] = []

    def limit(self, deadline: float, budget: float) -> None:
        """Give this host a total deadline.  Still connecting then: the connection is cut
        at once; running commands: the lanes loop stops them, and the connection is cut
        a little later in case anything still blocks."""
        self._deadline, self._budget = deadline, budget
        self._after(max(0.0, deadline - time.monotonic()), self._on_deadline)

    def _on_deadline(self) -> None:
        if self._running:
            self._after(HARD_CUT, self._expire)
        else:
            self._expire()

    def _expire(self) -> None:
        self._expired = True
        self._cut()

    def _after(self, seconds: float, action: Callable[[], None]) -> None:
        timer = threading.Timer(seconds, action)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _cut(self) -> None:
        for link in (self._transport, self._sock):
            if link is not None:
                link.close()

    # ---------------------------------------------------------------- connecting

    def connect(self) -> None:
        """Open and authenticate the connection; raise `Unreachable` saying why not."""
        with self._lock:
            if self._transport is not None and self._transport.is_active():
                return
            if self._cancelled:
                raise Unreachable("cancelled", "cancelled")
            try:
                self._transport = self._open()
            except Exception as exc:  # Unreachable, or what a link cut under it raised
                if self._cancelled:  # cancel() cut the link: not a fault of the node
                    raise Unreachable("cancelled", "cancelled") from None
                if self._expired:
                    raise Unreachable(
                        "timeout",
                        f"host budget spent ({self._budget:g} s) while connecting ({exc})",
                    ) from None
                raise

    def _open(self) -> Any:
        import paramiko

        quiet_paramiko()
        t, opts = self.target, self.session.options
        where = f"{t.hostname}:{t.port}"
        sock = self._sock = self._socket()
        transport = None
        try:
            transport = paramiko.Transport(sock)
            transport.banner_timeout = transport.auth_timeout = opts.connect_timeout
            transport.handshake_timeout = opts.connect_timeout
            name = t.host_key_alias or known_hosts_name(t.hostname, t.port)
            _prefer_algorithms(transport, self.session.known_key_types(name))
            try:
                transport.start_client(timeout=opts.connect_timeout)
                if not (transport.is_active() and transport.initial_kex_done):
                    raise TimeoutError()  # start_client returns quietly on its timeout
                key = transport.get_remote_server_key()
            except (paramiko.SSHException, EOFError, OSError) as exc:
                raise negotiation_error(exc, where, opts.connect_timeout) from None
            self.session.verify_host_key(name, key)
            try:
                authenticate(transport, t, self.session)
            except (paramiko.SSHException, EOFError, OSError) as exc:  # the link died
                raise negotiation_error(exc, where, opts.connect_timeout) from None
            return transport
        except BaseException:
            if transport is not None:
                transport.close()
            sock.close()
            raise

    def _socket(self) -> Any:
        import paramiko

        t, opts = self.target, self.session.options
        if t.proxy_jump is not None:
            jump = self.session.jump(t.proxy_jump)
            try:
                chan = jump._transport.open_channel(
                    "direct-tcpip",
                    (t.hostname, t.port),
                    ("127.0.0.1", 0),
                    timeout=opts.connect_timeout,
                )
            except (paramiko.SSHException, EOFError, OSError) as exc:
                raise Unreachable(
                    "unreachable",
                    f"jump host {jump.name} could not reach {t.hostname}:{t.port} ({exc})",
                ) from None
            self.address = t.hostname
            return chan
        if t.proxy_command:
            self.address = t.hostname
            return paramiko.ProxyCommand(t.proxy_command)
        sock = open_socket(t.hostname, t.port, opts.connect_timeout)
        self.address = str(sock.getpeername()[0])
        return sock

    # ---------------------------------------------------------------- running

    def run(self, command: str, timeout: float) -> CommandResult:
        return self.run_batch([(command, timeout)])[0]

    def run_batch(
        self, jobs: Sequence[Job], on_result: OnResult | None = None
    ) -> list[CommandResult]:
        return self.run_lanes([list(jobs)], None if on_result is None else _lane0(on_result))[0]

    def run_lanes(
        self,
        lanes: list[list[Job]],
        on_result: OnLaneResult | None = None,
        needs: list[list[Needs]] | None = None,
    ) -> list[list[CommandResult]]:
        """Run each lane's jobs in order, the lanes side by side on separate channels.

        `needs` gives the tools each job needs: jobs needing a tool that hung on this
        host are not run (`kb.runners.probes`)."""
        try:
            self.connect()
        except Unreachable as exc:
            results = [[_failed(cmd, str(exc), exc.kind) for cmd, _ in lane] for lane in lanes]
            if on_result is not None:
                for li, lane_results in enumerate(results):
                    for ji, result in enumerate(lane_results):
                        on_result(li, ji, result)
            return results
        limits = Limits(self.session.options.connect_timeout, self._deadline, self._budget, needs)
        self._running = True
        try:
            return run_lanes(self._transport, lanes, on_result, lambda: self._cancelled, limits)
        finally:
            self._running = False

    def cancel(self) -> None:
        """Stop from any thread.  While commands run, the lanes loop kills them on the node
        first (a closed connection alone leaves them running there); the link is cut
        outright a little later in case that loop is blocked."""
        self._cancelled = True
        if self._running:
            self._after(HARD_CUT, self._cut)
        else:
            self._cut()

    def close(self) -> None:
        for timer in self._timers:
            timer.cancel()
        with self._lock:
            transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()


# Cheapest first for the node, where the CPU is spent (measured on OpenSSH 9.2: its own
# curve25519 code costs the node ~5 ms more per login than OpenSSL's P-256), then
# paramiko's own order; AES-GCM needs one C call per packet instead of a cipher and a MAC.
PREFERRED_KEX = ("ecdh-sha2-nistp256", "curve25519-sha256@libssh.org")
PREFERRED_CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr")
PREFERRED_MACS = ("hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com")


def _prefer(offered: Sequence[str], wanted: Sequence[str]) -> list[str]:
    first = [name for name in wanted if name in offered]
    return first + [name for name in offered if name not in first]


def _prefer_algorithms(transport: Any, known: list[str]) -> None:
    """Cheap algorithms first, and a host key type that known_hosts has, as OpenSSH does."""
    options = transport.get_security_options()
    options.kex = _prefer(options.kex, PREFERRED_KEX)
    options.ciphers = _prefer(options.ciphers, PREFERRED_CIPHERS)
    options.digests = _prefer(options.digests, PREFERRED_MACS)
    wanted: list[str] = []
    for name in known:
        wanted += ["rsa-sha2-512", "rsa-sha2-256"] if name == "ssh-rsa" else [name]
    options.key_types = _prefer(options.key_types, wanted)


def _lane0(on_result: OnResult) -> Callable[[int, int, CommandResult], None]:
    return lambda _lane, index, result: on_result(index, result)


def _failed(command: str, message: str, kind: str) -> CommandResult:
    if kind == "cancelled":
        return cancelled_result(command)
    return CommandResult(command, "", "", None, 0.0, message)
