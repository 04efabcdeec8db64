"""Where checks run: this machine (`local`) or a user's node over SSH (`ssh`).

Every runner has the same small interface (`Runner`), so the CLI, the decision-tree
walk and the cluster survey never care where a command ran.
"""

from kb.runners.base import BatchRunner, CommandResult, Runner, Unreachable, run_batch

__all__ = ["BatchRunner", "CommandResult", "Runner", "Unreachable", "run_batch"]
