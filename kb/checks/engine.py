"""Running a plan on many hosts at once: a bounded pool, live events, cancellation.

Each host gets one worker for its whole job: connect once, then run its commands as
lanes on that one connection (the rule checks in one batch, the survey beside it, the
node-to-node probes beside that).  Workers are daemon threads pulling hosts from a
queue, so hundreds of hosts need only `parallel` threads, and a resolver or a node
that never answers can never keep the process alive.  Events are delivered on the
calling thread, in the order results arrive.  Cancelling (the `cancel` Event, or
Ctrl-C while `run_checks` waits) stops starting hosts, closes the live connections
(which stops the commands on the nodes) and reports the rest as `skipped`.

Every host has a budget: a total deadline for its whole job (connecting included).  When
it is spent, what still runs there is stopped and the rest is `unavailable: host budget
spent`, so one bad node can never hold the run.  Checks on one host that need the same
tool share one probe (`kb.runners.probes`): a hung `nvidia-smi` costs one timeout, not
one per check.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from kb.checks import convert
from kb.checks.model import Event, HostEvent, HostResult, RunReport
from kb.checks.options import RunOptions
from kb.checks.pairs import Peer
from kb.checks.plan import Task
from kb.runners.base import CommandResult, Runner, Unreachable
from kb.runners.hosts import Target

DRAIN_SECONDS = 5.0  # after a cancel, how long to wait for workers to report what finished


def run_checks(
    targets: list[Target],
    tasks: list[Task],
    make_runner: Callable[[Target], Runner],
    options: RunOptions | None = None,
    on_event: Callable[[Event], None] | None = None,
    cancel: threading.Event | None = None,
) -> RunReport:
    """Run `tasks` on every target; block until done, calling `on_event` as results come."""
    options = options or RunOptions()
    cancel = cancel or threading.Event()
    peers = [
        Peer(i, t.label, t.user, t.hostname, options.job_port or t.port)
        for i, t in enumerate(targets)
    ]
    jobs = [convert.plan_host(i, t, tasks, peers, options) for i, t in enumerate(targets)]
    report = RunReport([HostResult(t.label, port=t.port) for t in targets])
    pool = _Pool(make_runner, report, cancel, options)
    todo: queue.Queue[int] = queue.Queue()
    for i in range(len(targets)):
        todo.put(i)
    for n in range(max(1, min(options.parallel, len(targets)))):
        threading.Thread(
            target=pool.worker, args=(todo, jobs, targets), daemon=True, name=f"check-worker-{n}"
        ).start()
    _wait(pool, len(targets), on_event, cancel, report)
    for job in jobs:
        convert.fill_missing(job, report, "cancelled" if report.interrupted else "not run")
    labels = [t.label for t in targets]
    for matrix in (report.matrix, report.ping):
        rows = {
            src: {dst: row[dst] for dst in labels if dst in row}
            for src in labels
            if (row := matrix.get(src)) is not None
        }
        matrix.clear()
        matrix.update(rows)
    return report


def _wait(
    pool: _Pool,
    count: int,
    on_event: Callable[[Event], None] | None,
    cancel: threading.Event,
    report: RunReport,
) -> None:
    """Deliver events until every host reported; on cancel, drain briefly, then give up."""
    finished, deadline = 0, None
    while finished < count:
        try:
            if cancel.is_set() and deadline is None:
                deadline = time.monotonic() + DRAIN_SECONDS
                report.interrupted = True
                pool.cancel_all()
            if deadline is not None and time.monotonic() > deadline:
                return
            try:
                item = pool.events.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                finished += 1
            elif on_event is not None:
                on_event(item)
        except KeyboardInterrupt:
            if deadline is not None:
                return  # a second Ctrl-C: stop waiting
            cancel.set()


class _Pool:
    def __init__(
        self,
        make_runner: Callable[[Target], Runner],
        report: RunReport,
        cancel: threading.Event,
        options: RunOptions,
    ) -> None:
        self.options = options
        self.make_runner = make_runner
        self.report = report
        self.cancel = cancel
        self.events: queue.Queue[Event | None] = queue.Queue()
        self.lock = threading.Lock()
        self.active: set[Runner] = set()

    def cancel_all(self) -> None:
        with self.lock:
            runners = list(self.active)
        for runner in runners:
            runner.cancel()

    def emit(self, event: Event) -> None:
        self.events.put(event)

    def worker(
        self, todo: queue.Queue[int], jobs: list[convert.HostJob], targets: list[Target]
    ) -> None:
        while True:
            try:
                index = todo.get_nowait()
            except queue.Empty:
                return
            try:
                self._host(jobs[index], targets[index])
            except Exception as exc:  # a bug must not hang the run: report it on the host
                host = self.report.hosts[index]
                host.ok, host.error = False, f"internal error: {type(exc).__name__}: {exc}"
            finally:
                self.events.put(None)

    def _host(self, job: convert.HostJob, target: Target) -> None:
        host = self.report.hosts[job.index]
        if self.cancel.is_set():
            self.emit(HostEvent(host.host, "skipped", "cancelled"))
            return
        for event in convert.start(job, self.report):
            self.emit(event)
        budget = self.options.budget_for(job.longest())
        deadline = time.monotonic() + budget
        runner = self.make_runner(target)
        runner.limit(deadline, budget)
        with self.lock:
            self.active.add(runner)
        try:
            self.emit(HostEvent(host.host, "connecting", f"{target.hostname}:{target.port}"))
            try:
                runner.connect()
            except Unreachable as exc:
                self._unreachable(job, host, exc)
                return
            host.address = runner.address or target.hostname
            self.emit(HostEvent(host.host, "connected", host.address or ""))
            self._run(job, runner)
            self.emit(HostEvent(host.host, "done"))
        finally:
            with self.lock:
                self.active.discard(runner)
            runner.close()

    def _unreachable(self, job: convert.HostJob, host: HostResult, exc: Unreachable) -> None:
        if exc.kind == "cancelled":
            self.emit(HostEvent(host.host, "skipped", "cancelled"))
            return
        host.ok, host.error, host.error_kind = False, str(exc), exc.kind
        convert.fill_missing(job, self.report, f"host unreachable: {exc}")
        self.emit(HostEvent(host.host, "unreachable", str(exc)))

    def _run(self, job: convert.HostJob, runner: Runner) -> None:
        def done(lane: int, index: int, result: CommandResult) -> None:
            for event in convert.record(job, self.report, lane, index, result):
                self.emit(event)

        runner.run_lanes(job.lanes(), done, job.needs())
