"""One host's job: the commands planned for it, and turning what came back into results.

Planning fills every placeholder for this host (and each peer), asks for confirmation of
any command that changes the machine (once per host, with the exact command), and sorts
what will run into lanes.  Recording turns a `CommandResult` into a `CheckResult` with
`kb.checks.evaluate.evaluate`, or a probe's output into matrix cells, and gives the events.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from kb.checks import pairs
from kb.checks.evaluate import evaluate
from kb.checks.model import CheckEvent, CheckResult, Event, HostEvent, PairEvent, RunReport
from kb.checks.options import RunOptions
from kb.checks.plan import Task, fill
from kb.runners.base import CommandResult, Job, Runner
from kb.runners.hosts import Target
from kb.runners.probes import Needs

SSH_PROBE, NET_PROBE, SURVEY = "ssh-to-peers", "ping-peers", "survey"


@dataclass
class Item:
    key: tuple[str, str | None]  # (check id, peer label)
    command: str
    timeout: float
    task: Task | None = None
    builtin: str | None = None
    peer: pairs.Peer | None = None
    needs: Needs = ()  # the programs it needs (a check's `requires`): one probe per tool


@dataclass
class HostJob:
    index: int
    label: str
    peers: list[pairs.Peer]
    lane_items: list[list[Item]] = field(default_factory=lambda: [[], [], []])
    planned: list[CheckResult] = field(default_factory=list)  # skipped before running
    order: list[tuple[str, str | None]] = field(default_factory=list)
    done: set[tuple[str, str | None]] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def lanes(self) -> list[list[Job]]:
        return [[(it.command, it.timeout) for it in lane] for lane in self.lane_items]

    def needs(self) -> list[list[Needs]]:
        return [[it.needs for it in lane] for lane in self.lane_items]

    def longest(self) -> float:
        """The longest single command's timeout (a default budget must fit it)."""
        return max((it.timeout for lane in self.lane_items for it in lane), default=0.0)


def plan_host(
    index: int, target: Target, tasks: list[Task], peers: list[pairs.Peer], options: RunOptions
) -> HostJob:
    others = pairs.rotated(peers, index)
    job = HostJob(index, target.label, others)
    port = str(options.job_port or target.port)
    for task in tasks:
        if task.scope == "node":
            _add(job, task, {"port": port, **options.params}, None, 0, options)
            continue
        if not others:
            job.order.append((task.id, None))
            job.planned.append(
                _skip(job, task, task.template, None, "needs another node: give two hosts or more")
            )
        for peer in others:
            values = {**options.params, "peer": peer.host, "port": str(peer.port)}
            _add(job, task, values, peer, 2, options)
    if options.survey:
        try:
            from kb.cluster.survey import DEFAULT_TIMEOUT, script

            tool = None if options.timeout is None else max(1, round(options.timeout))
            job.lane_items[1].append(
                Item((SURVEY, None), script(tool_timeout=tool), DEFAULT_TIMEOUT, builtin=SURVEY)
            )
        except ImportError:
            pass
    if options.pairs and others:
        job.lane_items[2][:0] = [
            Item((SSH_PROBE, None), pairs.ssh_probe(others), 60.0, builtin=SSH_PROBE),
            Item((NET_PROBE, None), pairs.net_probe(others), 60.0, builtin=NET_PROBE),
        ]
        job.order[:0] = [(SSH_PROBE, None), (NET_PROBE, None)]
    # A tool's first command is its probe: those needing several tools run last, so a
    # hung tool is recognised by a command that blames it alone.
    job.lane_items[0].sort(key=lambda it: len(it.needs) > 1)
    return job


def _add(
    job: HostJob,
    task: Task,
    values: dict[str, str],
    peer: pairs.Peer | None,
    lane: int,
    options: RunOptions,
) -> None:
    label = peer.label if peer else None
    job.order.append((task.id, label))
    try:
        command = fill(task, values)
    except KeyError as exc:
        name = exc.args[0]
        job.planned.append(
            _skip(
                job,
                task,
                task.template,
                label,
                f"needs a value for {{{name}}} (give --param {name}=VALUE)",
            )
        )
        return
    except ValueError as exc:
        job.planned.append(_skip(job, task, task.template, label, f"refused value: {exc}"))
        return
    if task.needs_confirmation:
        if options.confirm is None:
            why = "changes the machine: runs only when confirmed (not asked in --json mode)"
            job.planned.append(_skip(job, task, command, label, why))
            return
        if not options.confirm(job.label, command):
            job.planned.append(_skip(job, task, command, label, "not confirmed"))
            return
    timeout = task.timeout if options.timeout is None else options.timeout
    needs = tuple(task.check.requires) if task.check is not None else ()
    job.lane_items[lane].append(
        Item((task.id, label), command, timeout, task, peer=peer, needs=needs)
    )


def _skip(job: HostJob, task: Task, command: str, peer: str | None, why: str) -> CheckResult:
    return CheckResult(
        job.label,
        task.id,
        command,
        "skipped",
        cause=task.cause,
        reason=why,
        peer=peer,
        title=task.title,
    )


# ---------------------------------------------------------------- recording


def start(job: HostJob, report: RunReport) -> list[Event]:
    """The results known before running (skips); recorded when the host's turn comes."""
    host = report.hosts[job.index]
    with job.lock:
        fresh = [r for r in job.planned if (r.id, r.peer) not in job.done]
        job.done.update((r.id, r.peer) for r in fresh)
        host.checks += fresh
    return [CheckEvent(r) for r in fresh]


def record(
    job: HostJob, report: RunReport, lane: int, index: int, result: CommandResult
) -> list[Event]:
    item = job.lane_items[lane][index]
    host = report.hosts[job.index]
    with job.lock:
        if item.key in job.done:
            return []
        job.done.add(item.key)
        if item.builtin == SURVEY:
            host.survey = _survey_doc(job.label, result)
            return [HostEvent(job.label, "survey", result.error or "")]
        if item.builtin is not None:
            return _probe(job, report, item, result)
        assert item.task is not None
        check = to_check_result(job.label, item, result)
        host.checks.append(check)
        return [CheckEvent(check)]


def to_check_result(host: str, item: Item, result: CommandResult) -> CheckResult:
    task = item.task
    assert task is not None
    out = CheckResult(
        host,
        task.id,
        item.command,
        "error",
        _output(result),
        result.seconds,
        task.cause,
        peer=item.peer.label if item.peer else None,
        exit_code=result.exit_code,
        truncated=result.truncated,
        title=task.title,
    )
    if result.cancelled:
        out.status, out.reason = "skipped", "cancelled"
    elif result.unavailable:  # never asked: the host's budget was spent, or its tool hung
        out.status, out.reason = "unavailable", result.error or "not run"
    elif result.error is not None:
        out.reason = result.error
    elif task.check is None:  # a fix command: it worked or not
        out.status = "pass" if result.exit_code == 0 else "fail"
    else:
        verdict = evaluate(task.check, result.stdout, result.exit_code, result.stderr)
        out.status, out.finding, out.reason = verdict.status, verdict.finding, verdict.reason
        out.params = verdict.params
    return out


def _output(result: CommandResult) -> str:
    if result.stderr and result.stdout:
        return f"{result.stdout}{'' if result.stdout.endswith(chr(10)) else chr(10)}{result.stderr}"
    return result.stdout or result.stderr


def _probe(job: HostJob, report: RunReport, item: Item, result: CommandResult) -> list[Event]:
    host = report.hosts[job.index]
    kind = "ssh" if item.builtin == SSH_PROBE else "ping"
    cells: dict[str, str] | None
    tag = "PEER " if kind == "ssh" else "PING "
    partial = not result.cancelled and any(ln.startswith(tag) for ln in result.stdout.splitlines())
    gone = "unavailable" if result.unavailable else "error"  # not asked, or it failed
    if (result.error is not None or result.exit_code is None) and not partial:
        cells = dict.fromkeys((p.label for p in job.peers), "skipped" if result.cancelled else gone)
    elif kind == "ssh":  # a probe that ran out of time keeps the peers that answered
        cells = pairs.parse_ssh_probe(result.stdout, job.peers, _unanswered(result))
    else:
        interfaces, routes, cells = pairs.parse_net_probe(
            result.stdout, job.peers, _unanswered(result)
        )
        host.network = {"interfaces": interfaces, "routes": routes}
    tool = "ssh" if kind == "ssh" else "ping"
    shown = {
        "ssh": "ssh -o BatchMode=yes -o ConnectTimeout=5 -p {port} {user}@{peer} true",
        "ping": "ping -c 3 -i 0.2 -W 2 -s 10240 {peer}",
    }[kind]
    check = CheckResult(
        job.label,
        item.key[0],
        f"{shown}  (to each of {len(job.peers)} peers)",
        "pass",
        _output(result),
        result.seconds,
        title=f"{tool} to every other node",
    )
    if (result.error is not None or result.exit_code is None) and not partial:
        check.status = "skipped" if result.cancelled else gone
        check.reason = result.error or "no exit status"
    elif cells is None:
        check.status, check.reason = "unavailable", f"{tool} is not installed on this node"
    elif bad := {peer: s for peer, s in cells.items() if s != "ok"}:
        check.status = "fail"
        check.finding = ", ".join(f"{peer}: {s}" for peer, s in bad.items())
        if set(bad.values()) == {"error"} and len(bad) == len(cells):
            check.status, check.finding = "error", None  # the tool itself could not run
            check.reason = f"{tool} did not run: {_first_message(result.stdout, kind)}"
    row = cells if cells is not None else dict.fromkeys((p.label for p in job.peers), "unavailable")
    (report.matrix if kind == "ssh" else report.ping)[job.label] = row
    host.checks.append(check)
    events: list[Event] = [PairEvent(kind, job.label, peer, s) for peer, s in row.items()]
    return [*events, CheckEvent(check)]


def _unanswered(result: CommandResult) -> str:
    """The cell of a peer the probe printed nothing for: it ran out of time, or it erred."""
    return "timeout" if result.error is not None and "timed out" in result.error else "error"


def _first_message(output: str, kind: str) -> str:
    """The first peer's message in a probe's output (`PING 1 2 ping: ... not permitted`)."""
    tag = "PEER " if kind == "ssh" else "PING "
    for line in output.splitlines():
        if line.startswith(tag):
            parts = line.split(" ", 3)
            if len(parts) == 4 and parts[3].strip():
                return parts[3].strip()
    return "no message"


def _survey_doc(label: str, result: CommandResult) -> dict[str, Any]:
    from kb.cluster.survey import collect

    class Replay(Runner):  # hands the survey the output this job already fetched on the shared lane
        name = label

        def run(self, command: str, timeout: float) -> CommandResult:
            return result

    return collect(Replay())


def fill_missing(job: HostJob, report: RunReport, reason: str) -> None:
    """Everything planned but without a result becomes `skipped` (cancelled, unreachable)."""
    host = report.hosts[job.index]
    with job.lock:
        for r in job.planned:
            if (r.id, r.peer) not in job.done:
                job.done.add((r.id, r.peer))
                host.checks.append(r)
        for lane in job.lane_items:
            for item in lane:
                if item.key in job.done or item.builtin == SURVEY:
                    continue
                job.done.add(item.key)
                if item.builtin is not None:
                    matrix = report.matrix if item.builtin == SSH_PROBE else report.ping
                    matrix[job.label] = dict.fromkeys((p.label for p in job.peers), "skipped")
                    continue
                assert item.task is not None
                host.checks.append(
                    CheckResult(
                        job.label,
                        item.task.id,
                        item.command,
                        "skipped",
                        cause=item.task.cause,
                        reason=reason,
                        peer=item.peer.label if item.peer else None,
                        title=item.task.title,
                    )
                )
        rank = {key: i for i, key in enumerate(job.order)}
        host.checks.sort(key=lambda c: rank.get((c.id, c.peer), len(rank)))
