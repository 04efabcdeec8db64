"""`dlperf-help check` reads like the best doctor tools (issue 14): grouped by area,
✓ / ✗ / ! per check, what a problem means and its fix's commands, a summary line, colour
only on a terminal (NO_COLOR honoured), `--verbose` for the rest; a check that did not
run is never a ✓. Run for real on this machine, GPU tools faked on PATH where needed.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SGR = re.compile(r"\x1b\[[0-9;]*m")
# a real H200's bus id, printed twice (two processes on GPU 0), after a message the shell
# wrote about itself: the finding must name the GPU, never "/bin/sh:"
FAKE_SMI = """#!/bin/sh
/bin/sh -c 'dlperf-no-such-helper' 2>&1
/bin/sh -c 'dlperf-no-such-helper' 2>&1
printf '00000000:00:06.0\\n00000000:00:06.0\\n'
"""
CHECKS = ["--check", "gpu-shared-by-ranks", "--check", "ib-port-state"]


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_SMI, encoding="utf-8")
    smi.chmod(0o755)
    out = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    # ibstat is absent from this PATH: its check cannot run
    out["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    return out


def _pipe(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "check", *args],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip


def _tty(env: dict[str, str], *args: str) -> str:
    """The command's stdout and stderr on a pseudo-terminal, as a user sees them."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec the CLI on the terminal
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-m", "kb.cli.main", "check", *args], env)
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_in_a_pipe_problems_are_grouped_with_meaning_and_fix(env: dict[str, str]) -> None:
    proc = _pipe(env, *CHECKS)
    out = proc.stdout
    assert proc.returncode == 1 and not SGR.search(out)
    lines = out.splitlines()
    assert lines[0].startswith("✗ gpu")  # the area with a problem first
    assert "✗ Do several processes of the job share one GPU" in out
    assert "found: GPU 00000000:00:06.0 is used by several processes" in out
    assert "/bin/sh:" not in out.split("found:")[1].splitlines()[0]
    assert "More than one process holds a context on the same GPU" in out  # what it means
    assert "fix: " in out and "\n        $ " in out  # the remedy, as commands
    assert lines[-1].startswith("1 host(s): 1 problem(s), 0 passed, 1 not run")
    # a check that did not run is not listed without --verbose, and is never a ✓
    assert "ib-port-state" not in out
    assert "✓" not in out
    assert "ib-port-state" in proc.stderr  # progress, as results arrive


@pytest.mark.slow
def test_verbose_lists_what_did_not_run_and_why(env: dict[str, str]) -> None:
    out = _pipe(env, "--verbose", *CHECKS).stdout
    [line] = [ln for ln in out.splitlines() if "(ib-port-state)" in ln]
    assert line.lstrip().startswith("- ")
    assert "not run: ibstat is not installed on this node" in out
    assert out.splitlines()[-1].endswith("1 not run")  # no hint once verbose


@pytest.mark.slow
def test_passing_checks_show_with_verbose_only(env: dict[str, str]) -> None:
    args = ["--check", "dev-shm-size"]
    quiet = _pipe(env, *args)
    assert quiet.returncode == 0
    assert quiet.stdout.splitlines()[0].startswith("✓ ")
    assert "/dev/shm is" not in quiet.stdout
    assert "/dev/shm is" in _pipe(env, "--verbose", *args).stdout


@pytest.mark.slow
def test_colour_on_a_terminal_and_none_with_no_color(env: dict[str, str]) -> None:
    coloured = _tty(env, *CHECKS)
    assert "\x1b[31m✗\x1b[0m" in coloured
    plain = _tty({**env, "NO_COLOR": "1"}, *CHECKS)
    assert "✗ gpu" in plain and not SGR.search(plain)


@pytest.mark.slow
def test_a_missing_module_names_it_not_python3(env: dict[str, str]) -> None:
    """python3 is installed: a check that needs a Python module it lacks says the module."""
    out = _pipe(env, "--verbose", "--check", "tfds-version-pin").stdout
    assert "python3 is not installed" not in out
    assert "tensorflow_datasets is not installed on this node" in out


@pytest.mark.slow
def test_a_missing_file_is_not_a_missing_python3(tmp_path: Path) -> None:
    """Python's own `can't open file ... No such file or directory` (exit 2) is an error
    of the check, not "python3 is not installed"; the shell's `python3: not found` is."""
    from kb.authoring.checked import load_kb
    from kb.checks.evaluate import evaluate

    check = load_kb().checks["tf-sees-gpus"][1]
    real = subprocess.run(
        ["python3", str(tmp_path / "absent.py")], capture_output=True, text=True, check=False
    )
    outcome = evaluate(check, real.stdout, real.returncode, real.stderr)
    assert outcome.status == "error" and "python3" not in outcome.reason.split("failed")[0]
    shell = subprocess.run(
        ["/bin/sh", "-c", "PATH=/nonexistent python3"], capture_output=True, text=True
    )
    outcome = evaluate(check, shell.stdout, shell.returncode, shell.stderr)
    assert (outcome.status, outcome.reason) == (
        "unavailable",
        "python3 is not installed on this node",
    )
