"""The analyzers that read structured lines (NCCL INFO, command outputs, progress).

`default_analyzers()` gives fresh instances in the order they must finish: those that
establish facts (where the job runs, is it slow?) before those that read them (NCCL
transports and hosts, Gloo's peers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kb.diagnosis.analyzers.base import Analyzer


def default_analyzers(
    framework_markers: Mapping[str, Sequence[str]] | None = None,
) -> list[Analyzer]:
    """Fresh analyzers; `framework_markers` (framework -> RE2 patterns, from the rules'
    vocabulary) are the lines that show a framework (none: no framework is told)."""
    from kb.diagnosis.analyzers.commands import Commands
    from kb.diagnosis.analyzers.completion import Completion
    from kb.diagnosis.analyzers.context import Context
    from kb.diagnosis.analyzers.gloo import Gloo
    from kb.diagnosis.analyzers.hangs import Hangs
    from kb.diagnosis.analyzers.imports import Imports
    from kb.diagnosis.analyzers.nccl import NcclInfo
    from kb.diagnosis.analyzers.nccl_errors import NcclErrors
    from kb.diagnosis.analyzers.nccl_plugins import NcclPlugins
    from kb.diagnosis.analyzers.nccl_tests_runs import NcclTestsRuns
    from kb.diagnosis.analyzers.p2p_bandwidth import P2pBandwidth
    from kb.diagnosis.analyzers.progress import Progress
    from kb.diagnosis.analyzers.setting import Setting
    from kb.diagnosis.analyzers.stall import Stall
    from kb.diagnosis.analyzers.topology import Topology
    from kb.diagnosis.analyzers.virtual_peers import VirtualPeers

    return [
        Context(),
        Setting(framework_markers or {}),
        Progress(),
        Commands(),
        NcclInfo(),
        NcclPlugins(),
        NcclTestsRuns(),
        P2pBandwidth(),
        Topology(),  # after those that say whether the job is slow: a matrix alone is no cause
        Gloo(),
        VirtualPeers(),
        NcclErrors(),
        Hangs(),
        Imports(),
        Stall(),
        Completion(),
    ]
