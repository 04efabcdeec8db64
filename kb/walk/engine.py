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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from kb.checks.model import CheckResult
from kb.diagnosis.percent import confidence_text
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Check, Question, text_of

if TYPE_CHECKING:
    from kb.diagnosis.model import Diagnosis

OTHER = "(other)"  # the cause the knowledge base does not know
OTHER_ODDS = 0.1
CONFIRM_FACTOR = 20.0
SETTLED = 0.8
LIKELY_END = 0.5
RULE_OUT_ONLY_WEIGHT = 0.5
MAX_CONFIDENCE = 0.99
HEALTHY = "the node is healthy on this point"
# (sensitivity, false-alarm rate) of a check whose rule gives none, by kind
DEFAULT_LIKELIHOOD = {
    "node": (0.9, 0.05),  # a read-only look at one node
    "pair": (0.9, 0.05),  # a probe from each node to each other
    "test": (0.95, 0.05),  # a test run (not read-only): closer to the real job
}
BLIND_WEIGHT = 0.1  # what is left of a check's power on a variant it does not test
CONFIRM_RATIO = 5.0
RULE_OUT_RATIO = 0.2

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
            "answer": f"{_short(self.step_title)} → {self.outcome_text}",
            "check": f"check {self.step_id} → {self.outcome}{found}",
            "skip": f"skipped: {_short(self.step_title)}",
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


def _short(text: str, limit: int = 80) -> str:
    """A question cut to its asking sentence, for reasons and the path."""
    sentences = re.split(r"(?<=[.?!])\s+", " ".join(text.split()))
    asking = next((s for s in sentences if s.endswith("?")), sentences[0])
    return asking if len(asking) <= limit else asking[: limit - 1] + "…"


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
        self._state: tuple[dict[str, Belief], dict[str, str], float] | None = None

    def _compute(self) -> tuple[dict[str, Belief], dict[str, str], float]:
        if self._state is not None:  # cleared by every change to the events
            return self._state
        odds: dict[str, float] = {}
        beliefs: dict[str, Belief] = {}
        for cid in self.candidates:
            cause = self.kb.causes[cid]
            conf = self.diagnosed.get(cid)
            p = min(max(conf if conf is not None else cause.prior, 1e-6), MAX_CONFIDENCE)
            odds[cid] = p / (1.0 - p)
            b = Belief(cid, text_of(cause.title, self.lang), 0.0, "open")
            if conf is not None:
                b.reasons.append(f"the log shows it ({confidence_text(conf)})")
            beliefs[cid] = b
        params = dict(self.base_params)
        for ev in self.events:
            because = self._because(ev)
            params.update(dict(ev.sets))
            if ev.kind == "check":
                self._weigh(ev, because, odds, beliefs)
                if ev.record is not None:
                    params.update(ev.record.params)
                continue
            for cid in (c for c in ev.rules_out if c in beliefs):
                b = beliefs[cid]
                if b.status == "ruled_out":
                    continue
                if cid in self.diagnosed:  # the log says otherwise: weaken, don't discard
                    odds[cid] /= CONFIRM_FACTOR
                    b.reasons.append(f"less likely because {because}, but the log still shows it")
                else:
                    odds[cid], b.status = 0.0, "ruled_out"
                    b.reasons.append(f"ruled out because {because}")
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
        return self._state

    def _weigh(
        self, ev: Event, because: str, odds: dict[str, float], beliefs: dict[str, Belief]
    ) -> None:
        """A check's outcome multiplies each cause's odds by its likelihood ratio."""
        for cid, ratio in ev.ratios:
            b = beliefs.get(cid)
            if b is None or b.status == "ruled_out" or ratio == 1.0:
                continue
            if ratio <= RULE_OUT_RATIO and cid not in self.diagnosed:
                odds[cid], b.status = 0.0, "ruled_out"
                b.reasons.append(f"ruled out because {because}")
                continue
            odds[cid] *= ratio
            if ratio >= CONFIRM_RATIO or (ratio > 1 and cid in self.diagnosed):
                b.status = "confirmed"  # (the log shows it and the check agrees)
                b.reasons.append(f"confirmed because {because} (×{ratio:.3g})")
            elif ratio > 1:
                b.reasons.append(f"more likely because {because} (×{ratio:.3g})")
            elif cid in self.diagnosed:
                b.reasons.append(
                    f"less likely because {because} (×{ratio:.3g}), but the log still shows it"
                )
            else:
                b.reasons.append(f"less likely because {because} (×{ratio:.3g})")

    def likelihood(self, chk: Check, cause_id: str) -> tuple[float, float]:
        """(sensitivity, false-alarm rate) of a check towards one cause, as this walk sees it:
        nearly blind towards a log-proven cause whose variant it does not test."""
        kind = "pair" if chk.scope == "pair" else "node" if chk.read_only else "test"
        sens, fa = DEFAULT_LIKELIHOOD[kind]
        sens = chk.sensitivity if chk.sensitivity is not None else sens
        fa = chk.false_alarm if chk.false_alarm is not None else fa
        fired = self.fired.get(cause_id)
        if cause_id in self.diagnosed and not (fired and set(chk.shows) & fired):
            sens = fa + BLIND_WEIGHT * (sens - fa)
        return sens, fa

    def applies(
        self, chk: Check | Question, owners: tuple[str, ...], params: dict[str, str]
    ) -> bool:
        """A check (or a question) bound to a framework, a launcher or an error waits until
        the log shows its cause, or a value from the log, an answer or a check says so."""
        if any(c in self.diagnosed for c in owners):
            return True
        return all(params.get(k) in allowed for k, allowed in chk.applies_if.items())

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
        t = self.lang
        answers = tuple(
            Outcome(
                a.id,
                text_of(a.text, t),
                tuple(a.confirms),
                tuple(a.rules_out),
                sets=tuple(sorted(a.sets.items())),
            )
            for a in q.answers
        )
        return Step(
            "question",
            q.id,
            text_of(q.text, t),
            q.cost,
            answers,
            help=text_of(q.help, t),
            question=q,
        )

    def _check_step(self, chk: Check, cid: str) -> Step:
        """By default a failing check confirms the candidates that list it, a passing one
        rules them out; `on_problem`/`on_ok` in the rule say otherwise."""
        owners = tuple(
            c for c in self.candidates if any(x.id == chk.id for x in self.kb.checks_of(c))
        ) or (cid,)
        fail, ok = chk.on_problem, chk.on_ok
        bad = (tuple(fail.confirms), tuple(fail.rules_out)) if fail else (owners, ())
        good = (tuple(ok.confirms), tuple(ok.rules_out)) if ok else ((), owners)
        fail_ratios: dict[str, float] = {}
        pass_ratios: dict[str, float] = {}
        for c in dict.fromkeys((*bad[0], *bad[1], *good[0], *good[1])):
            if c not in self.kb.causes:
                continue
            sens, fa = self.likelihood(chk, c)
            # a check read the other way round (its failure speaks against the cause)
            against = c in bad[1] or c in good[0]
            fail_ratios[c] = (1 - sens) / (1 - fa) if against else sens / fa
            pass_ratios[c] = sens / fa if against else (1 - sens) / (1 - fa)
        means = text_of(chk.means, self.lang)
        outcomes = (
            Outcome("fail", means, *bad, ratios=tuple(fail_ratios.items())),
            Outcome("pass", HEALTHY, *good, ratios=tuple(pass_ratios.items())),
        )
        title = text_of(chk.title, self.lang)
        return Step(
            "check", chk.id, title, chk.cost, outcomes, help=means, check=chk, cause=owners[0]
        )

    def _done_steps(self) -> set[str]:
        return {ev.step_key for ev in self.events if ev.kind in ("answer", "check", "skip")}

    def steps(self) -> list[Step]:
        """The steps still worth taking, best p/C first."""
        beliefs, _, _ = self._compute()
        done = self._done_steps()
        ranked: list[Step] = []
        for step in self._all_steps(offered_only=True):
            if step.key in done:
                continue
            confirmable: set[str] = set()
            removable: set[str] = set()
            for o in step.outcomes:
                confirmable.update(c for c in o.confirms if c in beliefs)
                removable.update(c for c in o.rules_out if c in beliefs)
            # a confirmed cause that has not settled yet is still worth a check
            open_ = {
                c
                for c, b in beliefs.items()
                if b.status == "open" or (b.status == "confirmed" and b.p < SETTLED)
            }
            power = self._power(step)
            p = sum(beliefs[c].p * power.get(c, 1.0) for c in confirmable & open_)
            p += RULE_OUT_ONLY_WEIGHT * sum(
                beliefs[c].p * power.get(c, 1.0) for c in (removable - confirmable) & open_
            )
            if p <= 0:
                continue
            ranked.append(replace(step, p_settle=p))
        ranked.sort(key=lambda s: (-s.efficiency, s.cost, s.kind != "check", s.id))
        return ranked

    def _power(self, step: Step) -> dict[str, float]:
        """What a check can tell about each cause: sensitivity minus false alarms."""
        if step.check is None:
            return {}
        causes = {c for o in step.outcomes for c, _ in o.ratios}
        return {c: abs(s - f) for c in causes for s, f in [self.likelihood(step.check, c)]}

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
