"""A log that ends where progress should have started: a hang at start-up.

Some lines are always followed by more output in a run that works: TensorFlow's
`Started server with target: grpc://...` by the session and the training steps,
Lightning's `Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4` by `All distributed
processes registered`, a launcher's `Waiting for the workers ...` by the workers. When
such a line is the last meaningful line of a log (blank lines, code fences, `...` and
`^C` aside), the job stopped there: the ranks never found each other. That is the
finding `log-ends-at-start-up`; the symptom whose `named_by` lists it (the ranks never
met) is then certainly present, and the rules' causes of it compete
(`kb.diagnosis.candidates`).

A log whose last lines are NCCL's initialisation lines, with no `Init COMPLETE`, is
weaker evidence: people paste the start of healthy runs too. It gives a note only.
"""

from __future__ import annotations

import re

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.lines import meaningful
from kb.diagnosis.model import Evidence, Note
from kb.util import recache

FINDING = "log-ends-at-start-up"  # rules/vocabulary/findings.yaml

# (shape of the last line, what it means)
STARTUP: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        recache.compile(r"Started server with target: grpc://"),
        "TensorFlow started its gRPC server and printed nothing after it: the workers "
        "are waiting for each other",
    ),
    (
        recache.compile(r"Initializing distributed: GLOBAL_RANK: \d+, MEMBER: \d+/\d+"),
        "PyTorch Lightning started to initialise the process group and never finished",
    ),
    (
        recache.compile(r"CreateSession still waiting for response from worker"),
        "TensorFlow is still waiting for a worker to answer",
    ),
    (
        recache.compile(
            r"(?i)\bwaiting for (?:all |the |other |remaining )?(?:\d+ )?"
            r"(?:workers?|ranks?|nodes?|hosts?|peers?|processes|trainers?|servers?)"
            r"(?: to (?:join|connect|start|be ready|come up|register))?\W*$"
        ),
        "the launcher was waiting for the other processes when the log ended",
    ),
)
_NCCL_INIT = recache.compile(r"NCCL INFO (?!.*\.\w+:\d+ -> \d+)")  # not an error's trace line
NCCL_TAIL = 3  # the last lines that must all be NCCL INFO lines for the note


class Stall(Analyzer):
    name = "stall"
    taps = (Tap("complete", r"NCCL INFO .*Init COMPLETE", cap=1),)

    def __init__(self) -> None:
        super().__init__()
        self.stalls: list[tuple[str, Evidence]] = []
        self.nccl_ends: list[Evidence] = []
        self.complete: set[str] = set()

    def start_file(self, file: str) -> None:
        super().start_file(file)
        self.delivered["complete"] = 0  # one `Init COMPLETE` per log is enough

    def feed(self, tap: str, line_no: int, text: str) -> None:
        self.complete.add(self.file)

    def end_file(self, tail: list[tuple[int, str]]) -> None:
        last = meaningful(tail)
        if not last:
            return
        line_no, text = last[-1]
        for shape, what in STARTUP:
            m = shape.search(text)
            if m:
                ev = self.evidence(line_no, text, m.start(), m.end(), "last-line")
                self.stalls.append((what, ev))
                return
        init = sum(1 for _, t in last[-NCCL_TAIL:] if _NCCL_INIT.search(t))
        if _NCCL_INIT.search(text) and init >= NCCL_TAIL and self.file not in self.complete:
            self.nccl_ends.append(self.evidence(line_no, text, what="last-line"))

    def finish(self, facts: Facts) -> Report:
        report = Report()
        for what, ev in self.stalls[:1]:
            report.findings.append(
                Finding(FINDING, FINDING, 0.6, f"the log ends here: {what}", [ev])
            )
        if self.nccl_ends and not self.stalls:
            report.notes.append(
                Note(
                    "log-ends-in-nccl-init",
                    "the log ends during NCCL's initialisation (no `Init COMPLETE`): if the "
                    "job stopped there, it hung while the ranks connected",
                    self.nccl_ends[:1],
                )
            )
        return report
