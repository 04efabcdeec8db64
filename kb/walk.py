"""The decision-tree walk: from a symptom (or a diagnosed log) to a fix, one step at a time.

Why it exists: a user mid-incident should be asked the one question, or run the one
check, most likely to settle the matter for the least effort, and see why each cause
is still in the running or was ruled out. This module is that reasoning, without any
user interface, so the TUI, tests and a future CLI share it.

The model is the single-fault one of decision-theoretic troubleshooting (Heckerman,
Breese and Rommelse, 1995): exactly one of the candidate causes (or something the
knowledge base does not know, `OTHER`) is behind the symptom.

- Belief: each candidate starts at the odds of its rule's `prior` (p / (1 - p)); a
  cause the diagnosis found in the log starts at the odds of its confidence instead.
  `OTHER` starts at `OTHER_ODDS`. Probabilities are odds normalised over the causes
  still standing.
- Steps: the symptom's questions and the candidates' checks. A step's *p* is the
  probability that it settles the matter: the mass of the open causes one of its
  outcomes confirms (a check confirms its cause when it fails and rules it out when it
  passes, unless the rule says otherwise), plus half the mass of causes it can only
  rule out. Steps are proposed in decreasing p / cost (the p/C rule), ties to the
  cheaper step.
- Evidence: an outcome that rules a cause out removes it (and says why), except a
  cause the log shows, whose odds are divided by `CONFIRM_FACTOR` instead (a check can
  miss what the log saw); an outcome that confirms multiplies the odds by it.
- End: a confirmed cause holding `SETTLED` of the belief is settled; with no step left
  the most likely cause is offered when it holds more than half, otherwise, and when
  every candidate is ruled out, the walk says the case is not in the knowledge base yet.

The state is recomputed by replaying the list of events, so undo is dropping the last.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from kb.knowledge import KnowledgeBase
from kb.schema.models import Check, Question, text_of

if TYPE_CHECKING:
    from kb.diagnosis.model import Diagnosis

OTHER = "(other)"  # the cause the knowledge base does not know
OTHER_ODDS = 0.1
CONFIRM_FACTOR = 20.0
SETTLED = 0.8
LIKELY_END = 0.5
RULE_OUT_ONLY_WEIGHT = 0.5
MAX_CONFIDENCE = 0.99

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
    question: Question | None = None
    check: Check | None = None
    cause: str | None = None  # the cause a check belongs to

    @property
    def efficiency(self) -> float:
        return self.p_settle / self.cost

    @property
    def causes(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for o in self.outcomes:
            for c in (*o.confirms, *o.rules_out):
                seen.setdefault(c, None)
        return tuple(seen)

    def outcome(self, outcome_id: str) -> Outcome:
        for o in self.outcomes:
            if o.id == outcome_id:
                return o
        raise KeyError(f"step '{self.id}' has no outcome '{outcome_id}'")


@dataclass
class CheckRecord:
    """A check as it was run (or pasted): what ran where, what came back, the verdict."""

    check_id: str
    title: str
    command: str
    host: str  # "local", a node as the user named it, or "pasted"
    output: str
    status: str  # pass | fail | unavailable | error | skipped
    exit_code: int | None = None
    finding: str | None = None
    reason: str = ""
    params: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


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
    record: CheckRecord | None = None

    def summary(self) -> str:
        if self.kind == "answer":
            return f"{_short(self.step_title)} → {self.outcome_text}"
        if self.kind == "check":
            return f"check {self.step_id} → {self.outcome}" + (
                f" ({self.outcome_text})" if self.outcome_text else ""
            )
        if self.kind == "skip":
            return f"skipped: {_short(self.step_title)}"
        return f"chose: {self.outcome_text}"


@dataclass
class Belief:
    """Where one cause stands."""

    id: str
    title: str
    p: float
    status: Status
    reasons: list[str] = field(default_factory=list)
    diagnosed: float | None = None  # the diagnosis confidence, when the log showed it


@dataclass
class Conclusion:
    kind: EndKind
    cause: str | None
    fixes: list[str]
    ruled_out: list[Belief]
    remaining: list[Belief]

    @property
    def known(self) -> bool:
        return self.cause is not None


class WalkError(ValueError):
    """A step or answer the walk does not know (a bug in the caller, or a stale screen)."""


def _short(text: str, limit: int = 80) -> str:
    """A question cut to its asking sentence, for reasons and the path."""
    one = " ".join(text.split())
    sentences = re.split(r"(?<=[.?!])\s+", one)
    asking = next((s for s in sentences if s.endswith("?")), sentences[0])
    return asking if len(asking) <= limit else asking[: limit - 1] + "…"


def _odds(p: float) -> float:
    p = min(max(p, 1e-6), MAX_CONFIDENCE)
    return p / (1.0 - p)


class Walk:
    """A walk through the decision tree for one symptom, or for what a log revealed."""

    def __init__(
        self,
        kb: KnowledgeBase,
        symptom: str | None = None,
        diagnosis: Diagnosis | None = None,
        lang: str = "en",
    ) -> None:
        self.kb = kb
        self.lang = lang
        self.diagnosis = diagnosis
        symptoms: list[str] = []
        if symptom is not None:
            if symptom not in kb.symptoms:
                raise WalkError(f"unknown symptom '{symptom}'")
            symptoms.append(symptom)
        diagnosed: dict[str, float] = {}
        self.base_params: dict[str, str] = {}
        if diagnosis is not None:
            for c in diagnosis.causes:
                if c.id in kb.causes:
                    diagnosed.setdefault(c.id, c.confidence)
                    for k, v in c.params.items():
                        self.base_params.setdefault(k, v)
            for s in diagnosis.symptoms:
                if s in kb.symptoms and s not in symptoms:
                    symptoms.append(s)
        self.symptoms = symptoms
        candidates: dict[str, None] = dict.fromkeys(diagnosed)
        for s in symptoms:
            for c in kb.causes_of(s):
                candidates.setdefault(c.id, None)
        self.candidates = list(candidates)
        self.diagnosed = diagnosed
        self.events: list[Event] = []
        self._version = -1
        self._state: tuple[dict[str, Belief], dict[str, str], float] | None = None

    # ------------------------------------------------------------ state

    @property
    def started(self) -> bool:
        return bool(self.events)

    def _compute(self) -> tuple[dict[str, Belief], dict[str, str], float]:
        if self._state is not None and self._version == len(self.events):
            return self._state
        odds: dict[str, float] = {}
        beliefs: dict[str, Belief] = {}
        for cid in self.candidates:
            cause = self.kb.causes[cid]
            conf = self.diagnosed.get(cid)
            odds[cid] = _odds(conf if conf is not None else cause.prior)
            b = Belief(cid, text_of(cause.title, self.lang), 0.0, "open", diagnosed=conf)
            if conf is not None:
                b.reasons.append(f"the log shows it (confidence {conf:.2f})")
            beliefs[cid] = b
        params = dict(self.base_params)
        for ev in self.events:
            because = self._because(ev)
            for cid in ev.rules_out:
                if cid not in beliefs or beliefs[cid].status == "ruled_out":
                    continue
                if cid in self.diagnosed:  # the log says otherwise: weaken, don't discard
                    odds[cid] /= CONFIRM_FACTOR
                    beliefs[cid].reasons.append(
                        f"less likely because {because}, but the log still shows it"
                    )
                    continue
                odds[cid] = 0.0
                beliefs[cid].status = "ruled_out"
                beliefs[cid].reasons.append(f"ruled out because {because}")
            for cid in ev.confirms:
                if cid in beliefs and beliefs[cid].status != "ruled_out":
                    odds[cid] *= CONFIRM_FACTOR
                    beliefs[cid].status = "confirmed"
                    beliefs[cid].reasons.append(f"confirmed because {because}")
            if ev.record is not None:
                params.update(ev.record.params)
        total = sum(odds.values()) + OTHER_ODDS
        for cid, b in beliefs.items():
            b.p = odds[cid] / total
        self._state = (beliefs, params, OTHER_ODDS / total)
        self._version = len(self.events)
        return self._state

    @staticmethod
    def _because(ev: Event) -> str:
        if ev.kind == "answer":
            return f"you answered “{ev.outcome_text}” to “{_short(ev.step_title)}”"
        if ev.kind == "check" and ev.record is not None:
            r = ev.record
            where = "in the output you pasted" if r.host == "pasted" else f"on {r.host}"
            verdict = {"pass": "passed", "fail": "failed"}.get(r.status, r.status)
            finding = f": {r.finding}" if r.finding else ""
            return f"the check “{ev.step_title}” {verdict} {where}{finding}"
        return "you chose it"

    def beliefs(self) -> list[Belief]:
        """Every candidate, most likely first; ruled-out causes last."""
        beliefs, _, _ = self._compute()
        order = {"confirmed": 0, "open": 1, "ruled_out": 2}
        return sorted(
            beliefs.values(), key=lambda b: (b.status == "ruled_out", -b.p, order[b.status], b.id)
        )

    def belief(self, cause_id: str) -> Belief:
        return self._compute()[0][cause_id]

    @property
    def p_other(self) -> float:
        """Probability that the cause is not in the knowledge base."""
        return self._compute()[2]

    @property
    def params(self) -> dict[str, str]:
        """Values known so far: from the log's evidence, then from checks' outputs."""
        return dict(self._compute()[1])

    # ------------------------------------------------------------ steps

    def _all_steps(self) -> Iterable[Step]:
        for sid in self.symptoms:
            for q in self.kb.symptoms[sid].questions:
                yield Step(
                    "question",
                    q.id,
                    text_of(q.text, self.lang),
                    q.cost,
                    tuple(
                        Outcome(
                            a.id, text_of(a.text, self.lang), tuple(a.confirms), tuple(a.rules_out)
                        )
                        for a in q.answers
                    ),
                    help=text_of(q.help, self.lang),
                    question=q,
                )
        seen: set[str] = set()
        for cid in self.candidates:
            for chk in self.kb.checks_of(cid):
                if chk.id in seen:
                    continue
                seen.add(chk.id)
                yield self._check_step(chk, cid)

    def _check_step(self, chk: Check, cid: str) -> Step:
        owners = [c for c in self.candidates if any(x.id == chk.id for x in self.kb.checks_of(c))]
        owners = owners or [cid]
        fail = chk.on_problem or None
        ok = chk.on_ok or None
        outcomes = (
            Outcome(
                "fail",
                text_of(chk.means, self.lang),
                tuple(fail.confirms) if fail else tuple(owners),
                tuple(fail.rules_out) if fail else (),
            ),
            Outcome(
                "pass",
                "the node is healthy on this point",
                tuple(ok.confirms) if ok else (),
                tuple(ok.rules_out) if ok else tuple(owners),
            ),
        )
        return Step(
            "check",
            chk.id,
            text_of(chk.title, self.lang),
            chk.cost,
            outcomes,
            help=text_of(chk.means, self.lang),
            check=chk,
            cause=owners[0],
        )

    def _done_steps(self) -> set[str]:
        return {ev.step_id for ev in self.events if ev.kind in ("answer", "check", "skip")}

    def steps(self) -> list[Step]:
        """The steps still worth taking, best p/C first."""
        beliefs, _, _ = self._compute()
        done = self._done_steps()
        ranked: list[Step] = []
        for step in self._all_steps():
            if step.id in done:
                continue
            confirmable: set[str] = set()
            removable: set[str] = set()
            for o in step.outcomes:
                confirmable.update(c for c in o.confirms if c in beliefs)
                removable.update(c for c in o.rules_out if c in beliefs)
            open_ = {c for c, b in beliefs.items() if b.status == "open"}
            p = sum(beliefs[c].p for c in confirmable & open_)
            p += RULE_OUT_ONLY_WEIGHT * sum(beliefs[c].p for c in (removable - confirmable) & open_)
            if p <= 0:
                continue
            ranked.append(replace(step, p_settle=p))
        ranked.sort(key=lambda s: (-s.efficiency, s.cost, s.kind != "check", s.id))
        return ranked

    def step(self, step_id: str) -> Step:
        for s in self._all_steps():
            if s.id == step_id:
                return s
        raise WalkError(f"no step '{step_id}' in this walk")

    def next_step(self) -> Step | None:
        """The step to propose now, or None when the walk has reached its end."""
        if self.conclusion() is not None:
            return None
        steps = self.steps()
        return steps[0] if steps else None

    # ------------------------------------------------------------ events

    def answer(self, question_id: str, answer_id: str) -> Event:
        step = self.step(question_id)
        if step.kind != "question":
            raise WalkError(f"'{question_id}' is a check, not a question")
        o = step.outcome(answer_id)
        return self._push(
            Event("answer", step.id, step.title, o.id, o.text, o.confirms, o.rules_out)
        )

    def record_check(self, record: CheckRecord) -> Event:
        """A check's verdict: `fail` and `pass` move the belief, other statuses only note it."""
        step = self.step(record.check_id)
        confirms: tuple[str, ...] = ()
        rules_out: tuple[str, ...] = ()
        if record.status in ("fail", "pass"):
            o = step.outcome(record.status)
            confirms, rules_out = o.confirms, o.rules_out
        text = record.finding or record.reason
        return self._push(
            Event("check", step.id, step.title, record.status, text, confirms, rules_out, record)
        )

    def skip(self, step_id: str) -> Event:
        step = self.step(step_id)
        return self._push(Event("skip", step.id, step.title, "skipped"))

    def choose(self, cause_id: str) -> Event:
        """The user takes this cause's fix now (the walk ends there; undo to go on)."""
        if cause_id not in self.kb.causes:
            raise WalkError(f"unknown cause '{cause_id}'")
        if cause_id not in self.candidates:
            self.candidates.append(cause_id)
        title = text_of(self.kb.causes[cause_id].title, self.lang)
        return self._push(Event("choose", cause_id, title, cause_id, title))

    def undo(self) -> Event | None:
        if not self.events:
            return None
        ev = self.events.pop()
        self._state = None
        return ev

    def _push(self, ev: Event) -> Event:
        self.events.append(ev)
        self._state = None
        return ev

    @property
    def path(self) -> list[Event]:
        return list(self.events)

    # ------------------------------------------------------------ the end

    def conclusion(self) -> Conclusion | None:
        """Where the walk ended, or None while it should go on."""
        beliefs = self.beliefs()
        ruled_out = [b for b in beliefs if b.status == "ruled_out"]
        standing = [b for b in beliefs if b.status != "ruled_out"]
        if self.events and self.events[-1].kind == "choose":
            cid = self.events[-1].outcome
            return Conclusion("chosen", cid, list(self.kb.causes[cid].fixes), ruled_out, standing)
        top = standing[0] if standing else None
        if top is not None and top.status == "confirmed" and top.p >= SETTLED:
            return Conclusion(
                "settled", top.id, list(self.kb.causes[top.id].fixes), ruled_out, standing
            )
        if not standing:
            return Conclusion("unknown", None, [], ruled_out, [])
        if self._any_step_left():
            return None
        if top is not None and top.p > LIKELY_END and top.p > self.p_other:
            return Conclusion(
                "likely", top.id, list(self.kb.causes[top.id].fixes), ruled_out, standing
            )
        return Conclusion("unknown", None, [], ruled_out, standing)

    def _any_step_left(self) -> bool:
        return bool(self.steps())
