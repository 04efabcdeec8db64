"""What an analyzer is: a reader of structured lines that the rules cannot judge alone.

Signatures judge one line at a time. Some evidence needs several lines read together:
which ranks run on which host and which transport joins them (NCCL INFO), a
`nvidia-smi topo -m` matrix, a throughput table, the ratio of data time to step time
over many progress lines. An analyzer declares *taps* (RE2 patterns, optionally with
the lines that follow a match); the scanner delivers only those lines, and at the end
the analyzer reports named findings, plus notes. A finding's name is a word of
`rules/vocabulary/findings.yaml`; the rules that list it under `named_by` are what it is
evidence for (merged into the ranking like their signatures), so no analyzer writes a
cause or symptom id.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kb.diagnosis.model import Evidence, Note
from kb.util.record import field, record

# records (`kb.util.record`): dataclasses that compile nothing at every start


@record(hashable=True)
class Tap:
    id: str
    pattern: str  # RE2 syntax, searched in each line
    ignore_case: bool = False
    follow: int = 0  # also deliver this many following lines (as tap id + ":follow")
    cap: int = 20_000  # deliver at most this many matching lines per diagnosis
    frequent: bool = False  # matches most lines of some logs: scanned for only until capped

    def __init__(
        self,
        id: str,
        pattern: str,
        ignore_case: bool = False,
        follow: int = 0,
        cap: int = 20_000,
        frequent: bool = False,
    ) -> None:
        self.id = id
        self.pattern = pattern
        self.ignore_case = ignore_case
        self.follow = follow
        self.cap = cap
        self.frequent = frequent


@record()
class Finding:
    """Evidence derived by an analyzer (a signature in all but name): `name` is its word in
    rules/vocabulary/findings.yaml, naming the causes or symptoms whose `named_by` lists it;
    `id` is what the explanation calls it."""

    name: str
    id: str
    weight: float
    text: str
    evidence: list[Evidence] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)
    alone: bool = True
    measured: bool = False  # rests on a measurement (times, bandwidth), not on the setup

    def __init__(
        self,
        name: str,
        id: str,
        weight: float,
        text: str,
        evidence: list[Evidence] | None = None,
        params: dict[str, str] | None = None,
        alone: bool = True,
        measured: bool = False,
    ) -> None:
        self.name = name
        self.id = id
        self.weight = weight
        self.text = text
        self.evidence = [] if evidence is None else evidence
        self.params = {} if params is None else params
        self.alone = alone
        self.measured = measured


@record()
class Report:
    findings: list[Finding] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    shows: list[str] = field(default_factory=list)  # finding names that show a symptom

    def __init__(
        self,
        findings: list[Finding] | None = None,
        notes: list[Note] | None = None,
        shows: list[str] | None = None,
    ) -> None:
        self.findings = [] if findings is None else findings
        self.notes = [] if notes is None else notes
        self.shows = [] if shows is None else shows


Facts = dict[str, Any]


class Analyzer:
    """Base class: counts deliveries per tap so that `wants` can cap them."""

    name = ""
    taps: tuple[Tap, ...] = ()

    def __init__(self) -> None:
        self.delivered: Counter[str] = Counter()
        self._caps = {t.id: t.cap for t in self.taps}
        self.file = ""

    def wants(self, tap: str) -> bool:
        return self.delivered[tap] < self._caps.get(tap, 0)

    def deliver(self, tap: str, line_no: int, text: str) -> None:
        if not tap.endswith(":follow"):
            self.delivered[tap] += 1
        self.feed(tap, line_no, text)

    def start_file(self, file: str) -> None:
        self.file = file

    def feed(self, tap: str, line_no: int, text: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def end_file(self, tail: list[tuple[int, str]]) -> None:
        """The last lines of the log just read, as (line number, text): what it ends with."""

    def finish(self, facts: Facts) -> Report:
        return Report()

    def evidence(
        self, line_no: int, text: str, start: int = 0, end: int = 0, what: str = ""
    ) -> Evidence:
        return Evidence(
            self.file,
            line_no,
            text,
            start,
            end or len(text),
            f"{self.name}/{what}" if what else self.name,
        )
