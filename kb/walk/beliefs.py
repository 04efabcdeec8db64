"""Where each cause stands after the path taken: the walk's update rule.

Why its own module: how an answer or a check's outcome moves the causes' odds is the
reasoning a reviewer checks against the model (single fault; an answer confirms, odds
times `CONFIRM_FACTOR`, or rules out; a check multiplies each cause's odds by its
likelihood ratio from `sensitivity` and `false_alarm`, defaults by kind in
`DEFAULT_LIKELIHOOD`; a check blind to the variant the log saw keeps `BLIND_WEIGHT` of its
power), apart from which steps are offered (`steps.py`) and the walk's bookkeeping
(`engine.py`). The state is recomputed from the events, so undo is dropping the last one.
"""

from __future__ import annotations

from kb.diagnosis.percent import confidence_text
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Check, text_of
from kb.walk.model import Belief, Event, short

OTHER = "(other)"  # the cause the knowledge base does not know
OTHER_ODDS = 0.1
CONFIRM_FACTOR = 20.0
SETTLED = 0.8
MAX_CONFIDENCE = 0.99
# (sensitivity, false-alarm rate) of a check whose rule gives none, by kind
DEFAULT_LIKELIHOOD = {
    "node": (0.9, 0.05),  # a read-only look at one node
    "pair": (0.9, 0.05),  # a probe from each node to each other
    "test": (0.95, 0.05),  # a test run (not read-only): closer to the real job
}
BLIND_WEIGHT = 0.1  # what is left of a check's power on a variant it does not test
CONFIRM_RATIO = 5.0
RULE_OUT_RATIO = 0.2

State = tuple[dict[str, Belief], dict[str, str], float]  # beliefs, values known, p(other)


def likelihood(
    chk: Check, cause_id: str, diagnosed: dict[str, float], fired: dict[str, set[str]]
) -> tuple[float, float]:
    """(sensitivity, false-alarm rate) of a check towards one cause: nearly blind towards a
    log-proven cause whose variant (the signatures that `fired`) it does not test."""
    kind = "pair" if chk.scope == "pair" else "node" if chk.read_only else "test"
    sens, fa = DEFAULT_LIKELIHOOD[kind]
    sens = chk.sensitivity if chk.sensitivity is not None else sens
    fa = chk.false_alarm if chk.false_alarm is not None else fa
    seen = fired.get(cause_id)
    if cause_id in diagnosed and not (seen and set(chk.shows) & seen):
        sens = fa + BLIND_WEIGHT * (sens - fa)
    return sens, fa


def replay(
    kb: KnowledgeBase,
    candidates: list[str],
    diagnosed: dict[str, float],
    base_params: dict[str, str],
    events: list[Event],
    lang: str,
) -> State:
    """Each candidate's belief, the values known and p(other) after `events`, from the
    causes' priors (their confidences where the log showed them)."""
    odds: dict[str, float] = {}
    beliefs: dict[str, Belief] = {}
    for cid in candidates:
        cause = kb.causes[cid]
        conf = diagnosed.get(cid)
        p = min(max(conf if conf is not None else cause.prior, 1e-6), MAX_CONFIDENCE)
        odds[cid] = p / (1.0 - p)
        b = Belief(cid, text_of(cause.title, lang), 0.0, "open")
        if conf is not None:
            b.reasons.append(f"the log shows it ({confidence_text(conf)})")
        beliefs[cid] = b
    params = dict(base_params)
    for ev in events:
        why = because(ev)
        params.update(dict(ev.sets))
        if ev.kind == "check":
            _weigh(ev, why, odds, beliefs, diagnosed)
        else:  # an answer (or a choice) rules out, then confirms, what it says
            for cid in (c for c in ev.rules_out if c in beliefs):
                b = beliefs[cid]
                if b.status == "ruled_out":
                    continue
                if cid in diagnosed:  # the log says otherwise: weaken, don't discard
                    odds[cid] /= CONFIRM_FACTOR
                    b.reasons.append(f"less likely because {why}, but the log still shows it")
                else:
                    odds[cid], b.status = 0.0, "ruled_out"
                    b.reasons.append(f"ruled out because {why}")
            for cid in ev.confirms:
                if cid in beliefs and beliefs[cid].status != "ruled_out":
                    odds[cid] *= CONFIRM_FACTOR
                    beliefs[cid].status = "confirmed"
                    beliefs[cid].reasons.append(f"confirmed because {why}")
        if ev.record is not None:
            params.update(ev.record.params)
    total = sum(odds.values()) + OTHER_ODDS
    for cid, b in beliefs.items():
        b.p = odds[cid] / total
    return beliefs, params, OTHER_ODDS / total


def _weigh(
    ev: Event,
    because: str,
    odds: dict[str, float],
    beliefs: dict[str, Belief],
    diagnosed: dict[str, float],
) -> None:
    """A check's outcome multiplies each cause's odds by its likelihood ratio."""
    for cid, ratio in ev.ratios:
        b = beliefs.get(cid)
        if b is None or b.status == "ruled_out" or ratio == 1.0:
            continue
        if ratio <= RULE_OUT_RATIO and cid not in diagnosed:
            odds[cid], b.status = 0.0, "ruled_out"
            b.reasons.append(f"ruled out because {because}")
            continue
        odds[cid] *= ratio
        if ratio >= CONFIRM_RATIO or (ratio > 1 and cid in diagnosed):
            b.status = "confirmed"  # (the log shows it and the check agrees)
            b.reasons.append(f"confirmed because {because} (×{ratio:.3g})")
        elif ratio > 1:
            b.reasons.append(f"more likely because {because} (×{ratio:.3g})")
        elif cid in diagnosed:
            b.reasons.append(
                f"less likely because {because} (×{ratio:.3g}), but the log still shows it"
            )
        else:
            b.reasons.append(f"less likely because {because} (×{ratio:.3g})")


def because(ev: Event) -> str:
    """Why a cause moved, in the words of its reasons."""
    if ev.kind == "answer":
        return f"you answered “{ev.outcome_text}” to “{short(ev.step_title)}”"
    if ev.kind == "check" and ev.record is not None:
        r = ev.record
        where = "in the output you pasted" if r.host == "pasted" else f"on {r.host}"
        verdict = {"pass": "passed", "fail": "failed"}.get(r.status, r.status)
        finding = f": {r.finding}" if r.finding else ""
        return f"the check “{ev.step_title}” {verdict} {where}{finding}"
    return "you chose it"
