"""A check that did not run is not a pass: missing tools, unexpected exits, timeouts.

The commands run for real with /bin/sh (a PATH that lacks the tool is a node without it);
the pair probes' outputs are those the probe prints, cut short as a timeout cuts them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kb.checks import pairs
from kb.checks.evaluate import evaluate
from kb.checks.model import CheckResult
from kb.cli.main import main
from kb.rules.knowledge import KnowledgeBase
from kb.rules.placeholders import fill_command
from kb.rules.schema.models import Check
from kb.walk.engine import Walk


def sh(command: str, path: str | None = None) -> tuple[str, str, int]:
    env = {"PATH": path} if path is not None else None
    r = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, env=env)
    return r.stdout, r.stderr, r.returncode


def test_route_to_peer_with_a_host_name_resolves_it_first(kb: KnowledgeBase) -> None:
    if shutil.which("ip") is None or shutil.which("getent") is None:
        pytest.skip("needs ip and getent")
    chk = kb.checks["route-to-peer"][1]
    out, err, code = sh(fill_command(chk.run, {"peer": "localhost"}))
    verdict = evaluate(chk, out, code, err)
    assert verdict.status == "fail" and verdict.params["good_iface"] == "lo"  # loopback: real
    out, err, code = sh(fill_command(chk.run, {"peer": "no-such-node.invalid"}))
    verdict = evaluate(chk, out, code, err)
    assert verdict.status == "error" and "cannot resolve" in verdict.reason


def test_an_exit_status_the_check_does_not_expect_is_an_error_never_a_pass(
    kb: KnowledgeBase,
) -> None:
    chk = kb.checks["route-to-peer"][1]
    msg = 'Error: inet prefix is expected rather than "localhost".\n'
    verdict = evaluate(chk, "", 1, msg)
    assert verdict.status == "error" and "exit 1" in verdict.reason
    assert "inet prefix is expected" in verdict.reason


def test_grep_finding_nothing_is_still_a_reading() -> None:
    chk = Check.model_validate(
        {
            "id": "nccl-env",
            "title": "t",
            "run": "printf 'PATH=/bin\\n' | grep -E '^NCCL_'",
            "read_only": True,
            "problem_if": {"any_line_matches": "^NCCL_P2P_DISABLE=1"},
            "means": "m",
        }
    )
    out, err, code = sh(chk.run)
    assert code == 1 and evaluate(chk, out, code, err).status == "pass"
    assert evaluate(chk, "", 2, "grep: bad regex").status == "error"


def test_nic_traffic_without_bwm_ng_is_unavailable_although_the_shell_exits_0(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    chk = kb.checks["nic-traffic-during-ping"][1]
    ping = tmp_path / "ping"  # a ping that answers; bwm-ng is not on this PATH
    ping.write_text("#!/bin/sh\nexit 0\n")
    ping.chmod(0o755)
    out, err, code = sh(fill_command(chk.run, {"peer": "127.0.0.1"}), path=str(tmp_path))
    assert code == 0 and "bwm-ng: not found" in err  # what the issue saw
    verdict = evaluate(chk, out, code, err)
    assert verdict.status == "unavailable" and "bwm-ng" in verdict.reason


def test_a_check_that_did_not_run_moves_no_cause_in_the_walk(kb: KnowledgeBase) -> None:
    walk = Walk(kb, "multi-node-hang")
    before = {b.id: (b.p, b.status) for b in walk.beliefs()}
    for status in ("unavailable", "error", "skipped"):
        rec = CheckResult("gpu01", "route-to-peer", "ip", status, "x", reason="why", exit_code=1)
        walk.record_check(rec)
        walk.undo()
        walk.record_check(rec)
        assert {b.id: (b.p, b.status) for b in walk.beliefs()} == before
        walk.undo()


PEERS = [pairs.Peer(i, f"n{i:02d}", "root", f"10.0.0.{i}", 22) for i in range(32)]


def test_many_peers_are_probed_in_wider_groups_so_the_probe_fits_its_deadline() -> None:
    others = pairs.rotated(PEERS, 0)
    script = pairs.ssh_probe(others)
    groups = script.count("\nwait")
    worst = 2 * 5 + 1
    assert groups * worst <= pairs.PROBE_BUDGET + worst  # 31 peers, 4 at a time took 88 s
    assert pairs.at_once(3, worst) == pairs.AT_ONCE


def test_a_probe_that_timed_out_keeps_the_peers_that_answered() -> None:
    others = pairs.rotated(PEERS, 0)
    answered = "".join(f"PEER {p.index} 0 \n" for p in others[:25])
    cells = pairs.parse_ssh_probe(answered, others, unanswered="timeout")
    assert cells is not None
    assert sum(1 for s in cells.values() if s == "ok") == 25
    assert {s for label, s in cells.items() if s != "ok"} == {"timeout"}


@pytest.mark.slow
def test_report_on_hosts_that_all_failed_exits_1_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hosts = [
        {
            "host": f"gpu{i:02d}",
            "ok": False,
            "error": "connection refused",
            "checks": [{"id": "list-interfaces", "status": "error", "output": ""}],
        }
        for i in range(50)
    ]
    path = tmp_path / "check.json"
    path.write_text(json.dumps({"hosts": hosts}))
    assert main(["report", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "dlperf-help: no host answered: all 50 node(s) were unreachable (gpu00: connection refused)"
    ]
    hosts[0] = {"host": "gpu00", "ok": True, "checks": [{"id": "x", "status": "pass"}]}
    path.write_text(json.dumps({"hosts": hosts}))
    capsys.readouterr()
    assert main(["report", str(path)]) == 1  # still unreachable hosts, but one answered
    assert "no host answered" not in capsys.readouterr().err
