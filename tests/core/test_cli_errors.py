"""The command line never shows a traceback: usage errors and bad input are one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kb import __version__


def dlperf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", *args], capture_output=True, text=True, timeout=60
    )


def test_version() -> None:
    proc = dlperf("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"dlperf-help {__version__}"


@pytest.mark.parametrize(
    "args",
    [
        ["no-such-command"],
        ["rules", "frobnicate"],
        ["runbook", "--lang", "fr"],
        pytest.param(["runbook", "no-such-cause-id"], marks=pytest.mark.slow),  # loads the rules
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args: list[str]) -> None:
    proc = dlperf(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
