"""A check whose program or Python module is missing on the node says `unavailable`, and a
tool that is present but fails says `error`: neither is ever read as pass or fail.

Each check runs for real with /bin/sh on a PATH that holds only the programs named, so a
program left out is missing exactly as on a bare node.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kb.checks.evaluate import CheckOutcome

RunCheck = Callable[..., CheckOutcome]

BASE = ["grep", "paste", "sort", "head", "cut", "sed", "ls"]
SMI_FAILS = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n",
    9,
)
EIGHT_GPUS = "".join(f"GPU {i}: NVIDIA H200 (UUID: GPU-{i}0000000-0000)\n" for i in range(8))


def _python_has(module: str) -> bool:
    code = f"import importlib.util as u, sys; sys.exit(u.find_spec({module!r}) is None)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


@pytest.mark.parametrize(
    ("check_id", "tools", "only"),
    [
        ("one-process-per-gpu", {}, [*BASE, "awk"]),  # no nvidia-smi
        ("one-process-per-gpu", {"nvidia-smi": "4242, 00000000:00:06.0\n"}, BASE),  # no awk
        ("cpu-count-per-gpu", {}, [*BASE, "nproc"]),  # no nvidia-smi
        ("cpu-count-per-gpu", {"nvidia-smi": EIGHT_GPUS}, BASE),  # no nproc
        ("gpu-utilization-while-training", {}, [*BASE, "awk"]),
        ("tfds-version-pin", {}, BASE),  # no python3
        ("gluonnlp-version", {}, BASE),
        ("dali-installed", {}, BASE),
        ("driver-supports-cuda-runtime", {}, BASE),
        ("nvidia-driver-version", {}, BASE),
        ("model-requirements-importable", {}, BASE),
    ],
)
def test_a_missing_program_makes_the_check_unavailable(
    run_check: RunCheck, check_id: str, tools: dict[str, str], only: list[str]
) -> None:
    outcome = run_check(check_id, tools=tools, only=only)
    assert outcome.status == "unavailable", outcome


def test_the_repository_check_without_git_is_unavailable(
    run_check: RunCheck, tmp_path: Path
) -> None:
    params = {"repo_dir": str(tmp_path), "expected_ref": "r2.3.0"}
    assert run_check("model-repo-commit", params, only=BASE).status == "unavailable"


@pytest.mark.parametrize(
    ("check_id", "module"),
    [
        ("tfds-version-pin", "tensorflow_datasets"),
        ("gluonnlp-version", "gluonnlp"),
        ("model-requirements-importable", "tensorflow"),
    ],
)
def test_a_missing_python_module_makes_the_version_check_unavailable(
    run_check: RunCheck, check_id: str, module: str
) -> None:
    if _python_has(module):
        pytest.skip(f"{module} is installed in this interpreter")
    outcome = run_check(check_id, only=[*BASE, "python3"])
    assert outcome.status == "unavailable", outcome
    assert module in outcome.reason


def test_without_dali_the_dali_check_says_so_rather_than_blaming_pip(run_check: RunCheck) -> None:
    if _python_has("nvidia.dali"):
        pytest.skip("DALI is installed in this interpreter")
    outcome = run_check("dali-installed", only=[*BASE, "python3"])
    assert outcome.status == "fail"


@pytest.mark.parametrize("check_id", ["one-process-per-gpu", "cpu-count-per-gpu"])
def test_an_nvidia_smi_that_fails_is_an_error_not_a_verdict(
    run_check: RunCheck, check_id: str
) -> None:
    outcome = run_check(check_id, tools={"nvidia-smi": SMI_FAILS}, only=[*BASE, "awk", "nproc"])
    assert outcome.status == "error", outcome


def test_no_training_process_means_the_process_check_cannot_judge(run_check: RunCheck) -> None:
    outcome = run_check("one-process-per-gpu", tools={"nvidia-smi": ""}, only=[*BASE, "awk"])
    assert outcome.status == "error"
    assert outcome.status not in ("pass", "fail")


def test_the_checks_still_judge_when_their_tools_are_present(run_check: RunCheck) -> None:
    single = "4242, 00000000:00:06.0\n4242, 00000000:00:07.0\n"
    assert (
        run_check("one-process-per-gpu", tools={"nvidia-smi": single}, only=[*BASE, "awk"]).status
        == "fail"
    )
    few = run_check(
        "cpu-count-per-gpu", tools={"nvidia-smi": EIGHT_GPUS, "nproc": "16\n"}, only=BASE
    )
    assert (few.status, few.params["cpus_per_gpu"]) == ("fail", "2")
