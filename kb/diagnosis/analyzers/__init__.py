"""The analyzers that read structured lines (NCCL INFO, command outputs, progress).

`default_analyzers()` gives fresh instances in the order they must finish: those that
establish facts (is the job slow?) before those that read them (NCCL transports).
"""

from __future__ import annotations

from kb.diagnosis.analyzers.base import Analyzer


def default_analyzers() -> list[Analyzer]:
    from kb.diagnosis.analyzers.commands import Commands
    from kb.diagnosis.analyzers.context import Context
    from kb.diagnosis.analyzers.nccl import NcclInfo
    from kb.diagnosis.analyzers.progress import Progress
    from kb.diagnosis.analyzers.topology import Topology

    return [Context(), Progress(), Topology(), Commands(), NcclInfo()]
