"""The runner interface: run shell commands somewhere, with a timeout and an output cap.

Checks, the cluster survey and the decision-tree walk only see this interface, so they
never care whether a command ran here or on a node over SSH.  `run_batch` exists because
over SSH every separate command pays for a remote shell (and the user's rc files): a
runner that can run several commands in one go should.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

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


class Runner(Protocol):
    """Something that runs shell commands on one host."""

    name: str  # the host as the user named it ("local" for this machine)

    def run(self, command: str, timeout: float) -> CommandResult:
        """Run `command` through `sh -c`; never raise for command failures."""
        ...

    def cancel(self) -> None:
        """Stop what runs now (from any thread); later results say `cancelled`."""
        ...

    def close(self) -> None: ...


class BatchRunner(Runner, Protocol):
    """A runner that can also run several commands in one go (both built-in runners can;
    `run_batch` below serves any other runner too)."""

    def run_batch(
        self, jobs: Sequence[Job], on_result: OnResult | None = None
    ) -> list[CommandResult]:
        """Run the commands in order, calling `on_result(index, result)` as each ends."""
        ...


def run_batch(
    runner: Runner, jobs: Sequence[Job], on_result: OnResult | None = None
) -> list[CommandResult]:
    """`runner.run_batch(...)` where the runner has it, else one `run` after the other."""
    batch = getattr(runner, "run_batch", None)
    if batch is not None:
        return list(batch(jobs, on_result))
    results = []
    for i, (command, timeout) in enumerate(jobs):
        results.append(runner.run(command, timeout))
        if on_result is not None:
            on_result(i, results[-1])
    return results


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
