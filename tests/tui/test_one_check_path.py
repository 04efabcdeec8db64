"""The assistant runs a check through kb's engine, as `dlperf-help check` does.

Why: the TUI had its own runner factory and thread pool; a check then timed out, was
cancelled and was judged in two ways. Now `kb.walk.session.run_check_on` hands one task to
`kb.checks.engine.run_checks` and the TUI only waits for it in a Textual worker.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from dlperf_tui.hosts import LOCAL, Hosts
from kb.checks.model import CheckResult
from kb.rules.schema.models import Check, Expect
from kb.walk.session import run_check_on

TUI = Path(__file__).parent.parent.parent / "dlperf_tui"


def _check(run: str, read_only: bool = True, timeout: float = 30) -> Check:
    return Check(
        id="probe",
        title="Probe",
        run=run,
        read_only=read_only,
        timeout=timeout,
        problem_if=Expect(contains="bad"),
        means="-",
    )


def test_a_check_here_is_judged_by_the_engine(tmp_path: Path) -> None:
    hosts = Hosts()
    rec = run_check_on(
        _check("printf 'bad\\n'; printf 'oops' >&2"), hosts.for_job(), hosts.make_runner, {}
    )
    assert isinstance(rec, CheckResult)
    assert (rec.host, rec.id, rec.status, rec.exit_code) == (LOCAL, "probe", "fail", 0)
    assert rec.output == "bad\noops"  # stdout then stderr, as `check --json` gives them


def test_a_command_that_changes_the_machine_runs_only_when_confirmed(tmp_path: Path) -> None:
    hosts = Hosts()
    marker = tmp_path / "touched"
    chk = _check("touch {path}", read_only=False)
    params = {"path": str(marker)}
    rec = run_check_on(chk, hosts.for_job(), hosts.make_runner, params)
    assert rec.status == "skipped" and "changes the machine" in rec.reason
    assert not marker.exists()
    rec = run_check_on(chk, hosts.for_job(), hosts.make_runner, params, confirmed=True)
    assert rec.status == "pass" and marker.exists()


def test_a_node_that_does_not_answer_is_an_error_saying_why(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on: bound, never accepted
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    hosts = Hosts(ssh_config=Path("/dev/null"), known_hosts=tmp_path / "known_hosts")
    (name,) = hosts.add(f"nobody@127.0.0.1:{port}")
    hosts.select(name)
    rec = run_check_on(_check("true"), hosts.for_job(), hosts.make_runner, {})
    assert rec.status == "error" and rec.host == name
    assert "refused" in rec.reason, rec.reason
    hosts.close()


@pytest.mark.slow
def test_cancelling_stops_the_command_and_says_so() -> None:
    hosts = Hosts()
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    start = time.monotonic()
    rec = run_check_on(_check("sleep 20"), hosts.for_job(), hosts.make_runner, {}, cancel=cancel)
    assert time.monotonic() - start < 10
    assert rec.status == "skipped" and rec.reason == "cancelled"


def test_the_tui_makes_no_runner_and_has_no_pool_of_its_own() -> None:
    sources = {p.name: p.read_text() for p in TUI.rglob("*.py")}
    for name, text in sources.items():
        for made in ("ThreadPoolExecutor", "SSHRunner(", "LocalRunner(", "Session(options"):
            assert made not in text, f"{name} has {made}"
