"""The command injections reproduced in issue 11, each run for real: the value that once
ran `touch` is refused (one line, exit 2, naming the placeholder), and the rewritten
templates do what their text says with real values (valid JSON, a .bashrc line that a
later shell reads back as the same path, a sed that pins the version)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kb.rules.placeholders import fill_command
from kb.runners.local import LocalRunner
from kb.walk.session import run_check
from tests.shipped_rules import knowledge


def dlperf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def _fix_command(fix_id: str, index: int) -> tuple[str, dict[str, str]]:
    fix = knowledge().fixes[fix_id]
    examples = {k: d.example for k, d in fix.params.items() if d.example is not None}
    return fill_command(fix.commands[index].run, examples, fix.params), examples


def _sh(command: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    return subprocess.run(
        ["/bin/sh", "-c", command], capture_output=True, text=True, env=env, cwd=cwd, timeout=30
    )


@pytest.mark.slow
def test_check_refuses_a_library_param_that_would_run_a_command(tmp_path: Path) -> None:
    marker = tmp_path / "P"
    proc = dlperf(
        "check",
        "--check",
        "find-cuda-library",
        "--param",
        f"library=libcudart.so.10.1$(touch {marker})",
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert not marker.exists()
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert ": {library}: 'libcudart.so.10.1$(touch" in lines[0]
    assert lines[0].endswith("is not a file name (letters, digits, ._+-, no '/') (--param)")


@pytest.mark.slow
def test_check_refuses_a_hostile_value_in_a_diagnosis_file(tmp_path: Path) -> None:
    marker = tmp_path / "P"
    doc = {
        "causes": [{"id": "cuda-lib-missing", "params": {"library": f'x"; touch {marker}; echo "'}}]
    }
    diag = tmp_path / "diag.json"
    diag.write_text(json.dumps(doc))
    for extra in ([], ["--json"]):
        proc = dlperf("check", *extra, "--from-diagnosis", str(diag), cwd=tmp_path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert not marker.exists()
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "{library}: 'x\"; touch" in lines[0]
        assert lines[0].endswith(f"(from {diag})")


@pytest.mark.slow
def test_find_cuda_library_still_reports_a_missing_library_by_its_name(tmp_path: Path) -> None:
    kb = knowledge()
    chk = kb.checks["find-cuda-library"][1]
    runner = LocalRunner(env={"LD_LIBRARY_PATH": str(tmp_path)})
    rec = run_check(chk, runner, {"library": "libdlperf-absent.so.9"})
    assert "not found: libdlperf-absent.so.9" in rec.output
    assert rec.status == "fail"
    (tmp_path / "libdlperf-here.so.1").write_text("")
    assert run_check(chk, runner, {"library": "libdlperf-here.so.1"}).status == "pass"


def test_a_refused_value_never_runs_even_through_the_session(tmp_path: Path) -> None:
    """The TUI runs checks through kb.walk.session.run_check: it refuses too, with a reason."""
    chk = knowledge().checks["port-listening"][1]
    marker = tmp_path / "P"
    rec = run_check(chk, LocalRunner(), {"port": f"29500;touch {marker};"})
    assert rec.status == "error" and not marker.exists()
    assert rec.reason.startswith("refused value: {port}: '29500;touch")
    assert rec.command == "ss -ltnp sport = :<port>"


def test_tf_config_is_valid_json_for_the_fixs_own_example(tmp_path: Path) -> None:
    command, ex = _fix_command("set-tf-worker-hosts-task-index", 0)
    out = _sh(command + '; printf "%s" "$TF_CONFIG"', tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "cluster": {"worker": ex["worker_list"].split(",")},
        "task": {"type": "worker", "index": int(ex["task_index"])},
    }


def test_the_bashrc_lines_read_back_as_the_same_paths(tmp_path: Path) -> None:
    command, ex = _fix_command("add-cuda-libs-to-ld-library-path", 1)
    assert _sh(command, tmp_path).returncode == 0
    back = _sh('LD_LIBRARY_PATH=/old; . "$HOME/.bashrc"; printf %s "$LD_LIBRARY_PATH"', tmp_path)
    home = ex["cuda_home"]
    assert back.stdout == f"{home}/lib64:{home}/extras/CUPTI/lib64:/old"

    command, ex = _fix_command("export-model-repo-pythonpath", 1)
    assert _sh(command, tmp_path).returncode == 0
    back = _sh('PYTHONPATH=/p; . "$HOME/.bashrc"; printf %s "$PYTHONPATH"', tmp_path)
    assert back.stdout == f"/p:{ex['models_dir']}"


def test_the_tfds_pin_rewrites_the_requirement_line(tmp_path: Path) -> None:
    fix = knowledge().fixes["pin-tensorflow-datasets-version"]
    req = tmp_path / "official" / "requirements.txt"
    req.parent.mkdir()
    req.write_text("six\ntensorflow-datasets>=1.2\npyyaml\n")
    values = {"tfds_version": "3.0.0", "models_dir": str(tmp_path)}
    assert _sh(fill_command(fix.commands[0].run, values, fix.params), tmp_path).returncode == 0
    assert req.read_text() == "six\ntensorflow-datasets==3.0.0\npyyaml\n"


@pytest.mark.slow
def test_a_user_name_from_a_log_that_looks_like_an_option_is_never_shown_as_one(
    tmp_path: Path,
) -> None:
    log = tmp_path / "rank0.log"
    log.write_text("-Eevil.log@gpu02: Permission denied (publickey,password).\n")
    proc = dlperf("diagnose", str(log), cwd=tmp_path)
    assert "ssh-passwordless-missing" in proc.stdout
    commands = [ln for ln in proc.stdout.splitlines() if ln.lstrip().startswith("$ ")]
    assert any("ssh-copy-id -i ~/.ssh/id_rsa.pub -p <port> <user>@" in c for c in commands)
    assert not any("-Eevil" in c for c in commands)
