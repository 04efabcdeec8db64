"""`survey` records, and `report` compares, only the training stack's environment
variables (kb/data/stack_env.yaml): Terraform's `TF_CLI_CONFIG_FILE` is no difference
between nodes, TensorFlow's `TF_XLA_FLAGS` and NCCL's `NCCL_DEBUG` are (issue 14).
Two real surveys of this machine, run with different environments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kb.cli.main import main
from kb.cluster.survey.software import of_the_stack

ROOT = Path(__file__).resolve().parents[2]


def _survey(tmp_path: Path, name: str, **env: str) -> Path:
    out = subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "survey", "--json", "--timeout", "60"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=True,
        env={**os.environ, **env},
    ).stdout  # fmt: skip
    doc = json.loads(out)
    doc["host"] = name  # two nodes of one machine
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.slow
def test_only_the_stacks_variables_differ(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a = _survey(
        tmp_path, "node-a", TF_CLI_CONFIG_FILE="/a.tfrc", TF_VAR_region="eu",
        NCCL_DEBUG="INFO", TF_XLA_FLAGS="--tf_xla_auto_jit=2",
    )  # fmt: skip
    b = _survey(tmp_path, "node-b", TF_CLI_CONFIG_FILE="/b.tfrc", NCCL_DEBUG="WARN")
    env_a = json.loads(a.read_text())["facts"]["env"]
    assert "TF_CLI_CONFIG_FILE" not in env_a and "TF_VAR_region" not in env_a
    assert env_a["TF_XLA_FLAGS"] == "--tf_xla_auto_jit=2"
    main(["report", "--json", str(a), str(b)])
    report = json.loads(capsys.readouterr().out)
    differ = {d["fact"] for d in report["differences"]}
    assert {"env.NCCL_DEBUG", "env.TF_XLA_FLAGS"} <= differ
    assert not any("TF_CLI" in f or "TF_VAR" in f for f in differ)


@pytest.mark.slow
def test_an_older_survey_with_terraform_variables_is_not_compared_on_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs: list[Any] = []
    for name, value in (("node-a", "/a.tfrc"), ("node-b", "/b.tfrc")):
        path = _survey(tmp_path, name)
        doc = json.loads(path.read_text())
        doc["facts"]["env"] = {**(doc["facts"]["env"] or {}), "TF_CLI_CONFIG_FILE": value}
        path.write_text(json.dumps(doc), encoding="utf-8")
        docs.append(path)
    main(["report", "--json", *map(str, docs)])
    differ = {d["fact"] for d in json.loads(capsys.readouterr().out)["differences"]}
    assert "env.TF_CLI_CONFIG_FILE" not in differ


def test_the_rule() -> None:
    assert of_the_stack("TF_CPP_MIN_LOG_LEVEL") and of_the_stack("CUDA_VISIBLE_DEVICES")
    assert not of_the_stack("TF_LOG") and not of_the_stack("TF_IN_AUTOMATION")
    assert not of_the_stack("PATH") and not of_the_stack("TERRAFORM_X")
