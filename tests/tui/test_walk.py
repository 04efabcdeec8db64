"""The decision-tree walk: p/C ordering, evidence updates, undo, and honest endings."""

from __future__ import annotations

import pytest

from kb.checks.model import CheckResult
from kb.diagnosis.engine import diagnose_paths
from kb.diagnosis.percent import confidence_text
from kb.rules.knowledge import KnowledgeBase
from kb.walk.engine import OTHER_ODDS, Walk, WalkError
from tests.tui.common import LOG


def record(check_id: str, status: str, finding: str | None = None) -> CheckResult:
    return CheckResult("local", check_id, "cmd", status, "out", finding=finding, exit_code=0)


def test_beliefs_start_from_the_priors_normalised_with_room_for_the_unknown(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    beliefs = {b.id: b for b in walk.beliefs()}
    assert set(beliefs) == {"nccl-wrong-interface", "nccl-ib-missing", "nccl-timeout-hang"}
    odds = {cid: c.prior / (1 - c.prior) for cid, c in kb.causes.items() if cid in beliefs}
    total = sum(odds.values()) + OTHER_ODDS
    for cid, b in beliefs.items():
        assert b.p == pytest.approx(odds[cid] / total)
        assert b.status == "open"
    assert walk.p_other == pytest.approx(OTHER_ODDS / total)
    assert walk.beliefs()[0].id == "nccl-wrong-interface"  # highest prior


def test_steps_are_ordered_by_probability_of_settling_per_unit_of_cost(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    steps = walk.steps()
    assert [s.efficiency for s in steps] == sorted((s.efficiency for s in steps), reverse=True)
    by_id = {s.id: s for s in steps}
    # a check weighs what it can tell (sensitivity minus false alarms), an answer in full;
    # the cheap read-only check still beats the question that costs twice as much
    sens, fa = walk.likelihood(by_id["list-interfaces"].check, "nccl-wrong-interface")  # type: ignore[arg-type]
    assert by_id["list-interfaces"].p_settle == pytest.approx(
        (sens - fa) * by_id["nccl-debug-shows-interface"].p_settle
    )
    assert steps.index(by_id["list-interfaces"]) < steps.index(by_id["nccl-debug-shows-interface"])
    # a question that can only rule causes out counts half their probability
    p = {b.id: b.p for b in walk.beliefs()}
    assert by_id["single-node-works"].p_settle == pytest.approx(
        0.5 * (p["nccl-wrong-interface"] + p["nccl-ib-missing"])
    )
    assert walk.next_step() == steps[0]


def test_an_answer_that_rules_a_cause_out_says_why_and_renormalises(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    walk.answer("nccl-debug-shows-interface", "physical")
    gone = walk.belief("nccl-wrong-interface")
    assert gone.status == "ruled_out" and gone.p == 0
    assert "ruled out because you answered “a physical NIC" in gone.reasons[0]
    assert "Which interface does the line" in gone.reasons[0]
    assert sum(b.p for b in walk.beliefs()) + walk.p_other == pytest.approx(1)
    assert "list-interfaces" not in {
        s.id for s in walk.steps()
    }  # it can only speak of a dead cause
    assert walk.beliefs()[-1].id == "nccl-wrong-interface"  # ruled-out causes sort last


def test_a_failing_check_confirms_and_settles_the_walk_at_the_fix(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    walk.record_check(record("list-interfaces", "fail", "physical NIC enp3s0"))
    b = walk.belief("nccl-wrong-interface")
    assert b.status == "confirmed" and b.p > 0.8
    assert "failed on local: physical NIC enp3s0" in b.reasons[-1]
    end = walk.conclusion()
    assert end is not None and end.kind == "settled"
    assert end.cause == "nccl-wrong-interface" and end.fixes == ["set-nccl-socket-ifname"]
    assert walk.next_step() is None


def test_undo_restores_the_state_before_the_last_step(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    before = [(b.id, b.p, b.status) for b in walk.beliefs()]
    walk.skip("list-interfaces")
    walk.answer("nccl-debug-shows-interface", "physical")
    assert len(walk.path) == 2
    undone = walk.undo()
    assert undone is not None and undone.step_id == "nccl-debug-shows-interface"
    walk.undo()
    assert [(b.id, b.p, b.status) for b in walk.beliefs()] == before
    assert walk.undo() is None and walk.path == []


def test_a_skipped_or_inconclusive_step_is_not_proposed_again_and_moves_nothing(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    before = {b.id: b.p for b in walk.beliefs()}
    walk.record_check(record("ibv-devices", "unavailable"))
    walk.skip("list-interfaces")
    assert {b.id: b.p for b in walk.beliefs()} == before
    assert {"ibv-devices", "list-interfaces"}.isdisjoint(s.id for s in walk.steps())
    assert [e.summary() for e in walk.path] == [
        "check ibv-devices → unavailable",
        "skipped: List the network interfaces and their addresses",
    ]


def test_when_every_cause_is_ruled_out_the_walk_says_the_kb_does_not_know(kb: KnowledgeBase):
    walk = Walk(kb, "mpi-launch-fails")
    walk.answer("ssh-without-password", "yes")
    end = walk.conclusion()
    assert end is not None and end.kind == "unknown" and end.cause is None
    assert [b.id for b in end.ruled_out] == ["ssh-passwordless-missing"]
    assert "ruled out because you answered “yes, it returns at once”" in end.ruled_out[0].reasons[0]


def test_with_no_step_left_a_clear_favourite_is_offered_unconfirmed(kb: KnowledgeBase):
    walk = Walk(kb, "library-load-fails")  # one cause (prior 0.4), one check
    walk.skip("ldconfig-has-lib")
    end = walk.conclusion()
    assert end is not None and end.kind == "likely" and end.cause == "cuda-lib-missing"


def test_with_no_step_left_and_no_favourite_the_walk_ends_unknown(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    for step in list(walk.steps()):
        walk.skip(step.id)
    end = walk.conclusion()
    assert end is not None and end.kind == "unknown"
    assert {b.id for b in end.remaining} == {
        "nccl-wrong-interface",
        "nccl-ib-missing",
        "nccl-timeout-hang",
    }


def test_choosing_a_cause_ends_the_walk_there_until_undone(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    walk.choose("nccl-ib-missing")
    end = walk.conclusion()
    assert end is not None and (end.kind, end.cause) == ("chosen", "nccl-ib-missing")
    walk.undo()
    assert walk.conclusion() is None


def test_a_walk_from_a_diagnosis_starts_at_the_inferred_symptom_and_the_logs_confidence(
    kb: KnowledgeBase,
):
    diag = diagnose_paths(kb, [LOG])
    walk = Walk(kb, diagnosis=diag)
    assert walk.symptoms == ["multi-node-hang"]
    top = walk.beliefs()[0]
    assert top.id == "nccl-wrong-interface" and top.p > 0.9
    assert top.reasons == [f"the log shows it ({confidence_text(diag.causes[0].confidence)})"]
    # list-interfaces does not test the variant the log saw: it is nearly blind to it
    by_id = {s.id: s for s in walk.steps()}
    assert by_id["list-interfaces"].p_settle < 0.15 * by_id["nccl-debug-shows-interface"].p_settle


def test_a_passing_check_weakens_but_cannot_erase_what_the_log_shows(kb: KnowledgeBase):
    walk = Walk(kb, diagnosis=diagnose_paths(kb, [LOG]))
    p_before = walk.belief("nccl-wrong-interface").p
    walk.record_check(record("list-interfaces", "pass", "physical NIC eth0"))
    b = walk.belief("nccl-wrong-interface")
    assert b.status == "open" and 0 < b.p < p_before
    assert "but the log still shows it" in b.reasons[-1]


def test_values_extracted_by_checks_are_kept_for_the_fix(kb: KnowledgeBase):
    walk = Walk(kb, "multi-node-hang")
    rec = record("list-interfaces", "fail")
    rec.params = {"good_iface": "enp3s0"}
    walk.record_check(rec)
    assert walk.params["good_iface"] == "enp3s0"


def test_unknown_symptoms_steps_and_answers_are_errors(kb: KnowledgeBase):
    with pytest.raises(WalkError):
        Walk(kb, "no-such-symptom")
    walk = Walk(kb, "multi-node-hang")
    with pytest.raises(WalkError):
        walk.answer("list-interfaces", "virtual")  # a check, not a question
    with pytest.raises(KeyError):
        walk.answer("nccl-debug-shows-interface", "maybe")


def test_a_question_and_a_check_may_share_an_id_and_two_symptoms_a_question(kb: KnowledgeBase):
    from dataclasses import replace as dc_replace

    hang = kb.symptoms["multi-node-hang"]
    twin = hang.questions[0].model_copy(update={"id": "list-interfaces"})
    symptoms = dict(kb.symptoms)
    symptoms["multi-node-hang"] = hang.model_copy(update={"questions": [*hang.questions, twin]})
    symptoms["low-multi-node-speedup"] = symptoms["low-multi-node-speedup"].model_copy(
        update={"questions": [*symptoms["low-multi-node-speedup"].questions, hang.questions[0]]}
    )
    kb2 = dc_replace(kb, symptoms=symptoms)
    diag = diagnose_paths(kb, [LOG])
    diag.symptoms = ["multi-node-hang", "low-multi-node-speedup"]
    walk = Walk(kb2, diagnosis=diag)
    keys = [s.key for s in walk.steps()]
    assert len(keys) == len(set(keys))
    assert {"check:list-interfaces", "question:list-interfaces"} <= set(keys)
    assert keys.count("question:nccl-debug-shows-interface") == 1
    walk.skip("check:list-interfaces")
    keys = [s.key for s in walk.steps()]
    assert "check:list-interfaces" not in keys and "question:list-interfaces" in keys
