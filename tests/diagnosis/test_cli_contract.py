"""`dlperf-help diagnose` keeps the contract of GUIDE.md §2: the JSON shape, the exit
statuses (0 nothing found, 1 a cause, 2 some input unreadable), `--top`, `--explain`,
human output with evidence marked and fixes filled, and a fast start without pydantic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"
WATCHDOG = (
    "[rank1]:[E1129 19:54:45.1 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE) ran for 600000 milliseconds"
)
UNREACHABLE = (
    "node2:5321:5360 [0] NCCL WARN Connect to fe80::a480:7fff:fecf:1ed9%13<45166> failed : "
    "Network is unreachable"
)


def _write(tmp_path: Path, name: str, *lines: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_json_has_the_contract_shape(cli, tmp_path: Path) -> None:
    log = _write(tmp_path, "rank1.log", "starting", UNREACHABLE, WATCHDOG)
    proc = cli("diagnose", "--json", str(log))
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert set(data) >= {"causes", "symptoms", "notes", "stats"}
    assert "errors" not in data
    first = data["causes"][0]
    # the contract's keys, and those added since (only added: fix_details, issue 14)
    assert set(first) == {"id", "title", "confidence", "evidence", "params", "fixes", "fix_details"}
    assert data["schema"] == "dlperf-help/diagnose/1"
    assert [d["id"] for d in first["fix_details"]] == first["fixes"]
    assert first["id"] == "nccl-wrong-interface"
    assert 0 < first["confidence"] <= 1
    assert first["evidence"][0] == {"file": str(log), "line": 2, "text": UNREACHABLE}
    assert first["params"]["address"] == "fe80::a480:7fff:fecf:1ed9"
    assert first["params"]["port"] == "45166"
    assert first["fixes"] == ["set-ifname"]
    assert data["symptoms"] == ["job-fails", "nccl-init-fails"]  # the cause's symptoms
    assert set(data["stats"]) == {"files", "lines", "bytes", "seconds"}
    assert data["stats"]["lines"] == 3


@pytest.mark.slow
def test_healthy_log_gives_empty_causes_and_exit_0(cli, tmp_path: Path) -> None:
    log = _write(tmp_path, "ok.log", "epoch 1 loss 0.3", "epoch 2 loss 0.2")
    proc = cli("diagnose", "--json", str(log))
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["causes"] == []


@pytest.mark.slow
def test_generic_cause_ranks_below_the_specific_one(cli, tmp_path: Path) -> None:
    log = _write(tmp_path, "r.log", WATCHDOG, UNREACHABLE)
    data = json.loads(cli("diagnose", "--json", str(log)).stdout)
    ids = [c["id"] for c in data["causes"]]
    assert ids == ["nccl-wrong-interface", "nccl-timeout-hang"]
    assert data["causes"][1]["confidence"] < data["causes"][0]["confidence"]


def test_top_and_explain(cli, tmp_path: Path) -> None:
    log = _write(tmp_path, "r.log", WATCHDOG, UNREACHABLE)
    data = json.loads(cli("diagnose", "--json", "--top", "1", "--explain", str(log)).stdout)
    assert len(data["causes"]) == 1
    why = data["causes"][0]["explanation"]
    assert "prior 0.25" in why and "connect-unreachable" in why


def test_unreadable_input_lists_errors_prints_the_rest_and_exits_2(cli, tmp_path: Path) -> None:
    log = _write(tmp_path, "ok.log", CUDA_LINE)
    proc = cli("diagnose", "--json", str(log), str(tmp_path / "missing.log"))
    assert proc.returncode == 2
    data = json.loads(proc.stdout)
    assert data["causes"][0]["id"] == "cuda-lib-missing"
    assert data["errors"] == [
        {
            "file": str(tmp_path / "missing.log"),
            "error": f"{tmp_path / 'missing.log'}: no such file",
        }
    ]
    assert proc.stderr.strip() == f"dlperf-help: {tmp_path / 'missing.log'}: no such file"


def test_human_output_marks_the_match_and_fills_fixes(cli, tmp_path: Path) -> None:
    log = _write(tmp_path, "r.log", CUDA_LINE)
    out = cli("diagnose", str(log)).stdout
    assert "[cuda-lib-missing, confidence" in out
    assert f"{log}:1  OSError: >>libcudart.so.10.1: cannot open shared object file<<" in out
    assert "Values: library=libcudart.so.10.1" in out
    assert "Fix: Fix it  (generic-fix)" in out


def test_fix_commands_are_filled_with_extracted_values(cli, tmp_path: Path) -> None:
    log = _write(
        tmp_path,
        "r.log",
        "vm:1:1 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>",
        "vm:1:1 [0] NCCL WARN Connect to 10.0.0.2<1234> failed : Network is unreachable",
    )
    out = cli("diagnose", str(log)).stdout
    assert "$ ip -o addr show docker0" in out  # {iface} from the extractor
    assert "$ export NCCL_SOCKET_IFNAME=<good_iface>" in out  # the user supplies it
    assert "address=10.0.0.2" in out and "port=1234" in out


def test_nothing_to_read_is_a_usage_error(cli) -> None:
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "diagnose", "-", "-"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "dlperf-help: standard input ('-') can be read only once"


@pytest.mark.slow
def test_a_cached_start_imports_no_pydantic_yaml_networkx_or_textual(cli, tmp_path: Path) -> None:
    log = _write(tmp_path, "r.log", CUDA_LINE)
    cli("diagnose", str(log))  # fills the cache
    code = (
        f"import sys, runpy; sys.argv = ['dlperf-help', 'diagnose', {str(log)!r}]\n"
        "try:\n    runpy.run_module('kb.cli.main', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "heavy = [m for m in ('pydantic', 'yaml', 'networkx', 'textual') if m in sys.modules]\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, DLPERF_HELP_RULES=str(Path(__file__).parent / "rules")),
    )
    assert proc.stderr.strip().endswith("HEAVY="), proc.stderr


def test_help_states_the_threshold_the_engine_uses(cli) -> None:
    from kb.cli.diagnose import LIKELY as SHOWN
    from kb.diagnosis.ranking import LIKELY

    out = " ".join(cli("diagnose", "--help").stdout.split())
    assert SHOWN == LIKELY
    assert f"confidence is at least {LIKELY}" in out
    assert "Exit status: 0 no known problem found, 1 a likely cause found (or a failure" in out
    assert '"basis": "symptom"' in out
