"""Where a hang starts: the rank (and its host) that the hang's evidence names.

Why: in a hang every healthy rank reports a timeout; only the one that died, stalled or
issued a different collective is worth looking at. The hang signatures of
`rules/nccl/nccl-timeout-hang.yaml` name it in their values (`rank`, `rank_host`, from
the Flight Recorder dumps and the RAS report). The focus is read from one evidence line
(the strongest that names a rank), so that its rank and host belong together; the walk,
the batch walk and the cluster report use it to run that host's checks first and to let
that host's survey decide between its causes. No cause id here.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kb.runners.hosts import is_host

T = TypeVar("T")


@dataclass(frozen=True)
class Focus:
    """The responsible rank and its host (either may be unknown, not both)."""

    rank: str | None
    host: str | None

    def who(self) -> str:
        rank = f"rank {self.rank}" if self.rank else "the responsible rank"
        return f"{rank} on host {self.host}" if self.host else rank

    def says(self) -> str:
        """The next step's sentence: where to look first."""
        where = f"run the checks on {self.host} first" if self.host else "look at its log first"
        return f"the hang starts at {self.who()}: {where}"

    def check_command(self, check_id: str) -> str:
        """The `check` command that runs one check on the focus host (quoted words)."""
        host = f" --host {shlex.quote(self.host)}" if self.host else ""
        return f"dlperf-help check{host} --check {shlex.quote(check_id)} --json"

    def to_json(self) -> dict[str, str | None]:
        return {"rank": self.rank, "host": self.host, "text": self.says()}


_STATEMENT = "dlperf-hang: "
_FR_RANK = re.compile(r"^dlperf-hang: flight-recorder: ranks? (\d+)")
_RAS_PROCESS = re.compile(
    r"^dlperf-hang: nccl-ras: process \d+ on host (\S+) \(GPUs? [^,)]+(?:, rank (\d+))?\)"
)
_RAS_RANK = re.compile(r"^dlperf-hang: nccl-ras: rank (\d+)(?: \(process \d+ on host (\S+), )?")


def _of_line(text: str) -> tuple[str | None, str | None]:
    """(rank, host) that one hang statement names first."""
    if m := _FR_RANK.match(text):
        return m[1], None
    if m := _RAS_PROCESS.match(text):
        return m[2], m[1]
    if m := _RAS_RANK.match(text):
        return m[1], m[2]
    return None, None


def from_lines(lines: Iterable[str]) -> Focus | None:
    """The focus of the first hang statement that names a rank or a host (the strongest,
    in evidence order), its host (or rank) completed from the RAS lines about it. A host
    that is not a host name or address is dropped (it came from a file)."""
    named = [_of_line(t) for t in lines if t.startswith(_STATEMENT)]
    named = [(r, _host(h)) for r, h in named if r or _host(h)]
    if not named:
        return None
    rank, host = named[0]
    if host is None and rank is not None:
        host = next((h for r, h in named if r == rank and h), None)
    if rank is None and host is not None:
        rank = next((r for r, h in named if h == host and r), None)
    return Focus(rank, host)


def from_diagnosis(diagnosis: Any) -> Focus | None:
    """The focus of the first cause whose evidence holds hang statements."""
    for cause in getattr(diagnosis, "causes", None) or []:
        found = from_lines(e.text for e in cause.evidence)
        if found is not None:
            return found
    return None


def _host(value: str | None) -> str | None:
    if value is None or value.startswith("-") or not is_host(value):
        return None
    return value


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def node_matches(focus_host: str, names: Iterable[str], only_one: bool) -> bool:
    """Whether a node known by `names` (its label, hostname, addresses) is the focus host.
    A loopback address (ranks of one machine) names a node only when it is the only one."""
    if is_loopback(focus_host):
        return only_one
    wanted = focus_host.lower()
    for name in names:
        n = name.lower().split("/", 1)[0]  # an address with its prefix length
        if n == wanted:
            return True
        if not _is_ip(n) and not _is_ip(wanted) and n.split(".")[0] == wanted.split(".")[0]:
            return True  # gpu02 and gpu02.cluster.local
    return False


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def first(items: Sequence[T], focus: Focus | None, names: Callable[[T], Iterable[str]]) -> list[T]:
    """`items` with those of the focus host first (otherwise in their order)."""
    if focus is None or focus.host is None:
        return list(items)
    host = focus.host
    hits = [x for x in items if node_matches(host, names(x), len(items) == 1)]
    return hits + [x for x in items if x not in hits]
