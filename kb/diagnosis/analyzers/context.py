"""Where the failure is: Python tracebacks, and the rank a launcher says failed first.

A line shaped like an exception (`OSError: ...`) that follows a `Traceback (most recent
call last)` is the final line of a traceback: evidence there outweighs the same words
in INFO chatter. torchrun's `Root Cause (first observed failure)` block names the host,
rank and time of the first failure outright.
"""

from __future__ import annotations

import bisect
import re

from kb.diagnosis.analyzers.base import Analyzer, Facts, Report, Tap
from kb.diagnosis.lines import time_of

TRACEBACK_REACH = 400  # lines between a traceback's start and its final exception

_FIELD = re.compile(r"^\s*(?:\[[^\]]*\]:?\s*)?(time|host|rank)\s*:\s*(.+?)\s*$")


class Context(Analyzer):
    name = "context"
    taps = (
        Tap("traceback", r"Traceback \(most recent call last\)", cap=100_000),
        Tap("root-cause", r"Root Cause \(first observed failure\)", follow=8, cap=100),
    )

    def __init__(self) -> None:
        super().__init__()
        self.tracebacks: dict[str, list[int]] = {}
        self.root_causes: list[dict[str, str | int]] = []  # every block, in reading order

    @property
    def root_cause(self) -> dict[str, str | int] | None:
        """The first failure the launchers name, whatever order the files were given in:
        the earliest by the block's time where blocks have one, else the first by file
        name and line."""
        if not self.root_causes:
            return None

        def key(rc: dict[str, str | int]) -> tuple[int, tuple[int, int, int, int, float], str, int]:
            stamp = time_of(str(rc.get("time", "")))
            when = stamp.sort_key if stamp is not None else (99, 99, 99, 99, 99.0)
            return (0 if stamp is not None else 1, when, str(rc["file"]), int(rc["line"]))

        return min(self.root_causes, key=key)

    def feed(self, tap: str, line_no: int, text: str) -> None:
        if tap == "traceback":
            self.tracebacks.setdefault(self.file, []).append(line_no)
        elif tap == "root-cause":
            self.root_causes.append({"file": self.file, "line": line_no})
        elif tap == "root-cause:follow" and self.root_causes:
            rc = self.root_causes[-1]
            if rc.get("file") != self.file or line_no - int(rc["line"]) > 8:
                return
            m = _FIELD.match(text[:300])
            if m and m.group(1) not in rc:
                value = m.group(2)
                if m.group(1) == "rank":
                    num = re.match(r"\d+", value)
                    rc["rank"] = int(num.group(0)) if num else value
                else:
                    rc[m.group(1)] = value

    def in_traceback(self, file: str, line_no: int) -> bool:
        """True when a traceback started in `file` shortly before `line_no`."""
        starts = self.tracebacks.get(file, [])
        i = bisect.bisect_left(starts, line_no)
        return i > 0 and line_no - starts[i - 1] <= TRACEBACK_REACH

    def finish(self, facts: Facts) -> Report:
        facts["context"] = self
        return Report()
