"""The session record: log excerpts around the evidence, checks run or pasted, the fix."""

from __future__ import annotations

from pathlib import Path

from kb.diagnosis.engine import diagnose_text
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Check, Expect
from kb.runners.local import LocalRunner
from kb.walk.session import Session, check_from_paste, missing_params, run_check
from tests.tui.common import IP_ADDR_WITH_DOCKER, LOG

ERROR = "[2026-11-29 19:54:45] vm:851:851 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found"


def long_log(n: int, error_at: int) -> str:
    lines = [f"step {i} loss 0.{i:04d}" for i in range(1, n + 1)]
    lines[error_at - 1] = ERROR
    return "\n".join(lines)


def test_a_short_log_is_quoted_whole(kb: KnowledgeBase):
    s = Session(kb)
    s.set_log("short.log", text="a\nb\nc")
    assert s.excerpt() == ([(1, "a"), (2, "b"), (3, "c")], 3)


def test_a_long_log_is_excerpted_around_the_evidence_with_gaps_marked(kb: KnowledgeBase):
    s = Session(kb)
    s.set_log("pasted", text=long_log(5000, 2500))
    s.diagnosis = diagnose_text(kb, s.log_text or "")
    excerpt, total = s.excerpt()
    assert total == 5000
    numbers = [item[0] for item in excerpt if item is not None]
    assert numbers == list(range(2497, 2504))
    assert excerpt[0] is None and excerpt[-1] is None
    assert (2500, ERROR) in excerpt


def test_a_long_log_without_evidence_keeps_its_end(kb: KnowledgeBase):
    s = Session(kb)
    s.set_log("pasted", text="\n".join(f"line {i}" for i in range(1, 1001)))
    excerpt, _ = s.excerpt()
    assert excerpt[0] is None and excerpt[-1] == (1000, "line 1000")


def test_a_log_file_is_read_again_rather_than_kept(kb: KnowledgeBase):
    s = Session(kb)
    s.set_log(str(LOG), path=LOG)
    assert s.log_text is None
    assert s.lines_at({8}) == {8: ERROR}
    first, lines, total = s.window(8, 2)
    assert (first, len(lines), total) == (6, 5, len(LOG.read_text().splitlines()))


def test_a_check_run_here_reads_its_verdict_and_values(tmp_path: Path):
    chk = Check(
        id="list-files",
        title="List files",
        run="ls -1 {folder}",
        read_only=True,
        problem_if=Expect(any_line_matches=r"^core\.\d+$"),
        means="core dumps exist",
        extract={"dump": r"^(core\.\d+)$"},
        finding="dump {dump}",
    )
    (tmp_path / "core.123").write_text("")
    assert missing_params(chk, {}) == ["folder"]
    rec = run_check(chk, LocalRunner(), {"folder": str(tmp_path)})
    assert (rec.status, rec.finding, rec.host, rec.exit_code) == (
        "fail",
        "dump core.123",
        "local",
        0,
    )
    assert rec.command == f"ls -1 {tmp_path}"
    assert rec.params == {"dump": "core.123"}


def test_a_value_from_a_log_stays_one_inert_word_in_the_command(tmp_path: Path):
    chk = Check(
        id="echo-it",
        title="Echo",
        run="printf '%s\\n' {value}",
        read_only=True,
        problem_if=Expect(contains="pwned"),
        means="-",
    )
    marker = tmp_path / "marker"
    rec = run_check(chk, LocalRunner(), {"value": f"$(touch {marker})"})
    assert not marker.exists()
    assert rec.output.strip() == f"$(touch {marker})"


def test_output_the_user_ran_and_pasted_gets_the_same_verdict(kb: KnowledgeBase):
    chk = kb.checks["list-interfaces"][1]
    rec = check_from_paste(chk, IP_ADDR_WITH_DOCKER, None, {})
    assert (rec.status, rec.finding, rec.host) == ("fail", "physical NIC enp3s0", "pasted")


def test_a_fix_is_verified_once_its_checks_pass(kb: KnowledgeBase):
    s = Session(kb)
    s.start_walk("multi-node-hang")
    s.choose_fix("set-nccl-socket-ifname")
    assert [c.id for c in s.verify_checks()] == ["list-interfaces"]
    assert s.verified is None
    chk = s.verify_checks()[0]
    s.verifications.append(check_from_paste(chk, IP_ADDR_WITH_DOCKER, 0, {}))
    assert s.verified is False
    s.verifications.append(check_from_paste(chk, "2: enp3s0    inet 10.0.0.11/24\n", 0, {}))
    assert s.verified is True
