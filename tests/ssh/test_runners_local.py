"""The local runner and the batch protocol the SSH runner speaks, without a network."""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kb.runners.base import OUTPUT_CAP
from kb.runners.batch import (
    BatchParser,
    Finished,
    kill_tree_command,
    new_nonce,
    remote_command,
)
from kb.runners.local import LocalRunner


def test_endless_output_is_capped_while_reading_and_the_command_stopped() -> None:
    start = time.monotonic()
    result = LocalRunner().run("yes 0123456789abcdef", timeout=30)
    assert result.truncated and len(result.stdout) == OUTPUT_CAP
    assert result.exit_code is None  # stopped, so no exit status of its own
    assert time.monotonic() - start < 10  # not left running until the timeout


@pytest.mark.slow
def test_timeout_kills_the_whole_process_tree(tmp_path: Path) -> None:
    marker = tmp_path / "survived"
    result = LocalRunner().run(f"(sleep 1; touch {marker}) & sleep 30", timeout=0.3)
    assert result.error == "timed out after 0.3 s" and result.exit_code is None
    time.sleep(1.3)
    assert not marker.exists()


def test_cancel_from_another_thread_stops_a_running_command() -> None:
    runner = LocalRunner()
    threading.Timer(0.3, runner.cancel).start()
    start = time.monotonic()
    result = runner.run("sleep 30", timeout=60)
    assert result.cancelled and time.monotonic() - start < 5
    assert runner.run("echo later", timeout=5).cancelled


def test_stdout_stderr_and_exit_code_come_back_apart() -> None:
    result = LocalRunner().run("echo out; echo err >&2; exit 3", timeout=5)
    assert (result.stdout, result.stderr, result.exit_code) == ("out\n", "err\n", 3)


def _parse(
    jobs: list[tuple[str, float]], nonce: str, proc: subprocess.CompletedProcess[bytes], chunk: int
) -> list[Finished]:
    parser = BatchParser(len(jobs), nonce)
    done = []
    rng = random.Random(chunk)
    for data, feed in ((proc.stdout, parser.feed_stdout), (proc.stderr, None)):
        i = 0
        while i < len(data):
            n = rng.randint(1, chunk)
            part = data[i : i + n]
            done += feed(part, time.monotonic()) if feed else parser.feed_stderr(part)
            i += n
    return done


def test_batch_splits_outputs_exit_codes_and_stderr_whatever_the_chunking() -> None:
    jobs = [
        ("printf 'no newline'", 5.0),
        ("echo a; echo b >&2; exit 4", 5.0),
        ("nosuchtool-xyz", 5.0),
        ("echo DLPH0000 E 0 0; echo fake marker", 5.0),
        ("printf 'half a line' >&2", 5.0),
        ("echo last", 5.0),
    ]
    nonce = new_nonce()
    proc = subprocess.run(
        ["sh", "-c", remote_command(jobs, nonce)], capture_output=True, timeout=60
    )
    for chunk in (1, 7, 4096):
        done = _parse(jobs, nonce, proc, chunk)
        assert [f.index for f in done] == list(range(len(jobs)))
        assert done[0].stdout == "no newline"
        assert (done[1].stdout, done[1].stderr, done[1].exit_code) == ("a\n", "b\n", 4)
        assert done[2].exit_code == 127 and "not found" in done[2].stderr
        assert done[3].stdout == "DLPH0000 E 0 0\nfake marker\n"  # output cannot forge markers
        assert done[4].stderr == "half a line"  # the PID announcement is taken out
        assert done[5].stdout == "last\n"


def test_batch_reports_overflow_of_a_command_that_floods() -> None:
    nonce = new_nonce()
    proc = subprocess.Popen(
        ["sh", "-c", remote_command([("yes", 30.0)], nonce)], stdout=subprocess.PIPE
    )
    parser = BatchParser(1, nonce)
    assert isinstance(proc.stdout, io.BufferedReader)
    while parser.overflow is None:
        parser.feed_stdout(proc.stdout.read1(65536), 0.0)
    proc.kill()
    proc.wait()
    index, kept = parser.overflow
    assert index == 0 and len(kept) == OUTPUT_CAP


@pytest.mark.slow
def test_a_command_past_its_timeout_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    nonce = new_nonce()
    marker = tmp_path / "survived"
    job = (f"(sleep 1; touch {marker}) & sleep 30 | cat", 1.0)
    proc = subprocess.Popen(
        ["sh", "-c", remote_command([job, ("echo next", 5.0)], nonce)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    parser = BatchParser(2, nonce)
    assert isinstance(proc.stderr, io.BufferedReader) and proc.stdout is not None
    while 0 not in parser.pids:
        parser.feed_stderr(proc.stderr.read1(4096))
    start = time.monotonic()
    subprocess.run(["sh", "-c", kill_tree_command(parser.pids[0])], check=True, timeout=10)
    out, err = proc.communicate(timeout=10)
    done = parser.feed_stdout(out, 0.0) + parser.feed_stderr(err)
    assert time.monotonic() - start < 5
    assert [f.index for f in done] == [0, 1] and done[1].stdout == "next\n"
    time.sleep(1.2)
    assert not marker.exists()


@pytest.mark.slow
def test_paramiko_is_imported_only_by_the_ssh_runner_and_only_when_connecting() -> None:
    kb_dir = Path(__file__).resolve().parents[2] / "kb"
    importers = sorted(
        str(p.relative_to(kb_dir))
        for p in kb_dir.rglob("*.py")
        if re.search(r"^\s*(import paramiko|from paramiko)", p.read_text(), re.M)
    )
    assert importers == [
        "runners/ssh.py",
        "runners/sshauth.py",
        "runners/sshconfig.py",
        "runners/sshexec.py",
    ]
    code = "import sys, kb.checks, kb.runners.hosts, kb.runners.ssh, kb.cli.check; print(sorted(m for m in sys.modules if m.startswith('paramiko')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _local_run(
    tmp_path: Path, checks: list[str], smi: str, **options: float
) -> tuple[dict[str, tuple[str, str]], float]:
    """Checks of the hang test rules on this machine, with a fake nvidia-smi first on PATH."""
    from kb.authoring.checked import load_kb
    from kb.checks import RunOptions, plan, run_checks
    from kb.runners.hosts import Target

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text(smi)
    (fake / "nvidia-smi").chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin"}
    kb = load_kb(Path(__file__).parent / "rules_hangs")
    start = time.monotonic()
    report = run_checks(
        [Target("local", "me", "localhost", 22)],
        plan.for_checks(kb, checks),
        lambda target: LocalRunner(target.label, env=env),
        RunOptions(pairs=False, **options),  # type: ignore[arg-type]
    )
    return {c.id: (c.status, c.reason) for c in report.hosts[0].checks}, time.monotonic() - start


@pytest.mark.slow
def test_local_checks_share_one_probe_per_tool(tmp_path: Path) -> None:
    checks, seconds = _local_run(
        tmp_path, ["smi-list", "smi-topo", "cpus"], "#!/bin/sh\nexec sleep 1000\n", timeout=1
    )
    assert checks["smi-list"] == ("error", "timed out after 1 s")
    assert checks["smi-topo"][0] == "unavailable" and "not asked again" in checks["smi-topo"][1]
    assert checks["cpus"][0] == "pass"
    assert seconds < 1 + 4


@pytest.mark.slow
def test_local_host_budget_stops_the_running_command_and_the_rest(tmp_path: Path) -> None:
    checks, seconds = _local_run(
        tmp_path, ["sleeps-a-bit", "sleeps-long", "cpus"], "#!/bin/sh\n", host_budget=3
    )
    assert checks["sleeps-a-bit"][0] == "pass"
    assert checks["sleeps-long"][0] == "unavailable"
    assert checks["sleeps-long"][1].startswith("host budget spent (3 s) while it ran")
    assert checks["cpus"] == ("unavailable", "host budget spent (3 s)")
    assert seconds < 3 + 3


def test_local_endless_stderr_is_stopped_at_its_cap() -> None:
    from kb.runners.base import STDERR_CAP

    start = time.monotonic()
    result = LocalRunner().run("yes 0123456789abcdef >&2", timeout=30)
    assert result.truncated and len(result.stderr) == STDERR_CAP and result.exit_code is None
    assert result.error is not None and result.error.startswith("stderr passed 64 kB")
    assert time.monotonic() - start < 10
