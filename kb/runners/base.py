"""The runner interface: run one shell command somewhere, with a timeout and an output cap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

OUTPUT_CAP = 1_000_000  # bytes of stdout kept per command; the rest is dropped and said so


@dataclass
class CommandResult:
    """What came back from one command.

    `exit_code` is None when the command could not complete (`error` says why:
    timeout, connection lost, ...). `truncated` is True when output passed the cap.
    """

    command: str
    stdout: str
    stderr: str
    exit_code: int | None
    seconds: float
    error: str | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0


class Runner(Protocol):
    """Something that runs shell commands on one host."""

    name: str  # the host as the user named it ("local" for this machine)

    def run(self, command: str, timeout: float) -> CommandResult:
        """Run `command` through `sh -c`; never raise for command failures."""
        ...

    def close(self) -> None: ...
