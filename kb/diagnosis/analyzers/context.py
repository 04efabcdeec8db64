"""Where the failure is: Python tracebacks, and the rank a launcher says failed first.

A line shaped like an exception (`OSError: ...`) ends a traceback when it follows a
`Traceback (most recent call last)`, or a frame (`File "...", line N`) just before it
(a paste that lost the traceback's top), or when a logger printed it at error level
(vLLM's `ERROR 05-29 04:08:22 worker_base.py:145] RuntimeError: ...`, whose traceback
is one log record): evidence there outweighs the same words in INFO chatter. Whatever a
launcher or logger puts before each line (`kb.diagnosis.decorations`), the taps find
these lines. torchrun's `Root Cause (first observed failure)` block names the host,
rank and time of the first failure outright.
"""

from __future__ import annotations

import bisect
import re

from kb.diagnosis.analyzers.base import Analyzer, Facts, Report, Tap
from kb.diagnosis.decorations import content_start, logged_as_error
from kb.diagnosis.lines import level_of, time_of
from kb.util.lazyre import LazyPattern

TRACEBACK_REACH = 400  # lines between a traceback's start and its final exception
FRAME_REACH = 6  # lines between a frame's `File "..", line N` and the exception after it

_FIELD = LazyPattern(r"^\s*(?:\[[^\]]*\]:?\s*)?(time|host|rank)\s*:\s*(.+?)\s*$")


class Context(Analyzer):
    name = "context"
    taps = (
        Tap("traceback", r"Traceback \(most recent call last\)", cap=100_000),
        Tap("root-cause", r"Root Cause \(first observed failure\)", follow=8, cap=100),
        Tap("frame", r'File "[^"]+", line \d+', cap=100_000),
        Tap("logged-exception", r"\w(?:Error|Exception)\w*(?::\s|:?$)", cap=20_000),
    )

    def __init__(self) -> None:
        super().__init__()
        self.tracebacks: dict[str, list[int]] = {}
        self.frames: dict[str, list[int]] = {}
        self.logged: dict[str, set[int]] = {}  # exception lines a logger printed as errors
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
        elif tap == "frame":
            self.frames.setdefault(self.file, []).append(line_no)
        elif tap == "logged-exception":
            if logged_as_error(text) and level_of(text) == "exception":
                self.logged.setdefault(self.file, set()).add(line_no)
        elif tap == "root-cause":
            self.root_causes.append({"file": self.file, "line": line_no})
        elif tap == "root-cause:follow" and self.root_causes:
            rc = self.root_causes[-1]
            if rc.get("file") != self.file or line_no - int(rc["line"]) > 8:
                return
            m = _FIELD.match(text[content_start(text) :][:300])
            if m and m.group(1) not in rc:
                value = m.group(2)
                if m.group(1) == "rank":
                    num = re.match(r"\d+", value)
                    rc["rank"] = int(num.group(0)) if num else value
                else:
                    rc[m.group(1)] = value

    def in_traceback(self, file: str, line_no: int) -> bool:
        """True when `line_no` of `file` may end a traceback: one started shortly
        before it, a frame is just before it, or a logger printed it as an error."""
        if line_no in self.logged.get(file, ()):
            return True
        for starts, reach in (
            (self.tracebacks.get(file, []), TRACEBACK_REACH),
            (self.frames.get(file, []), FRAME_REACH),
        ):
            i = bisect.bisect_left(starts, line_no)
            if i > 0 and line_no - starts[i - 1] <= reach:
                return True
        return False

    def finish(self, facts: Facts) -> Report:
        facts["context"] = self
        return Report()
