"""The hosts a check can run on: this machine and the nodes the user added.

Why it exists: the walk offers "run this check here or on my nodes"; the screens should
not care whether a host is this machine or a node over SSH. `Hosts` always holds this
machine; `add` reads nodes written as `[user@]name[:port]` (Slurm ranges such as
`gpu[01-04]` expand) through `kb.runners.hosts`, with `~/.ssh/config` applied as `ssh`
would. It holds targets and settings only: runners come from kb's factory
(`kb.checks.single.host_runners`) and checks run through kb's engine
(`kb.walk.session.run_check_on`). Passwords are never asked for here: keys or the SSH
agent must let us in. No Textual here.
"""

from __future__ import annotations

import contextlib
import getpass
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kb.checks.single import LOCAL, host_runners, local_target
from kb.runners.base import Runner
from kb.runners.hosts import Target

if TYPE_CHECKING:
    from kb.runners.ssh import Session

ALL = "all hosts"
__all__ = ["ALL", "LOCAL", "Hosts"]


@dataclass
class Hosts:
    """Targets by the name the user gave them; "local" is this machine."""

    targets: dict[str, Target] = field(default_factory=lambda: {LOCAL: local_target()})
    selected: str = LOCAL  # a target's name, or ALL
    accept_new_host_keys: bool = False
    ssh_config: Path | None = None  # None: ~/.ssh/config when it exists
    known_hosts: Path | None = None  # None: ~/.ssh/known_hosts
    identity_files: list[Path] = field(default_factory=list)  # tried before the defaults
    _factory: tuple[Callable[[Target], Runner], Session, bool] | None = None

    @property
    def names(self) -> list[str]:
        return list(self.targets)

    @property
    def choices(self) -> list[str]:
        return [*self.names, ALL] if len(self.targets) > 1 else self.names

    def select(self, name: str) -> None:
        if name not in self.choices:
            raise KeyError(name)
        self.selected = name

    def add(self, text: str) -> list[str]:
        """Add the nodes `text` names; raises `kb.util.errors.UserError` for a bad name."""
        from kb.runners.hosts import load_config, parse_host, targets

        specs = parse_host(text, "host")
        found = targets(specs, load_config(self.ssh_config), None, getpass.getuser())
        for target in found:
            self.targets[target.label] = target
        return [t.label for t in found]

    def remove(self, name: str) -> None:
        if name == LOCAL or name not in self.targets:
            return
        self.targets.pop(name)
        if self.selected in (name, ALL) and len(self.targets) == 1:
            self.selected = LOCAL

    def make_runner(self, target: Target) -> Runner:
        """A runner for one job (the engine closes it), under the current host-key setting."""
        if self._factory is None or self._factory[2] != self.accept_new_host_keys:
            from kb.runners.sshoptions import SSHOptions

            options = SSHOptions(
                accept_new_host_keys=self.accept_new_host_keys,
                identity_files=list(self.identity_files),
            )
            if self.known_hosts is not None:
                options.known_hosts = self.known_hosts
            self._close_session()
            make, session = host_runners(options)
            self._factory = (make, session, self.accept_new_host_keys)
        return self._factory[0](target)

    def for_job(self) -> list[Target]:
        """The targets the selected choice stands for."""
        names = self.names if self.selected == ALL else [self.selected]
        return [self.targets[n] for n in names if n in self.targets]

    def test(self, name: str) -> str | None:
        """None when `name` answers `true`, else why not, in words."""
        runner = self.make_runner(self.targets[name])
        try:
            result = runner.run("true", 15)
        finally:
            with contextlib.suppress(Exception):
                runner.close()
        return None if result.ok else (result.error or f"exit status {result.exit_code}")

    def where(self) -> str:
        """The selected choice in words, for labels."""
        if self.selected == LOCAL:
            return "here, on this machine"
        if self.selected == ALL:
            return f"on all {len(self.targets)} hosts"
        return f"on {self.selected}"

    def _close_session(self) -> None:
        if self._factory is not None:
            with contextlib.suppress(Exception):  # best effort: a dead link is already closed
                self._factory[1].close()
            self._factory = None

    def close(self) -> None:
        self._close_session()
