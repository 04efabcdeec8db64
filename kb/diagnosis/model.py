"""The result of a diagnosis, shaped as the `diagnose --json` contract.

The classes are records (`kb.util.record`: each writes its `__init__`): every
`diagnose` imports them, and `@dataclass` would compile their methods at each start.
"""

from __future__ import annotations

from typing import Any

from kb.util.record import field, record

EVIDENCE_TEXT_MAX = 500


@record()
class Evidence:
    file: str  # as the user named it; "-" for standard input
    line: int  # 1-based
    text: str  # ANSI codes removed
    start: int = 0  # the matching span within text
    end: int = 0
    signature: str = ""  # "<rule id>/<signature id>" or an analyzer's name

    def __init__(
        self, file: str, line: int, text: str, start: int = 0, end: int = 0, signature: str = ""
    ) -> None:
        self.file = file
        self.line = line
        self.text = text
        self.start = start
        self.end = end
        self.signature = signature

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.shown()[0]}

    def shown(self, width: int = EVIDENCE_TEXT_MAX) -> tuple[str, int, int]:
        """The text cut to `width` characters around the match, and the match's span in it."""
        text, start, end = self.text, self.start, self.end
        if len(text) <= width:
            return text, start, end
        left = 0 if end <= width - 1 else min(max(0, start - width // 4), len(text) - width)
        window = text[left : left + width]
        if left > 0:
            window = "…" + window[1:]
        if left + width < len(text):
            window = window[:-1] + "…"
        return window, max(0, start - left), max(0, min(width, end - left))


BASIS_EVIDENCE = "evidence"  # lines of the logs point at this cause
BASIS_SYMPTOM = "symptom"  # only a symptom shows; this is one of its probable causes
BASIS_APPROXIMATE = "approximate"  # no signature fired; the text is close to a known message
BASIS_OBSERVATION = "observation"  # nothing failed; a pasted line is a known sign of this cause
BASIS_DESCRIBED = "described"  # no line names a cause; the prose describes this one


@record()
class Approximate:
    """The known message closest to a line the user typed or pasted, and how close."""

    text: str  # the user's line
    known: str  # the known message (a rule's example or a catalogue template)
    score: float  # similarity, 0-100, numbers/addresses/paths masked on both sides
    source: str  # "rules/<rule id>" or "catalogue/<library>"

    def __init__(self, text: str, known: str, score: float, source: str) -> None:
        self.text = text
        self.known = known
        self.score = score
        self.source = source

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "known": self.known,
            "score": round(self.score, 1),
            "source": self.source,
        }


@record()
class CauseResult:
    id: str
    title: str
    confidence: float
    evidence: list[Evidence] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)
    fixes: list[str] = field(default_factory=list)
    explanation: str = ""
    basis: str = BASIS_EVIDENCE
    symptom: str = ""  # for a symptom-level candidate: the symptom it would explain
    approximate: Approximate | None = None  # for an approximate match: the closest message

    def __init__(
        self,
        id: str,
        title: str,
        confidence: float,
        evidence: list[Evidence] | None = None,
        params: dict[str, str] | None = None,
        fixes: list[str] | None = None,
        explanation: str = "",
        basis: str = BASIS_EVIDENCE,
        symptom: str = "",
        approximate: Approximate | None = None,
    ) -> None:
        self.id = id
        self.title = title
        self.confidence = confidence
        self.evidence = [] if evidence is None else evidence
        self.params = {} if params is None else params
        self.fixes = [] if fixes is None else fixes
        self.explanation = explanation
        self.basis = basis
        self.symptom = symptom
        self.approximate = approximate

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "confidence": round(self.confidence, 3),
            "evidence": [e.to_json() for e in self.evidence],
            "params": dict(self.params),
            "fixes": list(self.fixes),
        }
        if self.basis != BASIS_EVIDENCE:
            out["basis"] = self.basis
            out["symptom"] = self.symptom
        if self.approximate is not None:
            out["approximate"] = self.approximate.to_json()
        if explain:
            out["explanation"] = self.explanation
        return out


@record()
class Note:
    id: str
    text: str
    evidence: list[Evidence] = field(default_factory=list)

    def __init__(self, id: str, text: str, evidence: list[Evidence] | None = None) -> None:
        self.id = id
        self.text = text
        self.evidence = [] if evidence is None else evidence

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "evidence": [e.to_json() for e in self.evidence]}


@record()
class Stats:
    files: int = 0
    lines: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def __init__(
        self, files: int = 0, lines: int = 0, bytes: int = 0, seconds: float = 0.0
    ) -> None:
        self.files = files
        self.lines = lines
        self.bytes = bytes
        self.seconds = seconds

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "lines": self.lines,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
        }


@record()
class Diagnosis:
    causes: list[CauseResult] = field(default_factory=list)
    symptoms: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    errors: list[dict[str, str]] = field(default_factory=list)
    first_failure: dict[str, Any] | None = None
    cancelled: bool = False  # the scan was stopped before the end of the logs
    failure: Any = None  # kb.diagnosis.failure.FailureSeen: a failure is seen in the logs
    # causes whose notes the logs show (their signatures fired without making them likely),
    # strongest first: an excerpt that is only these lines asks about them (engine.py)
    observed: list[CauseResult] = field(default_factory=list, repr=False)

    def __init__(
        self,
        causes: list[CauseResult] | None = None,
        symptoms: list[str] | None = None,
        notes: list[Note] | None = None,
        stats: Stats | None = None,
        errors: list[dict[str, str]] | None = None,
        first_failure: dict[str, Any] | None = None,
        cancelled: bool = False,
        failure: Any = None,
        observed: list[CauseResult] | None = None,
    ) -> None:
        self.causes = [] if causes is None else causes
        self.symptoms = [] if symptoms is None else symptoms
        self.notes = [] if notes is None else notes
        self.stats = Stats() if stats is None else stats
        self.errors = [] if errors is None else errors
        self.first_failure = first_failure
        self.cancelled = cancelled
        self.failure = failure
        self.observed = [] if observed is None else observed

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "causes": [c.to_json(explain) for c in self.causes],
            "symptoms": list(self.symptoms),
            "notes": [n.to_json() for n in self.notes],
            "stats": self.stats.to_json(),
        }
        if self.errors:
            out["errors"] = list(self.errors)
        if self.first_failure:
            out["first_failure"] = dict(self.first_failure)
        if self.cancelled:
            out["cancelled"] = True
        if self.failure is not None:
            out["failure"] = self.failure.to_json()
        return out

    @property
    def found(self) -> bool:
        """True when the logs show a problem: a cause, or a failure (exit status 1)."""
        return bool(self.causes) or self.failure is not None
