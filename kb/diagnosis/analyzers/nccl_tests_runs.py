"""nccl-tests run once per process: a launch that measures nothing across its ranks.

nccl-tests built without `MPI=1`, started by `mpirun -np N` (or one copy per node by
hand), runs N independent single-process tests: each process prints its own header
(`# nThread 1 nGpus 6 ...`) and its own results table. A log where a second header comes
before the first run's summary (`# Avg bus bandwidth`), or where the same results row
(size, count, type, redop; a size above 0, which `-b 0` may print twice) appears twice
in a row, is two or more such tests written
together: none of them measured the collective across the processes the launcher
started -> benchmark-misconfig (rebuild nccl-tests with `make MPI=1`, or run one process
with `-g N`). Sequential runs (a summary between headers, rows in order) say nothing.
"""

from __future__ import annotations

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

_HEADER = r"^#\s*nThread \d+ nGpus \d+ minBytes \d+"
_SUMMARY = r"^#\s*Avg bus bandwidth\s*:"
_ROW = (
    r"^\s*\d+\s+\d+\s+(?:u?int\d+|float|double|half|bfloat16|fp8\w*|u?int8|char)\s+\w+\s+-?\d+\s+\d"
)
_ROW_KEY = LazyPattern(r"^\s*(\d+\s+\d+\s+\S+\s+\S+\s+-?\d+)\s")


class NcclTestsRuns(Analyzer):
    name = "nccl-tests-runs"
    taps = (
        Tap("header", _HEADER, cap=200),
        Tap("summary", _SUMMARY, cap=200),
        Tap("row", _ROW, cap=2_000),
    )

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[Evidence] = []
        self.summaries = 0
        self.overlap: list[Evidence] = []  # a header before the summary of the one before
        self.repeated: list[Evidence] = []  # a row that repeats the row before it
        self._last_row: tuple[str, int, str] | None = None  # (file, line, key)

    def feed(self, tap: str, line_no: int, text: str) -> None:
        if tap == "header":
            ev = self.evidence(line_no, text, 0, len(text), tap)
            if self.headers and self.summaries == 0 and self.headers[-1].file == self.file:
                self.overlap.append(ev)
            self.headers.append(ev)
        elif tap == "summary":
            self.summaries += 1
        elif tap == "row":
            m = _ROW_KEY.search(text)
            if m is None:
                return
            last = self._last_row
            repeat = last and last[0] == self.file and last[1] == line_no - 1 and last[2] == m[1]
            if repeat and not m[1].startswith("0 "):  # size 0 may be printed twice (-b 0)
                self.repeated.append(self.evidence(line_no, text, m.start(1), m.end(1), tap))
            self._last_row = (self.file, line_no, m[1])

    def finish(self, facts: Facts) -> Report:
        report = Report()
        if self.overlap:
            evidence = [self.headers[0], self.overlap[0]]
            how = "a second nccl-tests header comes before the first run's results"
        elif self.repeated:  # one run prints each size once: a repeat is another run
            evidence = self.repeated[:2]
            how = "the same nccl-tests results rows come twice in a row"
        else:
            return report
        report.findings.append(
            Finding(
                "nccl-tests-once-per-process",
                "nccl-tests-once-per-process",
                0.7,
                f"{how}: each process ran its own single-process test (nccl-tests built "
                "without MPI=1, or one copy started per node), so nothing was measured across "
                "the processes",
                evidence,
            )
        )
        return report
