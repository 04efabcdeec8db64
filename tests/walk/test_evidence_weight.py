"""Evidence weighs what it is worth: the issue's walks, on real logs and a recorded node.

The node is the 2×H200 host the logs came from (`data/`: its real `ip` outputs); a
check runs for real through `kb.checks.recorded.RecordedNode`, its own command and conditions.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kb.checks.recorded import RecordedNode
from kb.diagnosis.engine import diagnose_paths
from kb.rules.knowledge import KnowledgeBase
from kb.walk.engine import Walk
from kb.walk.session import run_check
from tests.walk.conftest import DATA, LOGS

IFNAME_LOG = LOGS / "h200-nccl-socket-ifname-missing.log"


@pytest.fixture
def h200() -> Iterator[RecordedNode]:
    node = RecordedNode(
        "vm",
        {
            "ip": [
                ("-o link show", (DATA / "h200-ip-link.txt").read_text(), 0),
                ("-o addr show", (DATA / "h200-ip-addr.txt").read_text(), 0),
            ],
            "ifconfig": [("-a", (DATA / "h200-ifconfig.txt").read_text(), 0)],
            # Debian's /etc/hosts: `127.0.1.1 <hostname>`
            "python3": [("*", "hostname vm resolves to 127.0.1.1\n", 0)],
        },
    )
    yield node
    node.close()


def run(walk: Walk, node: RecordedNode, check_id: str) -> str:
    step = walk.step(check_id, "check")
    assert step.check is not None
    rec = run_check(step.check, node, walk.params)
    walk.record_check(rec)
    return rec.status


@pytest.mark.slow
def test_blind_checks_that_pass_do_not_talk_the_user_out_of_a_log_proven_cause(
    kb: KnowledgeBase, h200: RecordedNode
) -> None:
    walk = Walk(kb, diagnosis=diagnose_paths(kb, [IFNAME_LOG]))
    assert walk.params["configured_iface"] == "ib9"
    start = walk.belief("nccl-wrong-interface").p
    assert run(walk, h200, "ifconfig-interfaces") == "pass"  # no veth here
    assert run(walk, h200, "list-interfaces") == "pass"
    b = walk.belief("nccl-wrong-interface")
    assert b.p > 0.7 and b.p > start - 0.1  # was 2 %, below Paddle, TF and mpirun
    assert walk.beliefs()[0].id == "nccl-wrong-interface"
    assert "but the log still shows it" in b.reasons[-1]
    # the check that tests the claim the log made comes first, with the log's value
    assert walk.next_step().id == "configured-iface-exists"  # type: ignore[union-attr]
    assert run(walk, h200, "configured-iface-exists") == "fail"
    end = walk.conclusion()
    assert end is not None and (end.kind, end.cause) == ("settled", "nccl-wrong-interface")
    assert end.fixes[0] == "set-nccl-socket-ifname"
    assert "NO-MATCH ib9" in walk.belief("nccl-wrong-interface").reasons[-1]


def test_a_check_of_its_own_claim_can_lower_a_log_proven_cause(kb: KnowledgeBase) -> None:
    link = (DATA / "h200-ip-link.txt").read_text()
    link += "5: ib9: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 state UP mode DEFAULT\n"
    node = RecordedNode("vm", {"ip": [("-o link show", link, 0)]})
    try:
        walk = Walk(kb, diagnosis=diagnose_paths(kb, [IFNAME_LOG]))
        before = walk.belief("nccl-wrong-interface").p
        assert run(walk, node, "configured-iface-exists") == "pass"
        after = walk.belief("nccl-wrong-interface")
        assert after.p < before - 0.3 and after.status == "open"
    finally:
        node.close()


def test_debian_127_0_1_1_is_no_paddle_finding_until_the_job_is_paddle(
    kb: KnowledgeBase, h200: RecordedNode
) -> None:
    walk = Walk(kb, "multi-node-hang")
    offered = {s.id for s in walk.steps()}
    assert "paddle-local-ip-resolution" not in offered and "which-framework" in offered
    walk.answer("which-framework", "pytorch")
    assert walk.belief("paddle-launch-mode").status == "ruled_out"
    assert "paddle-local-ip-resolution" not in {s.id for s in walk.steps()}
    walk.undo()
    walk.answer("which-framework", "paddle")
    assert walk.params["framework"] == "paddle"
    assert "paddle-local-ip-resolution" in {s.id for s in walk.steps()}
    assert run(walk, h200, "paddle-local-ip-resolution") == "fail"
    assert walk.belief("paddle-launch-mode").status == "confirmed"


def test_a_check_that_cannot_tell_counts_for_less_when_steps_are_ranked(
    kb: KnowledgeBase,
) -> None:
    walk = Walk(kb, diagnosis=diagnose_paths(kb, [IFNAME_LOG]))
    by_id = {s.id: s for s in walk.steps()}
    assert by_id["list-interfaces"].p_settle < 0.2 * by_id["configured-iface-exists"].p_settle
    sens, fa = walk.likelihood(by_id["configured-iface-exists"].check, "nccl-wrong-interface")  # type: ignore[arg-type]
    assert (sens, fa) == (0.95, 0.02)  # written in the rule
    sens, fa = walk.likelihood(by_id["list-interfaces"].check, "nccl-wrong-interface")  # type: ignore[arg-type]
    assert fa == 0.05 and sens == pytest.approx(0.05 + 0.1 * 0.85)  # the default, made blind
    # the fix's verification is no evidence for the cause: never offered as a step
    assert "chosen-iface-up" not in by_id


def test_verifying_the_socket_ifname_fix_rechecks_the_chosen_nic_on_the_node(
    kb: KnowledgeBase, h200: RecordedNode
) -> None:
    from kb.walk.session import Session

    session = Session(kb)
    session.diagnosis = diagnose_paths(kb, [IFNAME_LOG])
    session.start_walk()
    session.choose_fix("set-nccl-socket-ifname")
    assert [c.id for c in session.verify_checks()] == ["chosen-iface-up", "route-to-peer"]
    chosen = session.verify_checks()[0]
    for value, status in (("enp3s0f0", "fail"), ("eth", "pass"), ("=eth0", "pass")):
        rec = run_check(chosen, h200, {"good_iface": value})
        assert rec.status == status, (value, rec.output)
    session.verifications = [run_check(chosen, h200, {"good_iface": "enp3s0f0"})]
    assert session.verified is False  # a NIC this node does not have is no fix


def test_an_export_is_never_reported_as_applied_by_a_shell_of_its_own(kb: KnowledgeBase) -> None:
    import subprocess

    from kb.checks import plan
    from kb.rules.placeholders import fill_command

    tasks = plan.for_fix(kb, "set-nccl-socket-ifname")
    first = tasks[0]
    assert first.kind == "check" and first.read_only and not first.needs_confirmation
    command = fill_command(first.template, {"good_iface": "eth"})
    r = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True)
    assert r.returncode == 3  # a fix task that exits non-zero is reported failed, not applied
    assert r.stdout.startswith("NOT APPLIED: export NCCL_SOCKET_IFNAME=<good_iface>")
    assert "mpirun -x NCCL_SOCKET_IFNAME" in r.stdout and "--env" in r.stdout


def test_the_survey_hands_the_ssh_port_only_to_the_ssh_checks(kb: KnowledgeBase) -> None:
    from kb.checks import plan
    from kb.rules.placeholders import names_in

    with_port = {t.id for t in plan.survey(kb) if "port" in names_in(t.template)}
    assert "port-listening" not in with_port  # it said `held by sshd` on every node
    assert "sshd-listening-on-port" in with_port


@pytest.mark.slow
def test_a_question_whose_answers_assume_an_error_waits_until_the_error_is_known(
    kb: KnowledgeBase,
) -> None:
    walk = Walk(kb, "nccl-init-fails")
    assert "ipc-handle-error-code" not in {s.id for s in walk.steps()}
    walk.answer("first-nccl-warning", "ipc")
    assert walk.params["nccl_error"] == "ipc"
    assert "ipc-handle-error-code" in {s.id for s in walk.steps()}
    # the log that shows the IPC error (and the cause the question confirms) asks it at once
    logged = Walk(
        kb, diagnosis=diagnose_paths(kb, [LOGS / "hvddoc-cuda-ipc-handle-30-same-hostname.log"])
    )
    assert "ipc-handle-error-code" in {s.id for s in logged.steps()}
