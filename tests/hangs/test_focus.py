"""The responsible rank and host of a hang, named in `diagnose --json`, filled into the
fixes, and put first by the batch walk and the cluster report, whose survey of that host
then decides between the hang's causes.

Real inputs: the captures of corpora/hangs, the RAS report of NCCL's documentation
(tests/hangs/ras) and the survey of the real 2xH200 host (tests/cluster/fixtures); the
surveyed cluster is that survey copied per node with only the planted fact changed."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kb.cli.main import main
from kb.cluster import survey
from kb.diagnosis.engine import diagnose_paths
from kb.diagnosis.hangs.focus import Focus, from_diagnosis, from_lines, node_matches

HERE = Path(__file__).parent
DOCS_RAS = HERE / "ras" / "nccl-2.24-docs-dead-and-mismatch.txt"  # process on .213 dead
RAW_SURVEY = HERE.parent / "cluster" / "fixtures" / "survey" / "h200-survey-raw.txt"
H200 = survey.parse_output(RAW_SURVEY.read_text())
DEAD_HOST = "172.16.64.213"


def _node(host: str, address: str, env: dict[str, str] | None = None, **facts: Any) -> Any:
    """The real H200 survey as node `host` with eth0 at `address`, plus planted facts."""
    doc = copy.deepcopy(H200)
    doc["host"] = doc["facts"]["hostname"] = host
    doc["facts"]["boot_id"] = f"boot-{host}"
    for i in doc["facts"]["interfaces"]:
        if i["kind"] != "loopback":
            i["mac"] = f"{i['mac'][:-2]}{host[-2:]}"
        if i["name"] == "eth0":
            i["addresses"] = [f"{address}/24"]
    doc["facts"]["env"].update(env or {})
    doc["facts"].update(facts)
    return doc


def _cluster(tmp_path: Path, **dead_host_facts: Any) -> str:
    """Three surveyed nodes; the third is the host whose process RAS considers dead."""
    env = dead_host_facts.pop("env", None)
    docs = [
        _node("gpu01", "172.16.64.210"),
        _node("gpu02", "172.16.64.212"),
        _node("gpu03", DEAD_HOST, env, **dead_host_facts),
    ]
    path = tmp_path / "nodes.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_each_real_capture_names_its_rank_and_host_in_values_evidence_and_fixes(
    capsys: pytest.CaptureFixture[str],
    private_cache: Path,
    label: dict[str, str],
    handed_over: Callable[[str], list[str]],
) -> None:
    _, out = _run(capsys, "diagnose", "--json", *handed_over(label["case"]))
    first = json.loads(out)["causes"][0]
    focus = from_lines(e["text"] for e in first["evidence"])
    assert focus == Focus(label["expected_rank"], label["expected_host"] or None)
    assert first["params"]["rank"] == label["expected_rank"]
    hang_lines = [e["text"] for e in first["evidence"] if e["text"].startswith("dlperf-hang:")]
    assert any(f"rank {label['expected_rank']}" in t for t in hang_lines)
    runs = [c["run"] for f in first["fix_details"] for c in f["commands"]]
    if label["expected_host"]:  # RAS names the host: the fixes run their checks there
        assert first["params"]["rank_host"] == label["expected_host"]
        assert any(label["expected_host"] in t for t in hang_lines)
        assert f"dlperf-help check --host {label['expected_host']} --cause host-out-of-memory" in (
            " ".join(runs)
        )
    else:  # Gloo has no RAS: no host, and the host stays a placeholder to fill
        assert "rank_host" not in first["params"]
        assert any("--host <rank_host>" in r for r in runs)


def test_rank_and_host_come_from_one_line_not_from_two() -> None:
    """NCCL's documented report: a dead process on .213 (no rank known) and ranks 0, 2 on
    .210 behind; the focus is the dead process's host, not rank 0 of another host."""
    from kb.diagnosis.hangs import ras

    assert from_lines(ras.statements(DOCS_RAS.read_text())) == Focus(None, DEAD_HOST)
    lines = [
        "dlperf-hang: flight-recorder: rank 2 left no dump while ranks 0,1 wait in collective #5",
        "dlperf-hang: nccl-ras: process 470 on host 127.0.0.1 (GPU 0, rank 2) does not answer",
    ]
    assert from_lines(lines) == Focus("2", "127.0.0.1")  # the host from RAS's line of rank 2
    assert from_lines(["dlperf-hang: nccl-ras: process 9 on host -oProxy=x (GPU 0) dies"]) is None


def test_a_loopback_host_is_a_node_only_when_it_is_the_only_one() -> None:
    assert node_matches("127.0.0.1", ["vm", "127.0.0.1/8"], only_one=True)
    assert not node_matches("127.0.0.1", ["vm", "127.0.0.1/8"], only_one=False)
    assert node_matches(DEAD_HOST, ["gpu03", f"{DEAD_HOST}/24"], only_one=False)
    assert node_matches("gpu03", ["gpu03.cluster.local"], only_one=False)
    assert not node_matches("10.0.0.1", ["10.0.0.12/24"], only_one=False)


@pytest.mark.slow
def test_the_dead_rank_shows_that_a_process_was_killed(
    shipped: Any, handed_over: Callable[[str], list[str]]
) -> None:
    """`hang-rank-died` names the process-killed symptom: its causes join the walk."""
    diag = diagnose_paths(shipped, handed_over("nccl-kill"))
    assert "process-killed" in diag.symptoms
    assert from_diagnosis(diag) == Focus("2", "127.0.0.1")
    sleep = diagnose_paths(shipped, handed_over("nccl-sleep"))
    assert "process-killed" not in sleep.symptoms  # the sleeping rank did not die


@pytest.mark.slow
def test_the_walk_names_the_focus_and_asks_for_the_checks_on_that_host_first(
    capsys: pytest.CaptureFixture[str], private_cache: Path, corpus: Path
) -> None:
    case = corpus / "nccl-kill"
    logs = [str(case / "run.log"), str(case / "ras.txt"), str(case / "fr_dumps")]
    _, out = _run(capsys, "walk", *logs, "--answer", "every-rank-alive=one-died", "--json")
    doc = json.loads(out)
    assert doc["focus"]["rank"] == "2" and doc["focus"]["host"] == "127.0.0.1"
    assert doc["focus"]["text"].endswith("run the checks on 127.0.0.1 first")
    if doc["needs"] and doc["next"]["kind"] == "check":
        assert "on 127.0.0.1 first" in doc["needs"] and "--host 127.0.0.1" in doc["needs"]
    dead = next(f for f in doc["fixes"] if f["id"] == "inspect-dead-rank")
    assert dead["commands"][0]["run"].startswith("dlperf-help check --host 127.0.0.1 ")
    _, text = _run(capsys, "walk", *logs)
    assert "focus: the hang starts at rank 2 on host 127.0.0.1" in text


@pytest.mark.slow
def test_the_batch_walk_runs_the_dead_hosts_checks_first_and_its_survey_decides(
    capsys: pytest.CaptureFixture[str], private_cache: Path, tmp_path: Path
) -> None:
    """The dead process's host runs another system NCCL: the different NCCL leads."""
    nodes = _cluster(tmp_path, nccl_system_version="2.27.3")
    _, out = _run(capsys, "walk", str(DOCS_RAS), "--facts", nodes, "--json")
    doc = json.loads(out)
    assert doc["focus"]["host"] == DEAD_HOST
    assert doc["causes"][0]["id"] == "nccl-missing-or-mismatch"
    ran = [s for s in doc["steps"] if s.startswith("check ")]
    assert ran and all(s.split("(", 1)[1].startswith("gpu03: ") for s in ran)  # gpu03 first
    # the same cluster without the planted NCCL: the hang itself leads
    _, out = _run(capsys, "walk", str(DOCS_RAS), "--facts", _cluster(tmp_path), "--json")
    assert json.loads(out)["causes"][0]["id"] == "nccl-timeout-hang"


@pytest.mark.slow
@pytest.mark.parametrize(
    "planted, cause",
    [
        ({"nccl_system_version": "2.27.3"}, "nccl-missing-or-mismatch"),
        ({"env": {"NCCL_SOCKET_IFNAME": "ib0"}}, "nccl-wrong-interface"),
    ],
    ids=["another-nccl", "no-such-nic"],
)
def test_report_puts_the_cause_found_on_the_hung_host_first(
    capsys: pytest.CaptureFixture[str],
    private_cache: Path,
    tmp_path: Path,
    planted: dict[str, Any],
    cause: str,
) -> None:
    nodes = _cluster(tmp_path, **planted)
    code, out = _run(capsys, "report", nodes, "--hang", str(DOCS_RAS), "--json")
    doc = json.loads(out)
    assert code == 1
    first = doc["causes"][0]
    assert first["id"] == cause
    assert first["evidence"][0]["text"] == (
        f"gpu03: the hang starts at the responsible rank on host {DEAD_HOST}: "
        f"run the checks on {DEAD_HOST} first"
    )
    note = doc["notes"][0]
    assert note["id"] == "hang-focus" and f"(surveyed as gpu03): {cause}" in note["text"]


@pytest.mark.slow
def test_report_says_when_the_hung_host_was_not_surveyed(
    capsys: pytest.CaptureFixture[str], private_cache: Path, tmp_path: Path, corpus: Path
) -> None:
    nodes = _cluster(tmp_path)
    kill = corpus / "nccl-kill"
    _, out = _run(capsys, "report", nodes, "--hang", str(kill / "ras.txt"), "--json")
    note = json.loads(out)["notes"][0]
    assert note == {
        "id": "hang-focus",
        "text": "the hang starts at rank 2 on host 127.0.0.1: run the checks on 127.0.0.1 "
        "first; that host is not among the surveyed nodes",
    }
    one = tmp_path / "vm.json"
    one.write_text(json.dumps(H200))  # a single node: the loopback host is that node
    _, out = _run(capsys, "report", str(one), "--hang", str(kill / "ras.txt"), "--json")
    assert "(surveyed as vm)" in json.loads(out)["notes"][0]["text"]
