"""Running batches of commands over channels of one open SSH connection.

A lane is a list of commands run one after the other by one driver shell
(`kb.runners.batch`); several lanes run side by side on separate channels of the same
connection, all watched by one loop in the calling thread (no thread per channel).
When a command passes its timeout or the output cap, its channel is closed (which stops
it on the node) and the rest of its lane continues on a fresh channel.  When the
connection drops (sshd killed, node rebooted), every unfinished command says so.
"""

from __future__ import annotations

import selectors
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kb.runners.base import OUTPUT_CAP, CommandResult, Job, cancelled_result
from kb.runners.batch import (
    BatchParser,
    Finished,
    kill_tree_command,
    new_nonce,
    remote_command,
)

GRACE = 5.0  # seconds after the kill before giving up on a command and its channel
LaneCallback = Callable[[int, int, CommandResult], None]


@dataclass
class _Lane:
    number: int
    jobs: list[Job]
    results: dict[int, CommandResult] = field(default_factory=dict)
    offset: int = 0  # index of the first job the current channel runs
    chan: Any = None
    parser: BatchParser | None = None
    nonce: str = ""
    killed: dict[int, float] = field(default_factory=dict)  # job index -> when it was stopped

    @property
    def pending(self) -> bool:
        return len(self.results) < len(self.jobs)


def run_lanes(
    transport: Any,
    lanes: list[list[Job]],
    on_result: LaneCallback | None,
    cancelled: Callable[[], bool],
    open_timeout: float,
) -> list[list[CommandResult]]:
    states = [_Lane(i, list(jobs)) for i, jobs in enumerate(lanes)]
    sel = selectors.DefaultSelector()

    def record(lane: _Lane, index: int, result: CommandResult) -> None:
        if index in lane.results:
            return
        if result.exit_code is None and not result.truncated and cancelled():
            result = cancelled_result(result.command)  # cut short by cancel(), not a fault
        lane.results[index] = result
        if on_result is not None:
            on_result(lane.number, index, result)

    def close(lane: _Lane) -> None:
        if lane.chan is not None:
            sel.unregister(lane.chan)
            lane.chan.close()
            lane.chan = lane.parser = None

    def fail_all(message: str) -> None:
        for lane in states:
            close(lane)
            for i in range(len(lane.jobs)):
                cmd = lane.jobs[i][0]
                record(
                    lane,
                    i,
                    cancelled_result(cmd)
                    if message == "cancelled"
                    else CommandResult(cmd, "", "", None, 0.0, message),
                )

    try:
        while any(lane.pending for lane in states):
            if cancelled():
                fail_all("cancelled")
                break
            if not transport.is_active():
                fail_all("connection lost (the SSH server or the node went away)")
                break
            for lane in states:
                if lane.pending and lane.chan is None:
                    lane.offset = min(set(range(len(lane.jobs))) - set(lane.results))
                    sel.register(_start(transport, lane, open_timeout), selectors.EVENT_READ, lane)
            sel.select(0.2)
            now = time.monotonic()
            for lane in states:
                if lane.chan is not None:
                    _pump(lane, now, record, close, transport)
    except Exception as exc:  # paramiko raises SSHException/EOFError when the link dies
        fail_all(f"connection lost ({exc or type(exc).__name__})")
    finally:
        for lane in states:
            close(lane)
        sel.close()
    return [[lane.results[i] for i in range(len(lane.jobs))] for lane in states]


def _start(transport: Any, lane: _Lane, open_timeout: float) -> Any:
    jobs = lane.jobs[lane.offset :]
    lane.nonce = new_nonce()
    lane.parser = BatchParser(len(jobs), lane.nonce)
    chan = transport.open_session(timeout=open_timeout)
    chan.exec_command(remote_command(jobs, lane.nonce))
    chan.shutdown_write()
    lane.chan = chan
    return chan


def _pump(
    lane: _Lane,
    now: float,
    record: Callable[[_Lane, int, CommandResult], None],
    close: Callable[[_Lane], None],
    transport: Any,
) -> None:
    chan, parser = lane.chan, lane.parser
    assert parser is not None
    done: list[Finished] = []
    while chan.recv_ready():
        done += parser.feed_stdout(chan.recv(65536), now)
    while chan.recv_stderr_ready():
        done += parser.feed_stderr(chan.recv_stderr(65536))
    for fin in done:
        job = lane.offset + fin.index
        record(lane, job, _finished_result(lane, job, fin))
    current = parser.current
    if parser.overflow is not None:
        index, output = parser.overflow
        job = lane.offset + index
        command = lane.jobs[job][0]
        seconds = now - parser.started.get(index, now)
        record(
            lane,
            job,
            CommandResult(
                command,
                output.decode("utf-8", "replace"),
                parser.partial()[1],
                None,
                seconds,
                f"output passed {OUTPUT_CAP // 1000} kB; the command was stopped and the first "
                f"{OUTPUT_CAP // 1000} kB kept",
                truncated=True,
            ),
        )
        close(lane)
        return
    if current is not None and _overdue(lane, lane.offset + current, parser, now, transport):
        command, timeout = lane.jobs[lane.offset + current]
        out, err = parser.partial()
        seconds = now - parser.started[current]
        why = f"timed out after {timeout:g} s"
        record(lane, lane.offset + current, CommandResult(command, out, err, None, seconds, why))
        close(lane)
        return
    if (
        chan.exit_status_ready()
        and (chan.eof_received or chan.closed)
        and not (chan.recv_ready() or chan.recv_stderr_ready())
    ):
        status = chan.recv_exit_status()
        lost = not transport.is_active()
        for index in range(lane.offset, len(lane.jobs)):
            cmd = lane.jobs[index][0]
            if lost:
                why = "connection lost while it ran (the SSH server or the node went away)"
            else:
                why = f"the remote shell ended early (exit status {status})"
            record(lane, index, CommandResult(cmd, "", "", None, 0.0, why))
        close(lane)


def _overdue(lane: _Lane, job: int, parser: BatchParser, now: float, transport: Any) -> bool:
    """Stop a command past its timeout (kill its process tree on the node, on a second
    channel); True when even that did not end it and its channel must be given up."""
    timeout = lane.jobs[job][1]
    index = job - lane.offset
    if now - parser.started[index] <= timeout:
        return False
    if job not in lane.killed:
        lane.killed[job] = now
        pid = parser.pids.get(index)
        if pid is not None:
            try:
                chan = transport.open_session(timeout=GRACE)
                chan.exec_command(kill_tree_command(pid))
                chan.shutdown_write()  # it ends by itself; the transport reaps it
            except Exception:  # the connection is going away: the lane notices next round
                pass
        return False
    return now - lane.killed[job] > GRACE


def _finished_result(lane: _Lane, job: int, fin: Finished) -> CommandResult:
    command, timeout = lane.jobs[job]
    if job in lane.killed:
        return CommandResult(
            command, fin.stdout, fin.stderr, None, fin.seconds, f"timed out after {timeout:g} s"
        )
    return CommandResult(
        command, fin.stdout, fin.stderr, fin.exit_code, fin.seconds, None, fin.truncated
    )
