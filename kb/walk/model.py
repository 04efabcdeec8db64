"""What a walk is made of: the steps it offers, their outcomes, the events of the path
taken, where each cause stands and where the walk ended.

Why its own module: the walk's reasoning (`engine.py`, `beliefs.py`, `steps.py`) and what
shows or records it (the TUI, the session runbook, the batch walk) share these records
without sharing the reasoning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from kb.checks.model import CheckResult
from kb.rules.schema.models import Check, Question

StepKind = Literal["question", "check"]
EventKind = Literal["answer", "check", "skip", "choose"]
Status = Literal["open", "confirmed", "ruled_out"]
EndKind = Literal["settled", "chosen", "likely", "unknown"]


@dataclass(frozen=True)
class Outcome:
    """One possible result of a step and what it does to the causes."""

    id: str
    text: str
    confirms: tuple[str, ...] = ()
    rules_out: tuple[str, ...] = ()
    ratios: tuple[tuple[str, float], ...] = ()  # a check's likelihood ratio per cause
    sets: tuple[tuple[str, str], ...] = ()  # values an answer establishes


@dataclass(frozen=True)
class Step:
    """A question to ask or a check to run, with its place in the p/C order."""

    kind: StepKind
    id: str
    title: str
    cost: float
    outcomes: tuple[Outcome, ...]
    p_settle: float = 0.0
    help: str = ""
    check: Check | None = None
    cause: str | None = None  # the cause a check belongs to
    question: Question | None = None

    @property
    def key(self) -> str:
        """Unique within a walk: a question and a check may share an id."""
        return f"{self.kind}:{self.id}"

    @property
    def efficiency(self) -> float:
        return self.p_settle / self.cost

    def outcome(self, outcome_id: str) -> Outcome:
        found = [o for o in self.outcomes if o.id == outcome_id]
        if not found:
            raise KeyError(f"step '{self.id}' has no outcome '{outcome_id}'")
        return found[0]


@dataclass
class Event:
    """One step of the path taken."""

    kind: EventKind
    step_id: str
    step_title: str
    outcome: str = ""  # answer id, check status, or chosen cause
    outcome_text: str = ""
    confirms: tuple[str, ...] = ()
    rules_out: tuple[str, ...] = ()
    record: CheckResult | None = None
    step_kind: str = ""  # what was skipped: "question" or "check"
    ratios: tuple[tuple[str, float], ...] = ()
    sets: tuple[tuple[str, str], ...] = ()

    @property
    def step_key(self) -> str:
        kind = {"answer": "question", "check": "check"}.get(self.kind, self.step_kind)
        return f"{kind}:{self.step_id}"

    def summary(self) -> str:
        """One line of the path: what was asked or run, and what came of it."""
        found = f" ({self.outcome_text})" if self.outcome_text else ""
        return {
            "answer": f"{short(self.step_title)} → {self.outcome_text}",
            "check": f"check {self.step_id} → {self.outcome}{found}",
            "skip": f"skipped: {short(self.step_title)}",
        }.get(self.kind, f"chose: {self.outcome_text}")


@dataclass
class Belief:
    """Where one cause stands."""

    id: str
    title: str
    p: float
    status: Status
    reasons: list[str] = field(default_factory=list)


@dataclass
class Conclusion:
    """Where a walk ended: a cause and its fixes, or (`unknown`) none."""

    kind: EndKind
    cause: str | None
    fixes: list[str]
    ruled_out: list[Belief]
    remaining: list[Belief]


class WalkError(ValueError):
    """A step or answer the walk does not know (a bug in the caller, or a stale screen)."""


def short(text: str, limit: int = 80) -> str:
    """A question cut to its asking sentence, for reasons and the path."""
    sentences = re.split(r"(?<=[.?!])\s+", " ".join(text.split()))
    asking = next((s for s in sentences if s.endswith("?")), sentences[0])
    return asking if len(asking) <= limit else asking[: limit - 1] + "…"
