"""A `diagnose --json` file masks secrets by default; `check --from-diagnosis` must not run
a check with the mask (`****`) as the value: it stops in one line naming the placeholder and
the file and says how to get the real value (issue 11)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kb.util.secrets import MASK, mask_json


def dlperf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def _diagnosis(tmp_path: Path, masked: bool) -> tuple[Path, Path]:
    """A diagnosis whose `data_dir` holds a token, written as `diagnose --json` writes it."""
    data = tmp_path / "token=hf_abc123def456" / "train"
    data.mkdir(parents=True)
    doc = {"causes": [{"id": "dataset-format", "params": {"data_dir": str(data)}}]}
    if masked:
        doc = mask_json(doc)  # what diagnose --json does unless --no-mask
    path = tmp_path / "diag.json"
    path.write_text(json.dumps(doc))
    return path, data


@pytest.mark.slow
def test_a_masked_value_is_refused_naming_the_parameter_and_the_file(tmp_path: Path) -> None:
    diag, _ = _diagnosis(tmp_path, masked=True)
    assert MASK in json.loads(diag.read_text())["causes"][0]["params"]["data_dir"]
    for extra in ([], ["--json"]):
        proc = dlperf("check", *extra, "--from-diagnosis", str(diag), cwd=tmp_path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert lines[0].startswith(f"dlperf-help: {diag}: {{data_dir}} was masked as a secret")
        assert "diagnose --json --no-mask" in lines[0]
        assert proc.stdout == ""


@pytest.mark.slow
def test_a_param_given_for_the_masked_value_is_used(tmp_path: Path) -> None:
    diag, data = _diagnosis(tmp_path, masked=True)
    proc = dlperf(
        "check",
        "--json",
        "--from-diagnosis",
        str(diag),
        "--param",
        f"data_dir={data}",
        cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stderr
    ran = json.loads(proc.stdout)
    assert str(data) in json.dumps(ran) and MASK not in json.dumps(ran)


@pytest.mark.slow
def test_an_unmasked_diagnosis_runs_its_checks_with_the_value(tmp_path: Path) -> None:
    diag, data = _diagnosis(tmp_path, masked=False)
    proc = dlperf("check", "--json", "--from-diagnosis", str(diag), cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert str(data) in proc.stdout
