"""Running batches of commands over channels of one open SSH connection.

A lane is a list of commands run one after the other by one driver shell
(`kb.runners.batch`); several lanes run side by side on separate channels of the same
connection, all watched by one loop in the calling thread (no thread per channel).
When a command passes its timeout it is killed on the node (with everything it started)
and its lane goes on in the same shell; when it passes the output cap it is killed too and
the rest of its lane continues on a fresh channel.  When the connection drops (sshd
killed, node rebooted), what had already arrived is kept and every unfinished command
says so.

A channel is always closed through `release`: paramiko's reader thread writes a wake-up
byte into the channel's pipe whenever data arrives, and `Channel.close()` closes that
pipe without the buffer's lock, so closing a channel that is still receiving (a flood)
could make the reader thread write into a closed or already reused descriptor, which
killed the whole connection (EBADF/EPIPE) and lost the host's remaining checks.
"""

from __future__ import annotations

import contextlib
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
READ_BUDGET = 1 << 20  # bytes read from one stream of one channel per round of the loop
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


class _Quiet:
    """An event that ignores set/clear: what a released channel's buffers signal into."""

    def set(self) -> None:
        return None

    def clear(self) -> None:
        return None

    def is_set(self) -> bool:
        return False


def release(chan: Any) -> None:
    """Close a channel whose pipe a selector watched, without racing paramiko's reader.

    `set_event` takes each buffer's lock, so once it returns no wake-up write is in
    flight and none will come: closing the pipe is then safe whatever still arrives.
    """
    for buffer in (chan.in_buffer, chan.in_stderr_buffer):
        buffer.set_event(_Quiet())
    chan.close()


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
            chan, lane.chan, lane.parser = lane.chan, None, None
            with contextlib.suppress(KeyError, ValueError):
                sel.unregister(chan)
            release(chan)

    def fail_all(message: str) -> None:
        for lane in states:
            close(lane)
            for i, (cmd, _) in enumerate(lane.jobs):
                gone = cancelled_result(cmd) if message == "cancelled" else None
                record(lane, i, gone or CommandResult(cmd, "", "", None, 0.0, message))

    def pump_all() -> None:
        now = time.monotonic()
        for lane in states:
            if lane.chan is not None:
                _pump(lane, now, record, close, transport)

    try:
        while any(lane.pending for lane in states):
            if cancelled():
                fail_all("cancelled")
                break
            for lane in states:
                if lane.pending and lane.chan is None:
                    lane.offset = min(set(range(len(lane.jobs))) - set(lane.results))
                    chan = _start(transport, lane, open_timeout)
                    sel.register(chan, selectors.EVENT_READ, lane)
            sel.select(0.2)
            alive = transport.is_active()  # read before pumping: nothing arrives once dead
            pump_all()
            if not alive:
                fail_all("connection lost (the SSH server or the node went away)")
                break
    except Exception as exc:  # paramiko raises SSHException/EOFError when the link dies
        with contextlib.suppress(Exception):
            pump_all()  # keep what already arrived
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
    try:
        chan.exec_command(remote_command(jobs, lane.nonce))
        chan.shutdown_write()
    except BaseException:
        chan.close()  # no pipe yet: nothing to race
        raise
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
    budget = READ_BUDGET  # a flooding command must not keep this loop (and other lanes) busy
    while budget > 0 and parser.overflow is None and chan.recv_ready():
        data = chan.recv(65536)
        budget -= len(data)
        done += parser.feed_stdout(data, now)
    budget = READ_BUDGET
    while budget > 0 and chan.recv_stderr_ready():
        data = chan.recv_stderr(65536)
        budget -= len(data)
        done += parser.feed_stderr(data)
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
        _kill(transport, parser, index)  # closing alone stops only a command that writes
        close(lane)  # the rest of the lane goes on in a fresh shell
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


def _kill(transport: Any, parser: BatchParser, index: int) -> bool:
    """Kill command `index` of this channel and its process tree on the node, from a second
    channel; False when its PID has not been announced yet."""
    pid = parser.pids.get(index)
    if pid is None:
        return False
    try:
        chan = transport.open_session(timeout=GRACE)
        chan.exec_command(kill_tree_command(pid))
        chan.shutdown_write()  # it ends by itself; the transport reaps it
    except Exception:  # the connection is going away: the lane notices next round
        pass
    return True


def _overdue(lane: _Lane, job: int, parser: BatchParser, now: float, transport: Any) -> bool:
    """Stop a command past its timeout (kill its process tree on the node); True when even
    that did not end it within GRACE seconds and its channel must be given up."""
    index = job - lane.offset
    late = now - parser.started[index] - lane.jobs[job][1]
    if late <= 0:
        return False
    if job not in lane.killed:
        if _kill(transport, parser, index):
            lane.killed[job] = now
            return False
        return late > GRACE  # its PID line is still on the way (a busy node): wait for it
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
