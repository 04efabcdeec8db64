"""Running batches of commands over channels of one open SSH connection.

A lane is a list of commands run one after the other by one driver shell
(`kb.runners.batch`); several lanes run side by side on separate channels of the same
connection, all watched by one loop in the calling thread (no thread per channel).

Every deadline is the client's, kept by that loop: nothing on the node can hold it.
- A command past its timeout is killed on the node (with everything it started) and its
  lane goes on in the same shell; past the stdout or stderr cap it is killed too and the
  rest of its lane continues on a fresh channel.
- A login shell that never starts the driver (a ForceCommand such as `sleep 1000` or
  `cat /dev/zero`, a `~/.bashrc` stuck on a hung NFS mount or a slow conda init) is
  given `Limits.start` seconds; then its channel is closed (and sshd asked to kill the
  session's process group, which it does for ordinary logins) and the lane's commands say
  why.  An exec request the server never answers is cut by a timer after the same time.
- When the host's budget is spent, or the run is cancelled, the running commands are
  killed on the node (their PIDs are known), the kill is given `KILL_WAIT` seconds to
  land, and every unfinished command says why.
- Commands that need a tool that has already hung on this host are not run
  (`kb.runners.probes`).
When the connection drops (sshd killed, node rebooted), what had already arrived is kept
and every unfinished command says so.

A channel is always closed through `release`: paramiko's reader thread writes a wake-up
byte into the channel's pipe whenever data arrives, and `Channel.close()` closes that
pipe without the buffer's lock, so closing a channel that is still receiving (a flood)
could make the reader thread write into a closed or already reused descriptor, which
killed the whole connection (EBADF/EPIPE) and lost the host's remaining checks.
"""

from __future__ import annotations

import contextlib
import selectors
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kb.runners.base import (
    OUTPUT_CAP,
    STDERR_CAP,
    CommandResult,
    Job,
    cancelled_result,
    timed_out,
    unavailable_result,
)
from kb.runners.batch import (
    BatchParser,
    Finished,
    kill_tree_command,
    new_nonce,
    remote_command,
)
from kb.runners.probes import Needs, ToolProbes

GRACE = 5.0  # seconds after the kill before giving up on a command and its channel
KILL_WAIT = 2.0  # seconds the kill commands get to run on the node before the channels close
READ_BUDGET = 1 << 20  # bytes read from one stream of one channel per round of the loop
LaneCallback = Callable[[int, int, CommandResult], None]
NO_SHELL_HINT = "a ForceCommand on the node, or a login script such as ~/.bashrc that blocks?"


@dataclass
class Limits:
    """The client's deadlines for one host's lanes."""

    start: float = 10.0  # seconds a channel's shell may take to begin its first command
    deadline: float | None = None  # time.monotonic() when the host's budget is spent
    budget: float | None = None  # that budget, in seconds (for the message)
    needs: list[list[Needs]] | None = None  # per lane, per job: the tools it needs


@dataclass
class _Lane:
    number: int
    jobs: list[Job]
    needs: list[Needs]
    results: dict[int, CommandResult] = field(default_factory=dict)
    ran: list[int] = field(default_factory=list)  # job index of each command of the channel
    chan: Any = None
    parser: BatchParser | None = None
    nonce: str = ""
    opened: float = 0.0  # when the current channel was opened
    progress: float = 0.0  # when a command of the current channel last ran
    killed: dict[int, float] = field(default_factory=dict)  # job index -> when it was stopped

    @property
    def pending(self) -> bool:
        return len(self.results) < len(self.jobs)

    def job(self, index: int) -> int:
        """The job index of the channel's command `index`."""
        return self.ran[index]


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


def signal_session(chan: Any, name: str = "KILL") -> None:
    """Ask sshd to signal the channel's session (its whole process group).

    OpenSSH (8.1+) does so for ordinary sessions of ordinary users; it refuses a forced
    command, and a root login (no privilege separation after login).  Best effort: the
    kill by PID is what the client relies on.
    """
    from paramiko.common import cMSG_CHANNEL_REQUEST
    from paramiko.message import Message

    with contextlib.suppress(Exception):
        msg = Message()
        msg.add_byte(cMSG_CHANNEL_REQUEST)
        msg.add_int(chan.remote_chanid)
        msg.add_string("signal")
        msg.add_boolean(False)
        msg.add_string(name)
        chan.transport._send_user_message(msg)


class _NoExec(Exception):
    """The server never answered the exec request within the start limit."""


def run_lanes(
    transport: Any,
    lanes: list[list[Job]],
    on_result: LaneCallback | None,
    cancelled: Callable[[], bool],
    limits: Limits | float,
) -> list[list[CommandResult]]:
    if not isinstance(limits, Limits):
        limits = Limits(start=float(limits))
    needs = limits.needs or [[() for _ in lane] for lane in lanes]
    states = [_Lane(i, list(jobs), list(needs[i])) for i, jobs in enumerate(lanes)]
    sel = selectors.DefaultSelector()
    probes = ToolProbes()

    def record(lane: _Lane, index: int, result: CommandResult) -> None:
        if index in lane.results:
            return
        cut = result.truncated or result.unavailable
        if result.exit_code is None and not cut and cancelled():
            result = cancelled_result(result.command)  # cut short by cancel(), not a fault
        lane.results[index] = result
        if on_result is not None:
            on_result(lane.number, index, result)
        for tool in probes.note(lane.needs[index], result):
            for other in states:  # every command still to run that needs the hung tool
                for j, (cmd, _) in enumerate(other.jobs):
                    if j not in other.results and tool in other.needs[j]:
                        record(other, j, unavailable_result(cmd, probes.hung[tool]))

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

    def stop_all(why: str | None) -> None:
        """Kill what runs on the node, give the kills time to land, then close.

        `why` None: cancelled; otherwise the unfinished commands are unavailable for it.
        """
        now = time.monotonic()
        kills = []
        partial: dict[tuple[int, int], tuple[str, str, float]] = {}
        for lane in states:
            if lane.chan is None or lane.parser is None:
                continue
            parser = lane.parser
            current = parser.current
            if current is not None:
                out, err = parser.partial()
                started = parser.started.get(current, now)
                partial[(lane.number, lane.job(current))] = (out, err, now - started)
                kills.append(_kill(transport, parser, current, KILL_WAIT))
            signal_session(lane.chan)
        _await([k for k in kills if k is not None], KILL_WAIT)
        for lane in states:
            close(lane)
            for i, (cmd, _) in enumerate(lane.jobs):
                if why is None:
                    record(lane, i, cancelled_result(cmd))
                    continue
                out, err, secs = partial.get((lane.number, i), ("", "", 0.0))
                result = unavailable_result(cmd, why)
                result.stdout, result.stderr, result.seconds = out, err, secs
                if (lane.number, i) in partial:
                    result.error = f"{why} while it ran (stopped after {secs:.1f} s)"
                record(lane, i, result)

    def pump_all() -> None:
        now = time.monotonic()
        for lane in states:
            if lane.chan is not None:
                _pump(lane, now, record, close, transport, limits)

    try:
        while any(lane.pending for lane in states):
            if cancelled():
                stop_all(None)
                break
            left = None if limits.deadline is None else limits.deadline - time.monotonic()
            if left is not None and left <= 0:
                stop_all(f"host budget spent ({limits.budget or 0:g} s)")
                break
            for lane in states:
                if lane.pending and lane.chan is None:
                    try:
                        chan = _start(transport, lane, limits.start)
                    except _NoExec:
                        for i, (cmd, _) in enumerate(lane.jobs):
                            why = f"the node did not start the command within {limits.start:g} s"
                            record(lane, i, CommandResult(cmd, "", "", None, 0.0, why))
                        continue
                    sel.register(chan, selectors.EVENT_READ, lane)
            sel.select(0.2 if left is None else max(0.0, min(0.2, left)))
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


def _start(transport: Any, lane: _Lane, start_limit: float) -> Any:
    lane.ran = [i for i in range(len(lane.jobs)) if i not in lane.results]
    jobs = [lane.jobs[i] for i in lane.ran]
    lane.nonce = new_nonce()
    lane.parser = BatchParser(len(jobs), lane.nonce)
    chan = transport.open_session(timeout=start_limit)
    _exec(transport, chan, remote_command(jobs, lane.nonce), start_limit)
    lane.chan = chan
    lane.opened = lane.progress = time.monotonic()
    lane.killed = {}
    return chan


def _exec(transport: Any, chan: Any, command: str, seconds: float) -> None:
    """`exec_command` with a deadline: paramiko waits for the server's answer without one."""
    cut = threading.Timer(seconds, chan.close)
    cut.daemon = True
    cut.start()
    try:
        chan.exec_command(command)
        chan.shutdown_write()
    except BaseException:
        chan.close()  # no pipe yet: nothing to race
        if cut.finished.is_set() and transport.is_active():
            raise _NoExec() from None
        raise
    finally:
        cut.cancel()


def _pump(
    lane: _Lane,
    now: float,
    record: Callable[[_Lane, int, CommandResult], None],
    close: Callable[[_Lane], None],
    transport: Any,
    limits: Limits,
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
        job = lane.job(fin.index)
        record(lane, job, _finished_result(lane, job, fin))
    current = parser.current
    if done or current is not None:
        lane.progress = now
    if _overflowed(lane, parser, now, record, transport):
        close(lane)  # the rest of the lane goes on in a fresh shell
        return
    if current is not None:
        job = lane.job(current)
        if job in lane.results and job not in lane.killed:  # not to be run (its tool hung)
            if _kill(transport, parser, current) is not None:
                lane.killed[job] = now
        elif _overdue(lane, job, parser, now, transport):
            command, timeout = lane.jobs[job]
            out, err = parser.partial()
            seconds = now - parser.started[current]
            record(lane, job, timed_out(command, out, err, seconds, timeout))
            signal_session(chan)
            close(lane)
            return
    elif parser.out.index < parser.count and now - lane.progress > limits.start:
        first = not parser.started
        why = (
            f"the remote shell did not start the command within {limits.start:g} s "
            f"({NO_SHELL_HINT})"
            if first
            else f"the remote shell stopped answering for {limits.start:g} s between commands"
        )
        for index in lane.ran:
            record(lane, index, CommandResult(lane.jobs[index][0], "", "", None, 0.0, why))
        signal_session(chan)
        close(lane)
        return
    if (
        chan.exit_status_ready()
        and (chan.eof_received or chan.closed)
        and not (chan.recv_ready() or chan.recv_stderr_ready())
    ):
        status = chan.recv_exit_status()
        lost = not transport.is_active()
        for index in lane.ran:
            cmd = lane.jobs[index][0]
            if lost:
                why = "connection lost while it ran (the SSH server or the node went away)"
            else:
                why = f"the remote shell ended early (exit status {status})"
            record(lane, index, CommandResult(cmd, "", "", None, 0.0, why))
        close(lane)


def _overflowed(
    lane: _Lane,
    parser: BatchParser,
    now: float,
    record: Callable[[_Lane, int, CommandResult], None],
    transport: Any,
) -> bool:
    """Stop a command whose stdout or stderr passed its cap; True when it was."""
    if parser.overflow is not None:
        index, raw = parser.overflow
        out, err = raw.decode("utf-8", "replace"), parser.partial()[1]
        what, cap = "output", OUTPUT_CAP
    elif parser.err_overflow is not None and parser.err_overflow >= parser.done:
        index = parser.err_overflow
        out, err = parser.partial()
        what, cap = "stderr", STDERR_CAP
    else:
        return False
    job = lane.job(index)
    command = lane.jobs[job][0]
    seconds = now - parser.started.get(index, now)
    why = (
        f"{what} passed {cap // 1000} kB; the command was stopped and the first "
        f"{cap // 1000} kB kept"
    )
    record(lane, job, CommandResult(command, out, err, None, seconds, why, truncated=True))
    _kill(transport, parser, index)  # closing alone stops only a command that writes
    return True


def _kill(transport: Any, parser: BatchParser, index: int, wait: float = GRACE) -> Any:
    """Kill command `index` of this channel and its process tree on the node, from a second
    channel (returned, so a caller can wait for it); None when its PID has not been
    announced yet or the connection is going away."""
    pid = parser.pids.get(index)
    if pid is None:
        return None
    try:
        chan = transport.open_session(timeout=wait)
        _exec(transport, chan, kill_tree_command(pid), wait)  # it ends by itself
    except Exception:  # the connection is going away: the lane notices next round
        return None
    return chan


def _await(chans: list[Any], seconds: float) -> None:
    """Wait until the kill channels ended on the node (or `seconds` passed), then close them."""
    deadline = time.monotonic() + seconds
    while chans and time.monotonic() < deadline:
        if all(c.exit_status_ready() or c.closed for c in chans):
            break
        time.sleep(0.02)
    for chan in chans:
        chan.close()  # never watched by a selector: no pipe to race


def _overdue(lane: _Lane, job: int, parser: BatchParser, now: float, transport: Any) -> bool:
    """Stop a command past its timeout (kill its process tree on the node); True when even
    that did not end it within GRACE seconds and its channel must be given up."""
    index = lane.ran.index(job)
    late = now - parser.started[index] - lane.jobs[job][1]
    if late <= 0:
        return False
    if job not in lane.killed:
        if _kill(transport, parser, index) is not None:
            lane.killed[job] = now
            return False
        return late > GRACE  # its PID line is still on the way (a busy node): wait for it
    return now - lane.killed[job] > GRACE


def _finished_result(lane: _Lane, job: int, fin: Finished) -> CommandResult:
    command, timeout = lane.jobs[job]
    if job in lane.killed:
        return timed_out(command, fin.stdout, fin.stderr, fin.seconds, timeout)
    return CommandResult(
        command, fin.stdout, fin.stderr, fin.exit_code, fin.seconds, None, fin.truncated
    )
