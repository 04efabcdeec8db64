"""The decision-tree walk: from a symptom (or a diagnosed log) to a fix, one step at a time.

Why: mid-incident, a user should get the one question or check most likely to settle the
matter for the least effort, and see why each cause stands or fell. This is that
reasoning without a user interface, shared by the TUI, the tests and any future CLI.

Model: single fault, as in decision-theoretic troubleshooting (Heckerman, Breese and
Rommelse, 1995): one candidate cause, or something the rules do not know (`OTHER`), is
behind the symptom. Each cause starts at the odds of its `prior` (of its confidence when
the log showed it), `OTHER` at `OTHER_ODDS`; probabilities are odds normalised.
An answer confirms (odds times `CONFIRM_FACTOR`) or rules out what the rule says. A check
is evidence worth what it can show: its outcome multiplies each cause's odds by the
likelihood ratio, P(outcome | cause) / P(outcome | not cause), from the check's
`sensitivity` and `false_alarm` (defaults by kind: `DEFAULT_LIKELIHOOD`). For a cause the
log proves, a check that does not test the variant the log saw (its `shows` lists none of
the signatures that fired) is nearly blind: its sensitivity shrinks towards its false-alarm
rate (`BLIND_WEIGHT`), so it barely moves the cause. A check that did not run (unavailable,
error, skipped) moves nothing. A pass with a ratio at or below `RULE_OUT_RATIO` rules out a
cause the log does not show; a fail at or above `CONFIRM_RATIO` confirms (any fail that
agrees with a cause the log shows does).
A step's *p* is the mass of open causes an outcome confirms, each weighted by what the
check can tell (sensitivity minus false alarms; 1 for an answer), plus half the mass it
can only rule out; steps go in decreasing p / cost (the p/C rule), ties to the cheaper.
Checks with `applies_if` are offered only once the log, an answer or a check gave a
matching value (or the log shows their cause).
The walk is settled when a confirmed cause holds `SETTLED`; with no step left it offers a
cause above `LIKELY_END`, else says honestly the case is not in the knowledge base yet.
State is recomputed by replaying the events, so undo is dropping the last one.

Where each part lives: this module keeps the walk (candidates, the path, the end);
`model.py` the records (steps, outcomes, events, beliefs, conclusions); `beliefs.py` the
update rule; `steps.py` the steps made from the rules and their p/C order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kb.checks.model import CheckResult
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Check, Question, text_of
from kb.walk import beliefs as update
from kb.walk import steps as offer
from kb.walk.beliefs import (
    BLIND_WEIGHT,
    CONFIRM_FACTOR,
    CONFIRM_RATIO,
    DEFAULT_LIKELIHOOD,
    OTHER,
    OTHER_ODDS,
    RULE_OUT_RATIO,
    SETTLED,
    State,
)
from kb.walk.model import Belief, Conclusion, Event, Outcome, Step, WalkError
from kb.walk.steps import HEALTHY

if TYPE_CHECKING:
    from kb.diagnosis.model import Diagnosis

__all__ = [  # the walk's names, as its callers import them from here
    "BLIND_WEIGHT", "CONFIRM_FACTOR", "CONFIRM_RATIO", "DEFAULT_LIKELIHOOD", "HEALTHY",
    "LIKELY_END", "OTHER", "OTHER_ODDS", "RULE_OUT_RATIO", "SETTLED", "Belief", "Conclusion",
    "Event", "Outcome", "Step", "Walk", "WalkError",
]  # fmt: skip

LIKELY_END = 0.5


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
        if symptom is not None and symptom not in kb.symptoms:
            raise WalkError(f"unknown symptom '{symptom}'")
        symptoms = [symptom] if symptom is not None else []
        diagnosed: dict[str, float] = {}
        self.base_params: dict[str, str] = {}
        if diagnosis is not None:
            for found in diagnosis.causes:
                if found.id in kb.causes:
                    diagnosed.setdefault(found.id, found.confidence)
                    for k, v in found.params.items():
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
        self.fired: dict[str, set[str]] = {}  # cause -> the signature ids the log fired
        for found in diagnosis.causes if diagnosis is not None else []:
            sigs = {e.signature.split("/", 1)[-1] for e in found.evidence if e.signature}
            self.fired.setdefault(found.id, set()).update(sigs)
        self.events: list[Event] = []
        self._state: State | None = None

    def _compute(self) -> State:
        if self._state is None:  # cleared by every change to the events
            self._state = update.replay(
                self.kb, self.candidates, self.diagnosed, self.base_params, self.events, self.lang
            )
        return self._state

    def likelihood(self, chk: Check, cause_id: str) -> tuple[float, float]:
        """(sensitivity, false-alarm rate) of a check towards one cause, as this walk sees it:
        nearly blind towards a log-proven cause whose variant it does not test."""
        return update.likelihood(chk, cause_id, self.diagnosed, self.fired)

    def applies(
        self, chk: Check | Question, owners: tuple[str, ...], params: dict[str, str]
    ) -> bool:
        """A check (or a question) bound to a framework, a launcher or an error waits until
        the log shows its cause, or a value from the log, an answer or a check says so."""
        if any(c in self.diagnosed for c in owners):
            return True
        return all(params.get(k) in allowed for k, allowed in chk.applies_if.items())

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

    def _all_steps(self, offered_only: bool = False) -> Iterable[Step]:
        shown: set[str] = set()  # two symptoms may share a question, two causes a check
        questions = (q for sid in self.symptoms for q in self.kb.symptoms[sid].questions)
        checks = ((chk, cid) for cid in self.candidates for chk in self.kb.checks_of(cid))
        params = self.params if offered_only else {}
        for step in (*map(self._question_step, questions), *(self._check_step(*c) for c in checks)):
            if step.key in shown:
                continue
            shown.add(step.key)
            if offered_only and step.check is not None:
                owners = tuple(c for o in step.outcomes for c, _ in o.ratios)
                if not self.applies(step.check, owners, params):
                    continue
            if offered_only and step.question is not None:
                owners = tuple(c for o in step.outcomes for c in o.confirms)
                if not self.applies(step.question, owners, params):
                    continue
            yield step

    def _question_step(self, q: Question) -> Step:
        return offer.question_step(q, self.lang)

    def _check_step(self, chk: Check, cid: str) -> Step:
        return offer.check_step(self.kb, self.candidates, chk, cid, self.lang, self.likelihood)

    def _done_steps(self) -> set[str]:
        return {ev.step_key for ev in self.events if ev.kind in ("answer", "check", "skip")}

    def steps(self) -> list[Step]:
        """The steps still worth taking, best p/C first."""
        beliefs, _, _ = self._compute()
        offered = self._all_steps(offered_only=True)
        return offer.ranked(offered, beliefs, self._done_steps(), self.likelihood)

    def step(self, step_id: str, kind: str | None = None) -> Step:
        """A step by its key (`check:list-interfaces`), or by id and kind."""
        if kind is None and ":" in step_id:
            kind, step_id = step_id.split(":", 1)
        for s in self._all_steps():
            if s.id == step_id and kind in (None, s.kind):
                return s
        raise WalkError(f"no step '{step_id}' in this walk")

    def next_step(self) -> Step | None:
        """The step to propose now, or None when the walk has reached its end."""
        if self.conclusion() is not None:
            return None
        steps = self.steps()
        return steps[0] if steps else None

    def answer(self, question_id: str, answer_id: str) -> Event:
        step = self.step(question_id, "question")
        o = step.outcome(answer_id)
        ev = Event("answer", step.id, step.title, o.id, o.text, o.confirms, o.rules_out)
        ev.sets = o.sets
        return self._push(ev)

    def record_check(self, record: CheckResult) -> Event:
        """A check's verdict: `fail` and `pass` move the belief, other statuses only note it."""
        step = self.step(record.id, "check")
        moved = record.status in ("fail", "pass")
        o = step.outcome(record.status) if moved else Outcome(record.status, "")
        text = record.finding or record.reason
        ev = Event("check", step.id, step.title, record.status, text, o.confirms, o.rules_out)
        ev.record = record
        ev.ratios = o.ratios
        return self._push(ev)

    def skip(self, step_id: str) -> Event:
        """Skip a step, named by its key (or its id when that is unambiguous)."""
        step = self.step(step_id)
        return self._push(Event("skip", step.id, step.title, "skipped", step_kind=step.kind))

    def choose(self, cause_id: str) -> Event:
        """The user takes this cause's fix now (the walk ends there; undo to go on)."""
        if cause_id not in self.kb.causes:
            raise WalkError(f"unknown cause '{cause_id}'")
        if cause_id not in self.candidates:
            self.candidates.append(cause_id)
        title = text_of(self.kb.causes[cause_id].title, self.lang)
        return self._push(Event("choose", cause_id, title, cause_id, title))

    def undo(self) -> Event | None:
        """Take back the last step (None when there is none)."""
        self._state = None
        return self.events.pop() if self.events else None

    def know(self, values: dict[str, str]) -> None:
        """Values known from outside the log (a survey's NIC advice); the log's own win."""
        for k, v in values.items():
            self.base_params.setdefault(k, v)
        self._state = None

    def redo(self, ev: Event) -> Event:
        """Put back an event that `undo` took (replaying a path step by step)."""
        return self._push(ev)

    def _push(self, ev: Event) -> Event:
        self.events.append(ev)
        self._state = None
        return ev

    @property
    def path(self) -> list[Event]:
        return list(self.events)

    def conclusion(self) -> Conclusion | None:
        """Where the walk ended, or None while it should go on."""
        beliefs = self.beliefs()
        ruled_out = [b for b in beliefs if b.status == "ruled_out"]
        standing = [b for b in beliefs if b.status != "ruled_out"]
        if self.events and self.events[-1].kind == "choose":
            cid = self.events[-1].outcome
            return Conclusion("chosen", cid, list(self.kb.causes[cid].fixes), ruled_out, standing)
        if not standing:
            return Conclusion("unknown", None, [], ruled_out, [])
        top = standing[0]
        fixes = list(self.kb.causes[top.id].fixes)
        if top.status == "confirmed" and top.p >= SETTLED:
            return Conclusion("settled", top.id, fixes, ruled_out, standing)
        if self.steps():
            return None
        if top.p > LIKELY_END and top.p > self.p_other:
            return Conclusion("likely", top.id, fixes, ruled_out, standing)
        return Conclusion("unknown", None, [], ruled_out, standing)
