"""The steps a walk offers: questions and checks made from the rules, ordered by p/C.

Why its own module: what a step is worth is the other half of the walk's reasoning. A
step's *p* is the mass of open causes an outcome confirms, each weighted by what the
check can tell (sensitivity minus false alarms; 1 for an answer), plus
`RULE_OUT_ONLY_WEIGHT` of the mass it can only rule out; steps go in decreasing p / cost
(the p/C rule), ties to the cheaper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Check, Question, text_of
from kb.walk.beliefs import SETTLED
from kb.walk.model import Belief, Outcome, Step

RULE_OUT_ONLY_WEIGHT = 0.5
HEALTHY = "the node is healthy on this point"

Likelihood = Callable[[Check, str], tuple[float, float]]  # (sensitivity, false alarms)


def question_step(q: Question, lang: str) -> Step:
    """A symptom's question: each answer confirms, rules out or sets what the rule says."""
    answers = tuple(
        Outcome(
            a.id,
            text_of(a.text, lang),
            tuple(a.confirms),
            tuple(a.rules_out),
            sets=tuple(sorted(a.sets.items())),
        )
        for a in q.answers
    )
    return Step(
        "question",
        q.id,
        text_of(q.text, lang),
        q.cost,
        answers,
        help=text_of(q.help, lang),
        question=q,
    )


def check_step(
    kb: KnowledgeBase,
    candidates: list[str],
    chk: Check,
    cid: str,
    lang: str,
    likelihood: Likelihood,
) -> Step:
    """By default a failing check confirms the candidates that list it, a passing one
    rules them out; `on_problem`/`on_ok` in the rule say otherwise."""
    owners = tuple(c for c in candidates if any(x.id == chk.id for x in kb.checks_of(c))) or (cid,)
    fail, ok = chk.on_problem, chk.on_ok
    bad = (tuple(fail.confirms), tuple(fail.rules_out)) if fail else (owners, ())
    good = (tuple(ok.confirms), tuple(ok.rules_out)) if ok else ((), owners)
    fail_ratios: dict[str, float] = {}
    pass_ratios: dict[str, float] = {}
    for c in dict.fromkeys((*bad[0], *bad[1], *good[0], *good[1])):
        if c not in kb.causes:
            continue
        sens, fa = likelihood(chk, c)
        # a check read the other way round (its failure speaks against the cause)
        against = c in bad[1] or c in good[0]
        fail_ratios[c] = (1 - sens) / (1 - fa) if against else sens / fa
        pass_ratios[c] = sens / fa if against else (1 - sens) / (1 - fa)
    means = text_of(chk.means, lang)
    outcomes = (
        Outcome("fail", means, *bad, ratios=tuple(fail_ratios.items())),
        Outcome("pass", HEALTHY, *good, ratios=tuple(pass_ratios.items())),
    )
    title = text_of(chk.title, lang)
    return Step("check", chk.id, title, chk.cost, outcomes, help=means, check=chk, cause=owners[0])


def ranked(
    offered: Iterable[Step], beliefs: dict[str, Belief], done: set[str], likelihood: Likelihood
) -> list[Step]:
    """The offered steps not taken yet that can still move an open cause, best p/C first."""
    out: list[Step] = []
    for step in offered:
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
        power = _power(step, likelihood)
        p = sum(beliefs[c].p * power.get(c, 1.0) for c in confirmable & open_)
        p += RULE_OUT_ONLY_WEIGHT * sum(
            beliefs[c].p * power.get(c, 1.0) for c in (removable - confirmable) & open_
        )
        if p <= 0:
            continue
        out.append(replace(step, p_settle=p))
    out.sort(key=lambda s: (-s.efficiency, s.cost, s.kind != "check", s.id))
    return out


def _power(step: Step, likelihood: Likelihood) -> dict[str, float]:
    """What a check can tell about each cause: sensitivity minus false alarms."""
    if step.check is None:
        return {}
    causes = {c for o in step.outcomes for c, _ in o.ratios}
    return {c: abs(s - f) for c in causes for s, f in [likelihood(step.check, c)]}
