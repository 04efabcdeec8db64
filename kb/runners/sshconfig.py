"""An OpenSSH client config (`~/.ssh/config`, `-F`) read through paramiko, imported only
when a config is there to read; apart from the host list (`hosts`) so that parsing a
hostfile never loads paramiko, and below the runner, which imports the host list."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def load_ssh_config(path: Path) -> Callable[[str], dict[str, Any]]:
    """`Host` lookups in an OpenSSH client config file (aliases, HostName, Port, ...)."""
    import paramiko

    try:
        config = paramiko.SSHConfig.from_path(str(path))
    except OSError as exc:
        raise OSError(f"{path}: cannot read the SSH config ({exc.strerror})") from exc
    except Exception as exc:  # paramiko raises ConfigParseError and friends
        raise ValueError(f"{path}: cannot parse the SSH config ({exc})") from exc
    lookup: Callable[[str], dict[str, Any]] = config.lookup
    return lookup
