"""The runner interface: run shell commands somewhere, with a timeout and an output cap.

Checks, the cluster survey and the decision-tree walk only see `Runner`, so they never
care whether a command ran here, on a node over SSH or from a recorded node.  A runner
must say how to run one command; the rest has a default that serves a runner without
more to offer: batches and lanes one command after the other (over SSH every separate
command pays for a remote shell, so that runner runs them in one go), nothing to
connect, cancel or close.  Callers call these methods, never probe for them.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Protocol

from kb.runners.probes import Needs, ToolProbes
from kb.runners.result import (
    OUTPUT_CAP,
    STDERR_CAP,
    CommandResult,
    Job,
    OnLaneResult,
    OnResult,
    Unreachable,
    cancelled_result,
    decode,
    timed_out,
    unavailable_result,
)

__all__ = [
    "OUTPUT_CAP",
    "STDERR_CAP",
    "CheckNeeds",
    "CommandResult",
    "Job",
    "OnLaneResult",
    "OnResult",
    "Runner",
    "Unreachable",
    "cancelled_result",
    "decode",
    "timed_out",
    "unavailable_result",
]


class CheckNeeds(Protocol):
    """What a runner may ask of a check before taking it (a rule's `Check` is one)."""

    @property
    def requires(self) -> Sequence[str]: ...

    @property
    def read_only(self) -> bool: ...


class Runner(ABC):
    """Something that runs shell commands on one host."""

    name: str  # the host as the user named it ("local" for this machine)
    address: str | None = None  # the address actually connected to, once connected
    _limit: tuple[float, float] | None = None  # (time.monotonic() deadline, budget in s)

    @abstractmethod
    def run(self, command: str, timeout: float) -> CommandResult:
        """Run `command` through `sh -c`; never raise for command failures."""

    def run_batch(
        self, jobs: Sequence[Job], on_result: OnResult | None = None
    ) -> list[CommandResult]:
        """Run the commands in order, calling `on_result(index, result)` as each ends."""
        results = []
        for i, (command, timeout) in enumerate(jobs):
            results.append(self.run(command, timeout))
            if on_result is not None:
                on_result(i, results[-1])
        return results

    def run_lanes(
        self,
        lanes: list[list[Job]],
        on_result: OnLaneResult | None = None,
        needs: list[list[Needs]] | None = None,
    ) -> list[list[CommandResult]]:
        """Run each lane's jobs in order, calling `on_result(lane, index, result)` as each
        ends; here one lane after the other.  `needs` gives the tools each job needs: jobs
        needing a tool that hung on this host are not run (`kb.runners.probes`), nor any
        once the budget given to `limit` is spent."""
        probes = ToolProbes()
        results: list[list[CommandResult]] = []
        for number, lane in enumerate(lanes):
            results.append([])
            for index, (command, timeout) in enumerate(lane):
                tools = needs[number][index] if needs is not None else ()
                result = self._run_in_budget(probes, tools, command, timeout)
                results[-1].append(result)
                if on_result is not None:
                    on_result(number, index, result)
        return results

    def _run_in_budget(
        self, probes: ToolProbes, tools: Needs, command: str, timeout: float
    ) -> CommandResult:
        deadline, budget = self._limit or (math.inf, math.inf)
        left = deadline - time.monotonic()
        why = probes.blocked(tools) or (f"host budget spent ({budget:g} s)" if left <= 0 else None)
        if why is not None:
            return unavailable_result(command, why)
        result = self.run(command, min(timeout, left))
        if result.timed_out and left < timeout:  # cut by the budget, not its own
            result.unavailable, result.timed_out = True, False
            result.error = (
                f"host budget spent ({budget:g} s) while it ran "
                f"(stopped after {result.seconds:.1f} s)"
            )
        probes.note(tools, result)
        return result

    def limit(self, deadline: float, budget: float) -> None:
        """Give this host a total deadline (`time.monotonic()`) and the budget it came from;
        no command starts after it, and one still running then is cut at it."""
        self._limit = (deadline, budget)

    def connect(self) -> None:
        """Open the connection now; raise `Unreachable` saying why not.  Here: nothing to
        open."""
        return None

    def can_run(self, check: CheckNeeds) -> bool:
        """Whether this host can answer `check` at all (a recorded node answers only the
        programs it recorded)."""
        return True

    def cancel(self) -> None:
        """Stop what runs now (from any thread); later results say `cancelled`."""
        return None

    def close(self) -> None:
        """Let go of what the runner holds (a connection, a folder)."""
        return None
