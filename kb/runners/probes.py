"""Checks on one host that need the same tool share one probe.

A wedged tool (an `nvidia-smi` stuck on a hung driver) makes every command that calls
it wait out its whole timeout: twelve GPU checks at 20 s each were four minutes for one
node.  The first command that needs a tool is its probe: when it times out, the tool is
taken as hung and every later command needing it is reported `unavailable` at once,
with that reason, instead of being run.  A tool is proven to answer once any command
needing it ends by itself; a command that needs several tools blames only the ones not
yet proven.
"""

from __future__ import annotations

from collections.abc import Iterable

from kb.runners.result import CommandResult

Needs = tuple[str, ...]  # programs a command needs (a check's `requires`)


class ToolProbes:
    """What is known on one host about the tools its commands need."""

    def __init__(self) -> None:
        self.answered: set[str] = set()
        self.hung: dict[str, str] = {}  # tool -> why it is taken as hung

    def blocked(self, needs: Iterable[str]) -> str | None:
        """Why a command needing `needs` is not run, or None to run it."""
        for tool in needs:
            if tool in self.hung:
                return self.hung[tool]
        return None

    def note(self, needs: Iterable[str], result: CommandResult) -> list[str]:
        """Learn from a finished command; the tools newly taken as hung."""
        needs = tuple(needs)
        if result.timed_out:
            fresh = [t for t in needs if t not in self.answered and t not in self.hung]
            for tool in fresh:
                self.hung[tool] = (
                    f"{tool} did not answer: a command needing it on this host "
                    f"{result.error or 'timed out'}; not asked again"
                )
            return fresh
        if result.exit_code is not None:
            self.answered.update(needs)
        return []
