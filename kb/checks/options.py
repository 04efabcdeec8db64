"""How a run of checks is made: parallelism, node pairs, values, deadlines and the question
asked before a command that changes a machine. Apart from the engine, so that the code
turning results into events (`convert`) can name it without importing the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

HOST_BUDGET = 300.0  # default total seconds per host (raised to fit a longer single check)


@dataclass
class RunOptions:
    parallel: int = 64  # hosts worked on at once
    pairs: bool = True  # node-to-node probes (SSH matrix, routes, ping) when there are 2+ hosts
    survey: bool = False  # also collect kb.cluster.survey's facts from every node
    job_port: int | None = None  # the port the job's launcher uses between nodes
    params: dict[str, str] = field(default_factory=dict)  # values for {placeholders}
    # (host, exact command) -> run it?  Asked for every command that may change a machine,
    # once per host, before any host starts.  None: never ask; such commands are skipped.
    confirm: Callable[[str, str], bool] | None = None
    timeout: float | None = None  # seconds per remote command; None: each check's own
    host_budget: float | None = None  # total seconds per host; None: HOST_BUDGET or more

    def budget_for(self, longest: float) -> float:
        """The host's budget: as given, or the default raised to fit its longest command."""
        if self.host_budget is not None:
            return self.host_budget
        return max(HOST_BUDGET, longest + 30.0)
