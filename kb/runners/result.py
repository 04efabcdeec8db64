"""What one command on a host comes back as, and the host that could not be reached.

Apart from the runner interface (`kb.runners.base`) so that the pieces runners share,
such as the tool probes, can use these without importing the runners.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

OUTPUT_CAP = 1_000_000  # bytes of stdout kept per command; past it the command is stopped
STDERR_CAP = 64_000  # bytes of stderr kept per command; the rest is dropped


@dataclass
class CommandResult:
    """What came back from one command.

    `exit_code` is None when the command could not complete (`error` says why:
    timeout, connection lost, cancelled, ...). `truncated` is True when stdout or stderr
    passed its cap: the command was stopped and only the first bytes were kept.
    `timed_out` says the client's deadline stopped it; `unavailable` that it was never
    asked (the host's budget was spent, or a tool it needs had already hung).
    """

    command: str
    stdout: str
    stderr: str
    exit_code: int | None
    seconds: float
    error: str | None = None
    truncated: bool = False
    cancelled: bool = False
    timed_out: bool = False
    unavailable: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0


class Unreachable(Exception):
    """A host the runner could not reach or log in to.

    `kind` is a stable word for programs (refused, timeout, dns, unreachable,
    unknown-host-key, changed-host-key, revoked-host-key, auth, protocol, cancelled);
    the message is for people.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


Job = tuple[str, float]  # (shell command, timeout in seconds)
OnResult = Callable[[int, CommandResult], None]
OnLaneResult = Callable[[int, int, CommandResult], None]  # (lane, index in lane, result)


def cancelled_result(command: str) -> CommandResult:
    return CommandResult(command, "", "", None, 0.0, "cancelled", cancelled=True)


def unavailable_result(command: str, why: str) -> CommandResult:
    """A command that was not run, and why (budget spent, a needed tool hung)."""
    return CommandResult(command, "", "", None, 0.0, why, unavailable=True)


def timed_out(
    command: str, stdout: str, stderr: str, seconds: float, limit: float
) -> CommandResult:
    return CommandResult(
        command, stdout, stderr, None, seconds, f"timed out after {limit:g} s", timed_out=True
    )


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")
