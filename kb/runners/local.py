"""Running checks on this machine, with the same contract as the SSH runner.

Output is read as it comes and capped while reading: a command that prints without end
(`yes`, a runaway log) on stdout or on stderr is stopped at the cap instead of filling
memory first or running on to its timeout.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time

from kb.runners.base import (
    OUTPUT_CAP,
    STDERR_CAP,
    CommandResult,
    Runner,
    cancelled_result,
    decode,
)


class LocalRunner(Runner):
    """Runs commands with `sh -c` in a new process group, so a timeout kills the whole tree."""

    def __init__(self, name: str = "local", env: dict[str, str] | None = None) -> None:
        self.name = name
        self.env = env
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self._cancelled = False

    def run(self, command: str, timeout: float) -> CommandResult:
        if self._cancelled:
            return cancelled_result(command)
        start = time.monotonic()
        env = {**os.environ, "LC_ALL": "C", **(self.env or {})}
        try:
            proc = subprocess.Popen(
                ["/bin/sh", "-c", command],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return CommandResult(
                command, "", "", None, 0.0, f"cannot start /bin/sh: {exc.strerror}"
            )
        with self._lock:
            self._running.add(proc)
        try:
            return self._collect(proc, command, timeout, start)
        finally:
            _kill_group(proc)
            proc.wait()
            with self._lock:
                self._running.discard(proc)

    def _collect(
        self, proc: subprocess.Popen[bytes], command: str, timeout: float, start: float
    ) -> CommandResult:
        out, err = bytearray(), bytearray()
        caps = {"out": OUTPUT_CAP, "err": STDERR_CAP}
        bufs = {"out": out, "err": err}
        truncated = False
        sel = selectors.DefaultSelector()
        assert proc.stdout is not None and proc.stderr is not None
        sel.register(proc.stdout, selectors.EVENT_READ, "out")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        deadline = start + timeout
        error: str | None = None
        try:
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    error = f"timed out after {timeout:g} s"
                    break
                for key, _ in sel.select(min(left, 0.5)):
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    buf, cap = bufs[key.data], caps[key.data]
                    buf += chunk[: max(0, cap + 1 - len(buf))]
                if len(out) > OUTPUT_CAP or len(err) > STDERR_CAP:
                    truncated = True
                    what, cap = (
                        ("output", OUTPUT_CAP) if len(out) > OUTPUT_CAP else ("stderr", STDERR_CAP)
                    )
                    error = (
                        f"{what} passed {cap // 1000} kB; the command was stopped and the "
                        f"first {cap // 1000} kB kept"
                    )
                    break
                if self._cancelled:
                    break
        finally:
            sel.close()
        if truncated or error or self._cancelled:
            _kill_group(proc)
        code = proc.wait()
        seconds = time.monotonic() - start
        if self._cancelled and error is None and not truncated and code < 0:
            return cancelled_result(command)
        return CommandResult(
            command,
            decode(bytes(out[:OUTPUT_CAP])),
            decode(bytes(err[:STDERR_CAP])),
            None if (error or truncated) else code,
            seconds,
            error,
            truncated,
            timed_out=error is not None and not truncated,
        )

    def cancel(self) -> None:
        self._cancelled = True
        with self._lock:
            running = list(self._running)
        for proc in running:
            _kill_group(proc)

    def close(self) -> None:
        return None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
