"""`dlperf-help walk`: the batch walk from the command line, as the issue runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.cli.main import main
from tests.walk.conftest import DATA, LOGS

IFNAME_LOG = str(LOGS / "h200-nccl-socket-ifname-missing.log")
SURVEY = str(DATA / "h200-survey.json")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["walk", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_a_survey_of_a_node_without_ib9_settles_on_the_wrong_interface_with_the_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, IFNAME_LOG, "--facts", SURVEY, "--json")
    doc = json.loads(out)
    assert code == 0
    assert (doc["end"], doc["cause"]) == ("settled", "nccl-wrong-interface")
    assert doc["fixes"][0]["id"] == "set-nccl-socket-ifname"
    assert (
        doc["fixes"][0]["commands"][0]["run"] == "export NCCL_SOCKET_IFNAME=eth"
    )  # the survey's NIC
    where = doc["fixes"][0]["commands"][0]["where"]
    assert "mpirun -x NCCL_SOCKET_IFNAME" in where  # where an export takes effect
    assert doc["steps"] == ["check configured-iface-exists → fail (NO-MATCH ib9)"]
    top = doc["causes"][0]
    assert top["status"] == "confirmed" and top["p"] > 0.9 and "on vm" in top["why"][-1]


@pytest.mark.slow
def test_a_survey_of_a_node_that_has_the_nic_does_not_settle_on_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = json.loads(Path(SURVEY).read_text())
    doc["facts"]["interfaces"].append(
        {"name": "ib9", "kind": "ipoib", "up": True, "state": "UP", "addresses": ["10.9.0.2/24"]}
    )
    survey = tmp_path / "survey.json"
    survey.write_text(json.dumps(doc))
    code, out, _ = run(capsys, IFNAME_LOG, "--facts", str(survey), "--json")
    walked = json.loads(out)
    assert code == 1 and walked["end"] == "needs"  # a person must look further
    assert walked["steps"][0] == "check configured-iface-exists → pass (MATCH ib9 UP)"
    assert walked["causes"][0]["p"] < 0.6
    assert walked["next"] is not None and walked["needs"]


@pytest.mark.slow
def test_answers_settle_a_symptom_walk_and_plain_text_says_where_it_ended(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys,
        "--symptom",
        "ssh-launch-fails",
        "--answer",
        "ssh-batchmode-output=auth-refused",
    )
    assert code == 0
    assert out.splitlines()[0] == "end: settled at ssh-passwordless-missing"
    assert "fix: " in out


@pytest.mark.slow
def test_without_facts_the_walk_stops_where_a_person_is_needed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "--symptom", "multi-node-hang", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["end"] == "needs" and doc["steps"] == []
    assert doc["next"]["id"] in doc["needs"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a log or --symptom ID"),
        (["--symptom", "no-such"], "unknown symptom 'no-such'"),
        (["--symptom", "multi-node-hang", "--answer", "oops"], "--answer takes QUESTION=OUTCOME"),
        (["--symptom", "multi-node-hang", "--answer", "nope=yes"], "no question or check 'nope'"),
        (["missing.log"], "missing.log: cannot read"),
    ],
)
@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
