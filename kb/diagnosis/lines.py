"""What a single log line says about itself: its level, its host and rank, its time.

The ranking weighs evidence by where it sits (a traceback's final exception says more
than an INFO line), and `first_failure` needs each failing line's host, rank and
timestamp. Only evidence lines go through here, so plain `re` is fast enough.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# "OSError: ...", "torch.distributed.DistBackendError: ...", "[rank0]: RuntimeError: ..."
_EXCEPTION = re.compile(
    r"^(?:\[[^\]]{1,40}\]:?\s*)?(?:[A-Za-z_][\w]*\.)*"
    r"(?:[A-Z]\w*(?:Error|Exception|Failure|Interrupt|Exit|Warning)|[A-Z]\w*Error\w*)(?::\s|:?$)"
)
_ERROR = re.compile(
    r"\b(?:ERROR|FATAL|CRITICAL|ABORT|NCCL WARN|Error:|error:|failed|FAILED)\b|^\s*[EF]\d{4} "
)
_WARNING = re.compile(r"\b(?:WARN|WARNING|Warning)\b|^\s*W\d{4} ")
_INFO = re.compile(r"\b(?:INFO|DEBUG|TRACE|NOTICE)\b|^\s*I\d{4} ")

LEVEL_FACTOR = {"exception": 1.0, "error": 1.0, "warning": 0.95, "plain": 0.9, "info": 0.8}


def level_of(text: str) -> str:
    """'exception', 'error', 'warning', 'info' or 'plain'."""
    if _EXCEPTION.search(text):
        return "exception"
    if " NCCL INFO " in text or _INFO.search(text[:80]):
        return "info"
    if _ERROR.search(text):
        return "error"
    if _WARNING.search(text):
        return "warning"
    return "plain"


_NCCL_HOST = re.compile(r"(?:^|[\s\]>:])([A-Za-z0-9][\w.\-]*):(\d+):(\d+) \[(\d+)\]")
_RANK = re.compile(
    r"\[[Rr]ank ?(\d+)\]|\brank[ :=]+(\d+)\b|^\[\d+,(\d+)\]<std(?:out|err)>|^(\d+): "
)
_FILE_RANK = re.compile(r"rank[_\-.]?(\d+)|[_\-.]r(\d+)\b", re.IGNORECASE)

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
        start=1,
    )
}
_ISO = re.compile(
    r"(?P<y>20\d\d)[-/](?P<mo>\d\d)[-/](?P<d>\d\d)[T _](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:[.,]\d+)?)"
)
_GLOG = re.compile(
    r"(?:^|[\[\s])[IWEF](?P<mo>\d\d)(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:\.\d+)?)"
)
_SYSLOG = re.compile(
    r"\b(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<d>\d\d?) "
    r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d(?:\.\d+)?)"
)


@dataclass(frozen=True)
class Stamp:
    """A time of day on a date; the year is left out (glog lines have none)."""

    sort_key: tuple[int, int, int, int, float]
    text: str


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
