"""The walk without a person: the same `Walk`, driven by given answers and recorded checks.

Why: on a cluster, or in a script, nobody presses keys. The walk takes the best step it
can take by itself (an answer given up front, a check result from `check --json`, a
read-only check run against a node's recorded survey) and stops where a person is
needed, saying which step that is. It ends `settled`, `likely`, `unknown` or `needs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kb.checks.model import CheckResult
from kb.diagnosis.hangs import focus as hang_focus
from kb.rules.schema.models import text_of
from kb.runners.base import Runner
from kb.walk.engine import Conclusion, Step, Walk, WalkError
from kb.walk.session import combine, missing_params, run_check

MAX_STEPS = 100


@dataclass
class BatchEnd:
    """Where a batch walk stopped, and why."""

    end: str  # settled | chosen | likely | unknown | needs
    conclusion: Conclusion | None
    next_step: Step | None = None
    needs: str = ""  # what a person must do to go on
    problems: list[str] = field(default_factory=list)  # given answers that did not apply


def answer_record(walk: Walk, check_id: str, status: str) -> CheckResult:
    """A check the user ran and judged themselves (`--answer CHECK=pass`)."""
    step = walk.step(check_id, "check")
    if status not in ("pass", "fail", "unavailable", "error"):
        raise WalkError(
            f"check '{check_id}' takes pass, fail, unavailable or error, not '{status}'"
        )
    return CheckResult("answered", check_id, "", status, title=step.title)


def run_batch(
    walk: Walk,
    answers: Mapping[str, str] | None = None,
    records: Mapping[str, Sequence[CheckResult]] | None = None,
    nodes: Sequence[Runner] = (),
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> BatchEnd:
    """Walk as far as the given answers, recorded results and recorded nodes allow.
    Checks run on the host a hang names first (`kb.diagnosis.hangs.focus`); `aliases`
    gives a node's other names (its hostname, addresses) to recognise it by."""
    answers = dict(answers or {})
    records = dict(records or {})
    problems: list[str] = []
    names = dict(aliases or {})
    nodes = hang_focus.first(
        nodes, hang_focus.from_diagnosis(walk.diagnosis), lambda n: [n.name, *names.get(n.name, ())]
    )
    for _ in range(MAX_STEPS):
        end = walk.conclusion()
        if end is not None:
            return BatchEnd(end.kind, end, problems=problems)
        steps = walk.steps()
        for step in steps:
            if _take(walk, step, answers, records, nodes, problems):
                break
        else:
            first = steps[0] if steps else None
            return BatchEnd("needs", None, first, _needs(walk, first), problems)
    return BatchEnd("needs", None, walk.next_step(), "the walk took too many steps", problems)


def _take(
    walk: Walk,
    step: Step,
    answers: dict[str, str],
    records: dict[str, Sequence[CheckResult]],
    nodes: Sequence[Runner],
    problems: list[str],
) -> bool:
    """Take the step if the batch can: True when an event was added."""
    given = answers.get(step.id)
    if step.kind == "question":
        if given is None:
            return False
        try:
            walk.answer(step.id, given)
        except KeyError:
            known = ", ".join(o.id for o in step.outcomes)
            problems.append(f"question '{step.id}' has no answer '{given}' (answers: {known})")
            answers.pop(step.id)
            return False
        return True
    if given is not None:
        walk.record_check(answer_record(walk, step.id, given))
        return True
    if step.id in records:
        walk.record_check(combine(list(records[step.id])))
        return True
    chk = step.check
    if chk is None or not nodes or not chk.read_only:
        return False
    params = walk.params
    if chk.scope == "pair" or missing_params(chk, params):
        return False
    able = [n for n in nodes if n.can_run(chk)]
    if not able:
        return False
    walk.record_check(combine([run_check(chk, node, params) for node in able]))
    return True


def _needs(walk: Walk, step: Step | None) -> str:
    if step is None:
        return "no step is left"
    if step.kind == "question":
        choices = ", ".join(f"{o.id}" for o in step.outcomes)
        return f"answer '{step.id}' (--answer {step.id}=ANSWER; one of: {choices})"
    chk = step.check
    missing = missing_params(chk, walk.params) if chk is not None else []
    if missing:
        return f"run check '{step.id}' (it needs {', '.join(missing)}), or --answer {step.id}=pass|fail"
    focus = hang_focus.from_diagnosis(walk.diagnosis)
    if focus is not None and focus.host is not None:  # the host the hang names, first
        where = f"on {focus.host} first, where the hang starts ({focus.check_command(step.id)})"
        return f"run check '{step.id}' {where}, or --answer {step.id}=pass|fail"
    where = "on the nodes (dlperf-help check --check " + step.id + " --json)"
    return f"run check '{step.id}' {where}, or --answer {step.id}=pass|fail"


def fix_titles(walk: Walk, fixes: Sequence[str]) -> list[str]:
    return [text_of(walk.kb.fixes[f].title, walk.lang) for f in fixes if f in walk.kb.fixes]
