"""The hosts a check can run on, behind the one `kb.runners.Runner` interface.

Why it exists: the walk offers "run this check here or on my nodes"; the screens should
not care whether a runner is this machine or a node over SSH. `Hosts` always holds this
machine; `add` connects nodes written as `[user@]name[:port]` (Slurm ranges such as
`gpu[01-04]` expand) through `kb.runners.ssh`, with `~/.ssh/config` applied as `ssh`
would. Passwords are never asked for here: keys or the SSH agent must let us in. No
Textual here.
"""

from __future__ import annotations

import contextlib
import getpass
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.runners.base import Runner
from kb.runners.local import LocalRunner

LOCAL = "local"
ALL = "all hosts"


@dataclass
class Hosts:
    """Runners by the name the user gave them; "local" is this machine."""

    runners: dict[str, Runner] = field(default_factory=lambda: {LOCAL: LocalRunner()})
    selected: str = LOCAL  # a runner's name, or ALL
    accept_new_host_keys: bool = False
    ssh_config: Path | None = None  # None: ~/.ssh/config when it exists
    known_hosts: Path | None = None  # None: ~/.ssh/known_hosts
    identity_files: list[Path] = field(default_factory=list)  # tried before the defaults
    _targets: dict[str, Any] = field(default_factory=dict)
    _session: Any = None

    @property
    def names(self) -> list[str]:
        return list(self.runners)

    @property
    def choices(self) -> list[str]:
        return [*self.names, ALL] if len(self.runners) > 1 else self.names

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
            self._targets[target.label] = target
            self.runners[target.label] = self._ssh(target)
        return [t.label for t in found]

    def remove(self, name: str) -> None:
        if name == LOCAL or name not in self.runners:
            return
        with contextlib.suppress(Exception):
            self.runners.pop(name).close()
        self._targets.pop(name, None)
        if self.selected in (name, ALL) and len(self.runners) == 1:
            self.selected = LOCAL

    def _ssh(self, target: Any) -> Runner:
        from kb.runners.ssh import Session, SSHRunner
        from kb.runners.sshoptions import SSHOptions

        if self._session is None or (
            self._session.options.accept_new_host_keys != self.accept_new_host_keys
        ):
            options = SSHOptions(
                accept_new_host_keys=self.accept_new_host_keys,
                identity_files=list(self.identity_files),
            )
            if self.known_hosts is not None:
                options.known_hosts = self.known_hosts
            self._session = Session(options)
        return SSHRunner(target, self._session)

    def reconnect(self, name: str) -> None:
        """A new runner for `name` under the current options (the host-key trust setting is
        fixed when a runner's SSH session is made)."""
        if name == LOCAL or name not in self._targets:
            return
        with contextlib.suppress(Exception):
            self.runners[name].close()
        self.runners[name] = self._ssh(self._targets[name])

    def fresh(self, name: str) -> Runner:
        """A runner for one job: a cancelled runner stays cancelled, so each job gets its own
        (a local one is cheap; an SSH one reconnects)."""
        if name == LOCAL:
            return LocalRunner(LOCAL)
        runner = self.runners[name]
        if getattr(runner, "_cancelled", False):
            runner = self.runners[name] = self._ssh(self._targets[name])
        return runner

    def for_job(self) -> list[Runner]:
        """The runners the selected choice stands for."""
        names = self.names if self.selected == ALL else [self.selected]
        return [self.fresh(n) for n in names if n in self.runners]

    def test(self, name: str) -> str | None:
        """None when `name` answers `true`, else why not, in words."""
        result = self.fresh(name).run("true", 15)
        return None if result.ok else (result.error or f"exit status {result.exit_code}")

    def run_each(self, runners: list[Runner], job: Callable[[Runner], Any]) -> list[Any]:
        """`job(runner)` on every runner at once; results in the runners' order."""
        if len(runners) == 1:
            return [job(runners[0])]
        with ThreadPoolExecutor(max_workers=min(32, len(runners))) as pool:
            return list(pool.map(job, runners))

    def run_check(self, check: Any, params: dict[str, str], runners: list[Runner]) -> Any:
        """A check on every runner at once, as one record (`kb.walk.session.combine`)."""
        from kb.walk.session import combine, run_check

        return combine(self.run_each(runners, lambda r: run_check(check, r, params)))

    def where(self) -> str:
        """The selected choice in words, for labels."""
        if self.selected == LOCAL:
            return "here, on this machine"
        if self.selected == ALL:
            return f"on all {len(self.runners)} hosts"
        return f"on {self.selected}"

    def close(self) -> None:
        for runner in self.runners.values():
            with contextlib.suppress(Exception):  # best effort: a dead link is already closed
                runner.close()
        if self._session is not None:
            with contextlib.suppress(Exception):
                self._session.close()
