"""What a single log line says about itself: its level, its host and rank, its time,
whether it is an optional probe, and which lines end a log.

The ranking weighs evidence by where it sits (a traceback's final exception says more
than an INFO line), and `first_failure` needs each failing line's host, rank and
timestamp. Only evidence lines go through here, so plain `re` is fast enough.

A *probe* is a line where a program reports, at INFO level, that an optional part is
absent and it carries on without it: NCCL's `NET/Plugin : dlerror=libnccl-net.so:
cannot open shared object file ... using internal implementation`, its tuner and
profiler plugins. Healthy runs print them; they are never evidence (`kb.diagnosis.matching`).

The *meaningful* lines of a log's end are its last lines without blank lines, code
fences, rules (`---`), `...`, `^C` and a `(hangs)` remark: what the log ends with, for
the stall analyzer and for signatures with `at_end: true`.
"""

from __future__ import annotations

import re

from kb.diagnosis.decorations import content_start
from kb.util.lazyre import LazyPattern
from kb.util.record import record

# "OSError: ...", "torch.distributed.DistBackendError: ...", "[rank0]: RuntimeError: ..."
_EXCEPTION = LazyPattern(
    r"^(?:\[[^\]]{1,40}\]:?\s*)?(?:[A-Za-z_][\w]*\.)*"
    r"(?:[A-Z]\w*(?:Error|Exception|Failure|Interrupt|Exit|Warning)|[A-Z]\w*Error\w*)(?::\s|:?$)"
)
# glog and PyTorch's c10 logging: "E0101 10:00:00.1 ...", "[E ProcessGroupNCCL.cpp:1316]",
# "[E1023 10:00:00.123 4567 ProcessGroupNCCL.cpp:1316]", after a "[rank1]:" prefix too
# (c10's "[W ...]" lines stay unmarked: they often report the failure itself)
_C10 = r"(?:^|\]:?)\s*\[{0}(?:\d{{4}} [\d:.]+(?: \d+)?)? [\w/.\-]+:\d+\]"
_ERROR = LazyPattern(
    r"\b(?:ERROR|FATAL|CRITICAL|ABORT|NCCL WARN|Error:|error:|failed|FAILED)\b|^\s*[EF]\d{4} |"
    + _C10.format("[EF]")
)
_WARNING = LazyPattern(r"\b(?:WARN|WARNING|Warning)\b|^\s*W\d{4} ")
_INFO = LazyPattern(r"\b(?:INFO|DEBUG|TRACE|NOTICE)\b|^\s*I\d{4} |" + _C10.format("I"))

LEVEL_FACTOR = {"exception": 1.0, "error": 1.0, "warning": 0.95, "plain": 0.9, "info": 0.8}


def level_of(text: str) -> str:
    """'exception', 'error', 'warning', 'info' or 'plain'."""
    at = content_start(text)  # an exception a launcher or logger prefixed is one too
    if _EXCEPTION.search(text) or (at and _EXCEPTION.search(text[at:])):
        return "exception"
    if " NCCL INFO " in text or _INFO.search(text[:80]):
        return "info"
    if _ERROR.search(text):
        return "error"
    if _WARNING.search(text):
        return "warning"
    return "plain"


# an optional NCCL plugin (net, tuner, profiler, env, ...) looked for and not found
_PROBE = LazyPattern(
    r"\b(?:NET|COLLNET|TUNER|PROFILER|ENV|GIN|RAS)/Plugin ?: ?(?:"
    r"Plugin load (?:\([^)]*\) )?returned|dlerror|No plugin found|Could not find|"
    r"Failed to find \w+ symbol|Using internal)"
)


def is_probe(text: str) -> bool:
    """True for an INFO line where an optional part is looked for and not found (never
    a failure, whatever it says about shared objects)."""
    return "Plugin" in text and " INFO " in text and _PROBE.search(text) is not None


NOISE = LazyPattern(r"^\s*(?:```\w*|~~~|[-=_*#~.…]+|\^C|\(?(?:hangs?|stuck)[^)]*\)?)?\s*$", re.I)
END_LINES = 3  # the last meaningful lines of a log count as "where it ends"


def meaningful(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The (line number, text) pairs that are not noise at a log's end."""
    return [(n, t) for n, t in lines if not NOISE.match(t)]


def end_lines(tail: list[tuple[int, str]], n: int = END_LINES) -> set[int]:
    """The numbers of the last `n` meaningful lines among a log's last lines."""
    return {line for line, _ in meaningful(tail)[-n:]}


_NCCL_HOST = LazyPattern(r"(?:^|[\s\]>:])([A-Za-z0-9][\w.\-]*):(\d+):(\d+) \[(\d+)\]")
_RANK = LazyPattern(
    r"\[[Rr]ank ?(\d+)\]|\brank[ :=]+(\d+)\b|^\[\d+,(\d+)\]<std(?:out|err)>|^(\d+): "
)
_FILE_RANK = LazyPattern(r"rank[_\-.]?(\d+)|[_\-.]r(\d+)\b", re.IGNORECASE)

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
        start=1,
    )
}
_ISO = LazyPattern(
    r"(?P<y>20\d\d)[-/](?P<mo>\d\d)[-/](?P<d>\d\d)[T _](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:[.,]\d+)?)"
)
_GLOG = LazyPattern(
    r"(?:^|[\[\s])[IWEF](?P<mo>\d\d)(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:\.\d+)?)"
)
_SYSLOG = LazyPattern(
    r"\b(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<d>\d\d?) "
    r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:\.\d+)?)"
)


@record(hashable=True)  # a frozen dataclass, without compiling one at every start
class Stamp:
    """A time of day on a date; the year is left out (glog lines have none)."""

    sort_key: tuple[int, int, int, int, float]
    text: str

    def __init__(self, sort_key: tuple[int, int, int, int, float], text: str) -> None:
        self.sort_key = sort_key
        self.text = text


def time_of(text: str) -> Stamp | None:
    head = text[:200]
    year = ""
    m = _ISO.search(head)
    if m is not None:
        year = m["y"] + "-"
    else:
        m = _GLOG.search(head)
    if m is not None:
        mo, d = int(m["mo"]), int(m["d"])
    else:
        m = _SYSLOG.search(head)
        if m is None:
            return None
        mo, d = _MONTHS[m["mon"].lower()], int(m["d"])
    s = m["s"].replace(",", ".")
    shown = f"{year}{mo:02d}-{d:02d} {m['h']}:{m['mi']}:{s}"
    return Stamp((mo, d, int(m["h"]), int(m["mi"]), float(s)), shown)


def host_of(text: str) -> str | None:
    m = _NCCL_HOST.search(text[:200])
    return m.group(1) if m else None


def rank_of(text: str, file: str = "") -> int | None:
    m = _RANK.search(text[:200])
    if m:
        return int(next(g for g in m.groups() if g is not None))
    m = _FILE_RANK.search(file.rsplit("/", 1)[-1])
    if m:
        return int(next(g for g in m.groups() if g is not None))
    return None
