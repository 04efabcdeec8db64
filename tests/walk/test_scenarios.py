"""Scenario tests: the walk ends at each scenario's cause and fix, a cause the log proves
never falls below 0.5 on checks consistent with it, and no cause absent from the
scenario is ever confirmed (see tests/walk/scenarios.py for how each is made)."""

from __future__ import annotations

import pytest

from kb.rules.knowledge import KnowledgeBase
from tests.walk.scenarios import SCENARIOS, Scenario, play, states


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
@pytest.mark.slow
def test_the_walk_ends_at_the_scenarios_cause_and_fix(kb: KnowledgeBase, sc: Scenario) -> None:
    walk, end = play(kb, sc)
    summary = [e.summary() for e in walk.path]
    assert end.conclusion is not None, summary
    assert end.conclusion.cause == sc.cause, (end.end, summary, walk.beliefs()[:3])
    assert end.end == ("settled" if sc.settles else "likely"), (end.end, summary)
    fix = sc.fix or kb.causes[sc.cause].fixes[0]
    assert fix in end.conclusion.fixes
    assert not end.problems, end.problems
    path = states(walk)
    start = path[0].get(sc.cause, (0.0, "open"))[0]
    for step, state in enumerate(path):
        confirmed = {c for c, (_, status) in state.items() if status == "confirmed"}
        assert confirmed <= {sc.cause}, (step, confirmed, summary)
        if start >= 0.5:  # the log proves it: consistent checks never talk it below 0.5
            assert state[sc.cause][0] >= 0.5, (step, state[sc.cause], summary)
