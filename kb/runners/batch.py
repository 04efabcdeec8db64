"""Several commands in one remote shell, and reading their outputs apart again.

Over SSH every exec starts the user's login shell, which reads its rc files (often
100 ms or more: conda, pyenv, module systems).  Running a host's checks in one exec
pays that once.  The driver is plain POSIX sh: each command runs in its own subshell,
with stdin from /dev/null, between begin/end markers that carry a random nonce on both
stdout and stderr; the subshell's PID is announced so that a command past its timeout
can be killed on the node, with everything it started.  `BatchParser` splits the two streams
back into per-command results as bytes arrive, and says when a command's stdout or
stderr passes its cap so the caller can stop it (endless stderr must not run to the
timeout either).
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from kb.runners.base import OUTPUT_CAP, STDERR_CAP, Job, decode


def new_nonce() -> str:
    return "DLPH" + secrets.token_hex(8)


def driver_script(jobs: Sequence[Job], nonce: str) -> str:
    """The sh program that runs `jobs` one after the other between markers.

    Each command runs as a background subshell (one fork, and for a simple command the
    subshell itself execs it: `timeout` per command cost 4 ms more on a busy node) whose
    PID goes to stderr, so the client can stop a command that passes its timeout with
    `kill_tree_command` on a second channel.  A command's end marker and the next one's
    begin marker go out in one write per stream: every write is an SSH packet that
    sshd encrypts and the client decrypts and wakes up for (3 writes a command, not 5).
    """
    n = nonce
    lines = ["LC_ALL=C; export LC_ALL"]
    if jobs:
        lines.append(f"printf '%s B 0\\n' {n}; printf '%s B 0\\n' {n} >&2")
    for i, (command, _) in enumerate(jobs):
        more = i + 1 < len(jobs)
        then, then_arg = (f"%s B {i + 1}\\n", f" {n}") if more else ("", "")
        lines += [
            f"( eval {shlex.quote(command)} ) </dev/null &",
            f'printf \'\\n%s P {i} %s\\n\' {n} "$!" >&2; wait "$!"',
            f"printf '\\n%s E {i} %s\\n{then}' {n} \"$?\"{then_arg}; "
            f"printf '\\n%s E {i}\\n{then}' {n}{then_arg} >&2",
        ]
    return "\n".join(lines) + "\n"


def kill_tree_command(pid: int) -> str:
    """Stop a command and everything it started (no process groups without a terminal).

    Top down: each process is stopped, and only once /proc shows it stopped are its
    children listed (then stopped the same way), so none can fork a child the walk
    misses (`kill -STOP` only queues the signal; a process preempted in a fork stops
    after it).  Children are found by reading /proc/*/stat with the shell's `read`, one
    file at a time: awk was used before, and mawk (Debian's awk) gives up at the first
    file that vanished between the glob and the read, so on a busy node any process
    that exited meanwhile hid every child listed after it, and those outlived the kill.
    """
    return (
        '_w() { _n=0; while [ "$_n" -lt 400 ] && read -r _s < "/proc/$1/stat"; do '
        'case "${_s##*) }" in [TtZX]*) return 0;; esac; _n=$((_n + 1)); '
        '[ "$_n" -gt 200 ] && sleep 0.01; done 2>/dev/null; }; '
        '_c() { _p=$1; for _f in /proc/[0-9]*/stat; do { read -r _s < "$_f"; } 2>/dev/null '
        '|| continue; _r=${_s##*) }; _r=${_r#* }; [ "${_r%% *}" = "$_p" ] && echo "${_s%% *}"; '
        "done; }; "
        '_k() { kill -STOP "$1" 2>/dev/null; _w "$1"; for _x in $(_c "$1"); do _k "$_x"; done; '
        'kill -KILL "$1" 2>/dev/null; }; '
        f"_k {int(pid)}"
    )


def remote_command(jobs: Sequence[Job], nonce: str) -> str:
    """What to send as the SSH exec request: whatever the login shell, run the driver in sh."""
    return "exec /bin/sh -c " + shlex.quote(driver_script(jobs, nonce))


@dataclass
class Finished:
    index: int
    stdout: str
    stderr: str
    exit_code: int
    seconds: float
    truncated: bool = False


@dataclass
class _Stream:
    """One of stdout/stderr: the bytes of the command now running, found between markers."""

    nonce: bytes
    cap: int
    with_code: bool  # stdout's end marker carries the exit status
    index: int = 0
    inside: bool = False
    buf: bytearray = field(default_factory=bytearray)
    kept: bytearray = field(default_factory=bytearray)
    dropped: bool = False

    def begin(self) -> bytes:
        return b"%s B %d\n" % (self.nonce, self.index)

    def end(self) -> bytes:
        return b"\n%s E %d" % (self.nonce, self.index) + (b" " if self.with_code else b"\n")

    def _pid(self) -> int | None:
        """Take the `\\nNONCE P i PID\\n` line (stderr only) out of the output, if it came."""
        marker = b"\n%s P %d " % (self.nonce, self.index)
        pos = self.buf.find(marker)
        nl = self.buf.find(b"\n", pos + len(marker)) if pos >= 0 else -1
        if nl < 0:
            return None
        text = bytes(self.buf[pos + len(marker) : nl])
        del self.buf[pos : nl + 1]
        return int(text) if text.isdigit() else None

    def feed(self, data: bytes) -> list[tuple[str, int, bytes, int | None, bool]]:
        """Events (kind, index, output, exit code, output cut): begin, end, overflow."""
        self.buf += data
        events: list[tuple[str, int, bytes, int | None, bool]] = []
        while True:
            if not self.inside:
                pos = self.buf.find(self.begin())
                if pos < 0:
                    del self.buf[: max(0, len(self.buf) - len(self.begin()))]
                    return events
                del self.buf[: pos + len(self.begin())]
                self.inside = True
                events.append(("begin", self.index, b"", None, False))
            if not self.with_code and (pid := self._pid()) is not None:
                events.append(("pid", self.index, b"", pid, False))
            marker = self.end()
            pos = self.buf.find(marker)
            if pos < 0:
                self._spill(64)
                if len(self.kept) > self.cap:
                    events.append(
                        ("overflow", self.index, bytes(self.kept[: self.cap]), None, True)
                    )
                return events
            code: int | None = None
            rest = pos + len(marker)
            if self.with_code:
                nl = self.buf.find(b"\n", rest)
                if nl < 0:
                    self._spill(len(self.buf) - pos)
                    return events
                try:
                    code = int(self.buf[rest:nl])
                except ValueError:
                    code = 255
                rest = nl + 1
            self.kept += self.buf[:pos]
            del self.buf[:rest]
            cut = self.dropped or len(self.kept) > self.cap
            events.append(("end", self.index, bytes(self.kept[: self.cap]), code, cut))
            self.kept = bytearray()
            self.dropped = False
            self.inside = False
            self.index += 1

    def _spill(self, keep: int) -> None:
        """Move all but the last `keep` bytes (where a marker may be starting) to `kept`."""
        if len(self.buf) > keep:
            cut = len(self.buf) - keep
            room = max(0, self.cap + 1 - len(self.kept))
            self.kept += self.buf[: min(cut, room)]
            self.dropped = self.dropped or cut > room
            del self.buf[:cut]


class BatchParser:
    """Feeds stdout and stderr bytes of one driver run; yields what finished and started."""

    def __init__(self, count: int, nonce: str) -> None:
        key = nonce.encode()
        self.count = count
        self.out = _Stream(key, OUTPUT_CAP, with_code=True)
        self.err = _Stream(key, STDERR_CAP, with_code=False)
        self.started: dict[int, float] = {}
        self._ended: dict[int, tuple[bytes, int, float, bool]] = {}
        self._errs: dict[int, bytes] = {}
        self.overflow: tuple[int, bytes] | None = None  # stdout passed its cap
        self.err_overflow: int | None = None  # the command whose stderr passed its cap
        self.pids: dict[int, int] = {}  # command index -> PID of its subshell on the node
        self.done = 0  # commands fully finished (both streams)

    @property
    def current(self) -> int | None:
        """The command running now (begun on stdout, not ended), if any."""
        i = self.out.index
        return i if self.out.inside and i < self.count else None

    def feed_stdout(self, data: bytes, now: float) -> list[Finished]:
        if self.overflow is not None:  # the caller stops this run; do not copy the cap again
            return []
        for kind, i, output, code, cut in self.out.feed(data):
            if kind == "begin":
                self.started[i] = now
            elif kind == "end":
                assert code is not None
                self._ended[i] = (output, code, now - self.started.get(i, now), cut)
            elif kind == "overflow":
                self.overflow = (i, output)
        return self._collect()

    def feed_stderr(self, data: bytes) -> list[Finished]:
        for kind, i, output, pid, _ in self.err.feed(data):
            if kind == "end":
                self._errs[i] = output
            elif kind == "pid" and pid is not None:
                self.pids[i] = pid
            elif kind == "overflow" and self.err_overflow is None:
                self.err_overflow = i
        return self._collect()

    def _collect(self) -> list[Finished]:
        ready = []
        while self.done in self._ended and self.done in self._errs:
            out, code, seconds, cut = self._ended.pop(self.done)
            err = self._errs.pop(self.done)
            ready.append(Finished(self.done, decode(out), decode(err), code, seconds, cut))
            self.done += 1
        return ready

    def partial(self) -> tuple[str, str]:
        """Output so far of the command running now (for a result cut short)."""
        out = bytes((self.out.kept + self.out.buf)[:OUTPUT_CAP]) if self.out.inside else b""
        err = bytes((self.err.kept + self.err.buf)[:STDERR_CAP]) if self.err.inside else b""
        return decode(out), decode(err)
