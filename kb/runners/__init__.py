"""Where checks run: this machine (`local`) or a user's node over SSH (`ssh`).

Every runner has the same small interface (`Runner`), so the CLI, the decision-tree
walk and the cluster survey never care where a command ran.
"""

from kb.runners.base import CommandResult, Runner, Unreachable

__all__ = ["CommandResult", "Runner", "Unreachable"]
