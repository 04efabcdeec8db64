"""Running checks on this machine, with the same contract as the SSH runner."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from kb.runners.base import OUTPUT_CAP, CommandResult


class LocalRunner:
    """Runs commands with `sh -c` in a new process group, so a timeout kills the whole tree."""

    def __init__(self, name: str = "local", env: dict[str, str] | None = None) -> None:
        self.name = name
        self.env = env

    def run(self, command: str, timeout: float) -> CommandResult:
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
            return CommandResult(command, "", "", None, 0.0, f"cannot start /bin/sh: {exc.strerror}")
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            return CommandResult(command, _text(out)[0], _text(err)[0], None,
                                 time.monotonic() - start, f"timed out after {timeout:g} s")
        except BaseException:
            _kill_group(proc)
            raise
        stdout, truncated = _text(out)
        return CommandResult(command, stdout, _text(err)[0], proc.returncode,
                             time.monotonic() - start, None, truncated)

    def close(self) -> None:
        return None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _text(data: bytes | None) -> tuple[str, bool]:
    data = data or b""
    truncated = len(data) > OUTPUT_CAP
    return data[:OUTPUT_CAP].decode("utf-8", "replace"), truncated
