"""The Runner base class's defaults, on the real local runner: lanes one after the other,
a hung tool asked once, the host budget from `limit` (what the engine relies on for every
runner that cannot run lanes side by side, a recorded node included)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kb.runners.base import CommandResult, Runner
from kb.runners.local import LocalRunner
from kb.runners.probes import Needs


def test_lanes_run_in_order_and_report_each_result_as_it_ends(tmp_path: Path) -> None:
    log = tmp_path / "order"
    seen: list[tuple[int, int, str]] = []
    lanes = [
        [(f"echo a >> {log}; echo a", 5.0), (f"echo b >> {log}; echo b", 5.0)],
        [(f"echo c >> {log}; echo c", 5.0)],
    ]
    results = LocalRunner().run_lanes(lanes, lambda li, ji, r: seen.append((li, ji, r.stdout)))
    assert [[r.stdout for r in lane] for lane in results] == [["a\n", "b\n"], ["c\n"]]
    assert seen == [(0, 0, "a\n"), (0, 1, "b\n"), (1, 0, "c\n")]
    assert log.read_text() == "a\nb\nc\n"


@pytest.mark.slow
def test_a_tool_that_hung_is_not_asked_again_on_that_host(tmp_path: Path) -> None:
    marker = tmp_path / "asked-again"
    lanes = [[("sleep 5", 0.5), (f"touch {marker}", 5.0), ("echo other", 5.0)]]
    needs: list[list[Needs]] = [[("nvidia-smi",), ("nvidia-smi",), ("ip",)]]
    hung, skipped, other = LocalRunner().run_lanes(lanes, None, needs)[0]
    assert hung.timed_out and hung.error == "timed out after 0.5 s"
    assert skipped.unavailable and not marker.exists()
    assert skipped.error is not None and skipped.error.startswith("nvidia-smi did not answer")
    assert other.ok and other.stdout == "other\n"


@pytest.mark.slow
def test_a_spent_budget_cuts_the_running_command_and_skips_the_rest() -> None:
    runner = LocalRunner()
    runner.limit(time.monotonic() + 1.0, 1.0)
    start = time.monotonic()
    cut, never = runner.run_lanes([[("sleep 10", 20.0), ("echo late", 5.0)]])[0]
    assert time.monotonic() - start < 5
    assert cut.unavailable and not cut.timed_out
    assert cut.error is not None and cut.error.startswith("host budget spent (1 s) while it ran")
    assert never.unavailable and never.error == "host budget spent (1 s)"
    assert never.stdout == "" and never.exit_code is None


def test_a_runner_must_say_how_it_runs_a_command() -> None:
    class Incomplete(Runner):
        name = "nowhere"

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]


def test_a_runner_that_only_runs_commands_gets_batches_and_no_op_lifecycle() -> None:
    class Echo(Runner):
        name = "echo"

        def run(self, command: str, timeout: float) -> CommandResult:
            return CommandResult(command, command.upper(), "", 0, 0.0)

    runner = Echo()
    got: list[int] = []
    results = runner.run_batch([("a", 1.0), ("b", 1.0)], lambda i, _r: got.append(i))
    assert [r.stdout for r in results] == ["A", "B"] and got == [0, 1]
    runner.connect()
    runner.cancel()
    runner.close()
    assert runner.address is None
