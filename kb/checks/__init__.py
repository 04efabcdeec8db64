"""Running the rules' checks on real nodes: which checks, on which hosts, all at once.

The API the CLI (`dlperf-help check`) and the TUI's hosts panel share:

    from kb.checks import RunOptions, plan, run_checks, ssh_runners
    tasks = plan.for_causes(kb, ["nccl-wrong-interface"])   # or for_symptoms, survey, for_fix
    make_runner, session = ssh_runners(SSHOptions(known_hosts=...))
    report = run_checks(targets, tasks, make_runner, RunOptions(parallel=64),
                        on_event=print, cancel=threading.Event())
    report.as_json()   # the `check --json` document

`on_event` receives `HostEvent`, `CheckEvent` and `PairEvent` objects on the calling
thread as results arrive; setting `cancel` stops the run and the rest is `skipped`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kb.checks import plan
from kb.checks.engine import run_checks
from kb.checks.model import (
    CheckEvent,
    CheckResult,
    Event,
    HostEvent,
    HostResult,
    PairEvent,
    RunReport,
)
from kb.checks.options import RunOptions
from kb.runners.base import Runner
from kb.runners.hosts import Target

if TYPE_CHECKING:
    from kb.runners.ssh import Session
    from kb.runners.sshoptions import SSHOptions

__all__ = [
    "CheckEvent",
    "CheckResult",
    "Event",
    "HostEvent",
    "HostResult",
    "PairEvent",
    "RunOptions",
    "RunReport",
    "local_runners",
    "plan",
    "run_checks",
    "ssh_runners",
]


def ssh_runners(options: SSHOptions) -> tuple[Callable[[Target], Runner], Session]:
    """A runner factory over SSH sharing one `Session` (close it when the run ends)."""
    from kb.runners.ssh import Session, SSHRunner

    session = Session(options)
    return (lambda target: SSHRunner(target, session)), session


def local_runners() -> Callable[[Target], Runner]:
    """A runner factory for this machine (each target label gets its own LocalRunner)."""
    from kb.runners.local import LocalRunner

    return lambda target: LocalRunner(target.label)
