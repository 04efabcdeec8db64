"""The structured lines of `NCCL_DEBUG=INFO` output, read into a map of the job.

`read` takes one line (`host:pid:tid [dev] NCCL INFO ...`, or the shorter prefix of
NCCL 2.3 and older) and records in a `State` what it says: a process's host, address
and NCCL version, its rank in a communicator, a channel's transport (`Channel 00/0 :`,
or `Ring 00 :` before NCCL 2.4), an environment setting NCCL echoed, a bandwidth
figure. An interface list (`NET/Socket : Using [0]eth0:... [1]br-...`) is read whole,
also when it continues on the following lines (one `[N]iface:addr<0>` per line, as
some NCCL versions and most copies print it), and also when the host prefix was cut
off. `kb.diagnosis.analyzers.nccl` judges the map.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from kb.diagnosis.model import Evidence

MakeEvidence = Callable[[int, str, int, int], Evidence]

# searched in a line's first PREFIX_REACH characters only: bounded work on huge lines
_PREFIX = re.compile(
    r"(?:^|[\s\]>:])(?P<host>[A-Za-z0-9][\w.\-]{0,100}):(?P<pid>\d{1,10}):\d{1,10} \[(?P<dev>\d{1,4})\]"
    r"(?: \S{1,80}:\d{1,6})? (?:NCCL )?(?:INFO|WARN) "  # NCCL 2.3 and older print no "NCCL"
)
PREFIX_REACH = 300
_VERSION = re.compile(r"^NCCL version (?P<v>\d+\.\d+\.\d+)\S*")
_USING = re.compile(r"(?:^|\bINFO )(?P<kind>Bootstrap|NET/Socket|NET) ?: Using\b")
_IFACE = re.compile(r"(?:\[\d+\]|interface )?(?P<iface>[\w.\-]+):(?P<addr>[^<\s]+)<\d+>")
_LISTED = re.compile(r"\s*\[\d+\](?P<iface>[\w.\-]+):(?P<addr>[^<\s]+)<\d+>")
_LIST_LINE = re.compile(r"^\s*(?:\[\d+\][\w.\-]+:[^<\s]+<\d+>\s*)+$")
_ENV = re.compile(r"^(?P<var>[A-Z][A-Z0-9_]+) set by environment to (?P<val>\S*?)\.?$")
_INIT = re.compile(
    r"^(?:\w+ )?comm 0x[0-9a-fA-F]+ rank (?P<rank>\d+) n[Rr]anks (?P<nranks>\d+)"
    r"(?: nNodes (?P<nnodes>\d+))?(?:.*?commId (?P<commid>0x[0-9a-fA-F]+))?"
)
_CHANNEL = re.compile(
    r"^(?:Channel|Ring) (?P<ch>\d+)(?:/\d+)? : (?P<a>\d+)\[(?P<da>[^\]]*)\] -> "
    r"(?P<b>\d+)\[(?P<db>[^\]]*)\](?: \[(?P<dir>send|receive)\])? via (?P<via>\S+)"
)
_NETWORK = re.compile(r"^Using network (?P<net>\w+)")
_BUSBW = re.compile(r"#\s*Avg bus bandwidth\s*:\s*(?P<bw>\d+(?:\.\d+)?)")
_ALGBW = re.compile(r"\b(?P<kind>alg|bus)bw\s*[:=]?\s*(?P<bw>\d+(?:\.\d+)?)\s*GB/s", re.I)
_TESTS_RANK = re.compile(
    r"#\s+Rank\s+(?P<rank>\d+) (?:Group\s+\d+ )?Pid\s+(?P<pid>\d+) on\s+(?P<host>\S+)"
)


@dataclass
class Proc:
    host: str
    pid: str
    addr: str | None = None
    version: tuple[str, Evidence] | None = None
    comm: str | None = None  # the communicator its latest lines belong to


@dataclass
class Channel:
    comm: str | None
    a: int
    b: int
    via: str
    proc: tuple[str, str]
    ev: Evidence
    dev_a: str = ""  # the device (cudaDev or bus id) NCCL prints beside each rank
    dev_b: str = ""
    printer: int | None = None  # the rank whose process printed the line, when it is clear


@dataclass
class IfaceList:
    """One `Using` line: which interfaces a process (host "" when unknown) lists."""

    host: str
    kind: str  # Bootstrap, NET/Socket or NET
    ifaces: list[tuple[str, str, Evidence]]  # (interface, address, evidence)
    line_no: int


IFACE_COPIES = 3  # entries kept per (host, interface, address): the judges show 3 at most


@dataclass
class State:
    """The map of the job. Every rank of every communicator prints the same channel,
    interface and bandwidth lines again, so each list keeps only what the judges
    (`kb.diagnosis.analyzers.nccl`, `nccl_hosts`) can tell apart, in the order first
    seen: one channel per distinct channel (its first line is the evidence), one closed
    interface list per distinct list, `IFACE_COPIES` entries per interface and address
    (the judges show the first three of any kind), the lowest bandwidth first seen.
    The state stays as small as the job's map, however long the log."""

    procs: dict[tuple[str, str], Proc] = field(default_factory=dict)
    ranks: dict[tuple[str | None, int], tuple[str, str]] = field(default_factory=dict)
    nnodes: dict[str | None, int] = field(default_factory=dict)
    channels: list[Channel] = field(default_factory=list)
    env: dict[str, tuple[str, Evidence]] = field(default_factory=dict)
    ifaces: list[tuple[str, str, str, Evidence]] = field(default_factory=list)  # host, iface, addr
    lists: list[IfaceList] = field(default_factory=list)
    bandwidth: list[tuple[float, Evidence]] = field(default_factory=list)
    networks: dict[str, Evidence] = field(default_factory=dict)
    seen_channels: set[tuple[object, ...]] = field(default_factory=set)
    seen_lists: set[tuple[object, ...]] = field(default_factory=set)
    iface_copies: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def add_channel(self, ch: Channel) -> None:
        """A channel, unless one with the same ends, transport, process and
        communicator is already known (only its first line is ever shown)."""
        key = (ch.comm, ch.a, ch.b, ch.via, ch.proc, ch.dev_a, ch.dev_b, ch.printer)
        if key not in self.seen_channels:
            self.seen_channels.add(key)
            self.channels.append(ch)

    def add_iface(self, host: str, iface: str, addr: str, ev: Evidence) -> None:
        key = (host, iface, addr)
        n = self.iface_copies.get(key, 0)
        if n < IFACE_COPIES:
            self.iface_copies[key] = n + 1
            self.ifaces.append((host, iface, addr, ev))

    def add_list(self, found: IfaceList) -> None:
        """A new interface list; the one before it, complete now, is dropped when an
        equal one (host, kind, interfaces and addresses) came before."""
        if self.lists:
            last = self.lists[-1]
            key = (last.host, last.kind, tuple((i, a) for i, a, _ in last.ifaces))
            if key in self.seen_lists:
                self.lists.pop()
            else:
                self.seen_lists.add(key)
        self.lists.append(found)

    def add_bandwidth(self, bw: float, ev: Evidence) -> None:
        """A bandwidth figure: only the lowest, first seen, is judged."""
        if not self.bandwidth or bw < self.bandwidth[0][0]:
            self.bandwidth[:] = [(bw, ev)]


def read(state: State, tap: str, line_no: int, text: str, ev: MakeEvidence) -> None:
    """Add what one tapped line says to `state`."""
    s = state
    if tap in ("busbw", "algbw"):
        m = (_BUSBW if tap == "busbw" else _ALGBW).search(text)
        if m:
            s.add_bandwidth(float(m["bw"]), ev(line_no, text, m.start(), m.end()))
        return
    if tap == "tests-rank":
        m = _TESTS_RANK.search(text)
        if m:
            proc = s.procs.setdefault((m["host"], m["pid"]), Proc(m["host"], m["pid"]))
            proc.comm = "nccl-tests"
            s.ranks[("nccl-tests", int(m["rank"]))] = (proc.host, proc.pid)
        return
    if tap == "iface-list:follow":
        _continue_list(s, line_no, text, ev)
        return
    m = _PREFIX.search(text, 0, PREFIX_REACH)
    if m is None:
        if tap in ("iface", "iface-list", "channel"):  # a copy without the host prefix
            at = _bare_info(text)
            if at is not None:
                _message(s, tap, ("", ""), text, at, line_no, ev)
        return
    _message(s, tap, (m["host"], m["pid"]), text, m.end(), line_no, ev, m["dev"])


def _bare_info(text: str) -> int | None:
    """Where the message starts in an NCCL line whose host prefix was cut off."""
    i = text.find("INFO ", 0, PREFIX_REACH)
    return None if i < 0 else i + len("INFO ")


def _message(
    s: State,
    tap: str,
    key: tuple[str, str],
    text: str,
    at: int,
    line_no: int,
    ev: MakeEvidence,
    dev: str = "",
) -> None:
    proc = s.procs.get(key) or s.procs.setdefault(key, Proc(*key))
    msg = text[at:]
    if tap == "channel":
        parsed = _channel(msg)
        if parsed:
            a, b, da, db, direction, via, vs, ve = parsed
            e = ev(line_no, text, at + vs, at + ve)
            ch = Channel(proc.comm, a, b, via, key, e, da, db)
            ch.printer = _printer(a, b, direction, da, db, dev)
            s.add_channel(ch)
    elif tap == "init":
        c = _INIT.match(msg)
        if c:
            if c["commid"]:
                proc.comm = c["commid"]
            elif proc.comm is None or proc.comm.startswith("nranks="):
                proc.comm = f"nranks={c['nranks']}"
            s.ranks.setdefault((proc.comm, int(c["rank"])), key)
            if c["nnodes"]:
                s.nnodes[proc.comm] = int(c["nnodes"])
    elif tap == "version":
        if proc.version is not None:
            return  # a process's first version line is its version: every rank repeats it
        c = _VERSION.match(msg)
        if c:
            proc.version = (c["v"], ev(line_no, text, at + c.start("v"), at + c.end("v")))
    elif tap in ("iface", "iface-list"):
        _using(s, proc, text, at, line_no, ev)
    elif tap == "env":
        c = _ENV.match(msg)
        if c and c["var"] not in s.env:
            s.env[c["var"]] = (c["val"], ev(line_no, text, at, len(text)))
    elif tap == "network":
        c = _NETWORK.match(msg)
        if c and c["net"] not in s.networks:  # its first line is its evidence
            s.networks[c["net"]] = ev(line_no, text, at, len(text))


ChannelLine = tuple[int, int, str, str, "str | None", str, int, int]
_CHANNELS: dict[str, ChannelLine | None] = {}
CHANNEL_CACHE = 4096  # distinct channel lines remembered


def _channel(msg: str) -> ChannelLine | None:
    """A channel line's (a, b, device a, device b, direction, via, via's span): each
    communicator of a job prints the same lines again (only the prefix differs), so
    each distinct one is parsed once."""
    hit = _CHANNELS.get(msg, False)
    if hit is not False:
        return hit  # type: ignore[return-value]
    c = _CHANNEL.match(msg)
    out = (
        None
        if c is None
        else (
            int(c["a"]),
            int(c["b"]),
            c["da"],
            c["db"],
            c["dir"],
            c["via"],
            c.start("via"),
            c.end("via"),
        )
    )
    if len(_CHANNELS) >= CHANNEL_CACHE:
        _CHANNELS.clear()
    _CHANNELS[msg] = out
    return out


def _printer(a: int, b: int, direction: str | None, da: str, db: str, dev: str) -> int | None:
    """Which end of a channel printed it: the receiver of a `[receive]` line, the sender
    of a `[send]` one, else the end whose device is the one in the line's prefix."""
    if direction:
        return b if direction == "receive" else a
    if dev and da == dev and db != dev:
        return a
    if dev and db == dev and da != dev:
        return b
    return None


def _using(s: State, proc: Proc, text: str, at: int, line_no: int, ev: MakeEvidence) -> None:
    """An interface list: every `[N]iface:addr<port>` on the line."""
    u = _USING.search(text)
    if u is None:
        return
    if s.lists and s.lists[-1].line_no == line_no:
        return  # the same line through both taps
    found = IfaceList(proc.host, u["kind"], [], line_no)
    for c in _IFACE.finditer(text, u.end()):
        e = ev(line_no, text, c.start("iface"), c.end("iface"))
        found.ifaces.append((c["iface"], c["addr"], e))
        s.add_iface(proc.host, c["iface"], c["addr"], e)
    if found.ifaces:
        proc.addr = proc.addr or found.ifaces[0][1]
    s.add_list(found)


def _continue_list(s: State, line_no: int, text: str, ev: MakeEvidence) -> None:
    """A line of `[N]iface:addr<port>` items right after an interface list."""
    if not s.lists or not _LIST_LINE.match(text):
        return
    last = s.lists[-1]
    if line_no != last.line_no + 1:
        return
    last.line_no = line_no
    for c in _LISTED.finditer(text):
        e = ev(line_no, text, c.start("iface"), c.end("iface"))
        last.ifaces.append((c["iface"], c["addr"], e))
        s.add_iface(last.host, c["iface"], c["addr"], e)
