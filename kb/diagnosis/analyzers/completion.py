"""Did the job work? A log that shows its run completing is a healthy run.

Healthy runs are pasted too, full of lines that *describe* the setup without being a
failure: NCCL finding no InfiniBand library, sockets between nodes, virtual interfaces
listed beside the one in use, an optional plugin not found. When a log shows that the
job did its work, such context must not be read as a diagnosis (`kb.diagnosis.ranking`
drops causes that rest only on INFO and warning lines there). A log shows it when:
- it holds an end marker: nccl-tests' `# Out of bounds values : 0 OK`, `# Avg bus
  bandwidth`, `# Collective test concluded`; NCCL's `Destroy COMPLETE` (a communicator
  closed normally); a training summary (`Training completed`, `total images/sec:`,
  `Total img/sec on 8 GPU(s)`, `'train_runtime'`, Lightning's `Trainer.fit stopped:
  max_epochs=.. reached`); or it ends with the last step of a counted run (`step 60/60`);
- or NCCL's `Init COMPLETE` is followed by steady progress: the log's last lines hold
  `PROGRESS_LINES` lines or more of training steps or of an nccl-tests table (read at
  the end, so that progress lines, which may be most of a huge log, cost nothing).
The facts are per log file: `completed` (file -> the line that shows it).
"""

from __future__ import annotations

from kb.diagnosis.analyzers.base import Analyzer, Facts, Report, Tap
from kb.diagnosis.lines import meaningful
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

PROGRESS_LINES = 5

_DONE = (
    r"#\s*Out of bounds values\s*:\s*0 OK|#\s*Avg bus bandwidth\s*:\s*\d|"
    r"#\s*Collective test concluded|NCCL INFO .*- Destroy COMPLETE|"
    r"(?i:\btraining (?:is )?(?:completed|complete|finished|done)\b|"
    r"\b(?:finished|done) training\b)|\btotal images/sec: \d|"
    r"\bTotal img/sec on \d+ GPU|'train_runtime': \d|"
    r"Trainer\.fit` stopped: `max_(?:epochs|steps)=\d+` reached"
)
_COUNT = LazyPattern(r"(?i)\b(?:step|iter(?:ation)?|epoch)\s*[:#\[]?\s*(\d+)\s*/\s*(\d+)\b")
_PROGRESS = LazyPattern(
    r"\b\d+\s+\d+\s+(?:float|double|half|bfloat16|u?int(?:8|32|64))\s+\w+\s+-?\d|"
    r"(?i:\bloss\b\s*[:=]?\s*\d|\d\s*(?:img/s|images/sec|samples/s|it/s|tokens/s)\b)"
)


class Completion(Analyzer):
    name = "completion"
    taps = (
        Tap("done", _DONE, cap=1),
        Tap("init", r"NCCL INFO .*Init COMPLETE", cap=1),
    )

    def __init__(self) -> None:
        super().__init__()
        self.completed: dict[str, Evidence] = {}
        self._init: int | None = None

    def start_file(self, file: str) -> None:
        super().start_file(file)
        self.delivered.clear()  # each log shows its own completion
        self._init = None

    def feed(self, tap: str, line_no: int, text: str) -> None:
        if self.file in self.completed:
            return
        if tap == "done":
            self.completed[self.file] = self.evidence(line_no, text, what="end-marker")
        elif tap == "init" and self._init is None:
            self._init = line_no

    def end_file(self, tail: list[tuple[int, str]]) -> None:
        if self.file in self.completed:
            return
        for line_no, text in meaningful(tail)[-1:]:
            m = _COUNT.search(text)
            if m and int(m[1]) == int(m[2]) > 1:
                self.completed[self.file] = self.evidence(line_no, text, what="last-step")
                return
        if self._init is None:
            return
        steps = [(n, t) for n, t in tail if n > self._init and _PROGRESS.search(t)]
        if len(steps) >= PROGRESS_LINES:
            self.completed[self.file] = self.evidence(*steps[-1], what="progress")

    def finish(self, facts: Facts) -> Report:
        facts["completed"] = dict(self.completed)
        return Report()
