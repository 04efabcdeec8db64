"""What every SSH connection of a run shares (trust, credentials, limits), apart from the
runner, so that logging in (`sshauth`) can name it without importing the runner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

AskSecret = Callable[[str], "str | None"]  # prompt -> answer (None: do not ask / gave up)


@dataclass
class SSHOptions:
    """What every connection of a run shares: trust, credentials, limits."""

    known_hosts: Path = field(default_factory=lambda: Path.home() / ".ssh" / "known_hosts")
    global_known_hosts: Path | None = Path("/etc/ssh/ssh_known_hosts")  # read, never written
    accept_new_host_keys: bool = False
    identity_files: list[Path] = field(default_factory=list)  # -i, tried first
    connect_timeout: float = 10.0
    ask_secret: AskSecret | None = None  # None: never prompt (BatchMode, --json)
    use_agent: bool = True
