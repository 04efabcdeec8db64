"""One rule check on the hosts a person picked: the engine's pool, one task, one verdict each.

Why it exists: the assistant's walk, its fix verification and the batch walk run one check
at a time, on this machine or on nodes. They go through the same `run_checks` as
`dlperf-help check`, so a check is filled, budgeted, cancelled, probed for its tools and
judged (`kb.checks.convert.to_check_result`) the same way everywhere. The values come
from the caller (a pair check's `{peer}` included), so every task is node-scoped here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kb.checks.engine import run_checks
from kb.checks.model import CheckResult
from kb.checks.options import RunOptions
from kb.checks.plan import Task
from kb.rules.schema.models import Check, text_of
from kb.runners.base import CheckNeeds, CommandResult, Runner
from kb.runners.hosts import Target

if TYPE_CHECKING:
    from kb.runners.ssh import Session
    from kb.runners.sshoptions import SSHOptions

LOCAL = "local"  # the target label of this machine


def local_target() -> Target:
    """This machine as a target: `host_runners` gives it a LocalRunner."""
    return Target(LOCAL, "", "localhost")


def host_runners(options: SSHOptions) -> tuple[Callable[[Target], Runner], Session]:
    """A runner factory for this machine (`local_target`) and nodes over SSH sharing one
    `Session` (close it when done): each run gets runners of its own."""
    from kb.checks import ssh_runners
    from kb.runners.local import LocalRunner

    over_ssh, session = ssh_runners(options)

    def make(target: Target) -> Runner:
        return LocalRunner(LOCAL) if target.label == LOCAL else over_ssh(target)

    return make, session


def check_task(check: Check) -> Task:
    """The check as the engine's task; node scope, since the caller gives every value."""
    return Task(
        check.id,
        text_of(check.title),
        check.run,
        check.read_only,
        check.timeout,
        "node",
        None,
        check,
        declared=check.params,
    )


def run_one(
    check: Check,
    targets: Sequence[Target],
    make_runner: Callable[[Target], Runner],
    params: dict[str, str],
    *,
    confirmed: bool = False,
    cancel: threading.Event | None = None,
) -> list[CheckResult]:
    """Run `check` on every target at once; one result per target, in order.

    `confirmed`: the person saw this exact command and said run it (a check that changes
    the machine is otherwise `skipped`). A node that cannot be reached is an `error`
    saying why (nothing ran), as a command that could not complete is."""
    options = RunOptions(
        parallel=max(1, len(targets)),
        pairs=False,
        params=dict(params),
        confirm=(lambda _host, _command: True) if confirmed else None,
    )
    report = run_checks(list(targets), [check_task(check)], make_runner, options, cancel=cancel)
    out = []
    for host in report.hosts:
        result = host.checks[0]
        if not host.ok and host.error_kind != "cancelled":
            result.status, result.reason = "error", host.error or "host unreachable"
        out.append(result)
    return out


class Borrowed(Runner):
    """A runner the caller keeps: the engine runs commands through it but never closes it
    (a recorded node's folder, a connection the caller reuses)."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.name = runner.name

    def run(self, command: str, timeout: float) -> CommandResult:
        return self.runner.run(command, timeout)

    def can_run(self, check: CheckNeeds) -> bool:
        return self.runner.can_run(check)

    def cancel(self) -> None:
        self.runner.cancel()

    def close(self) -> None:
        return None  # the caller's to close


def run_on_runner(
    check: Check,
    runner: Runner,
    params: dict[str, str],
    *,
    confirmed: bool = False,
    cancel: threading.Event | None = None,
) -> CheckResult:
    """`run_one` on a runner the caller holds (and closes): this machine, a recorded node."""
    target = Target(runner.name, "", runner.name)
    kept = Borrowed(runner)
    return run_one(check, [target], lambda _t: kept, params, confirmed=confirmed, cancel=cancel)[0]
