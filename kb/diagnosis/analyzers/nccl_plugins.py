"""Nodes of one job that load different NCCL network plugins.

NCCL looks for a network plugin (`libnccl-net.so`, HPC-X's SHARP plugin, aws-ofi-nccl)
at init and says on every rank what it found: `NET/Plugin: Loaded net plugin <name>`,
`Plugin Path : <file>` or `Successfully loaded external plugin <file>` when it loads one;
`NET/Plugin : No plugin found (libnccl-net.so), using internal implementation` (2.4-2.18),
`NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.` (2.19+) or
`NET/Plugin: Using internal network plugin.` when it falls back. When some hosts of the
same log load a plugin and others fall back, the nodes' NCCL installations differ (an
image or module path installed on some nodes only): their ranks speak different network
transports and the job hangs or fails at its first collective across them
-> nccl-missing-or-mismatch. One host, or all hosts alike, says nothing.
"""

from __future__ import annotations

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

_HOST = LazyPattern(r"^\s*(?:\[[^\]]*\]\s*)?([\w.-]+):\d+:\d+ \[\d+\] NCCL INFO ")
_EXTERNAL = (
    r"NCCL INFO (?:NET/Plugin ?: Loaded (?:net|coll|collnet) plugin |Plugin Path : \S"
    r"|Successfully loaded external (?:net )?plugin )"
)
_INTERNAL = (
    r"NCCL INFO NET/Plugin ?: (?:(?:dlerror=.*)?No plugin found\b|Could not find: ?\S"
    r"|Using internal net(?:work)? plugin)"
)


class NcclPlugins(Analyzer):
    name = "nccl-plugins"
    taps = (Tap("external", _EXTERNAL, cap=2_000), Tap("internal", _INTERNAL, cap=2_000))

    def __init__(self) -> None:
        super().__init__()
        self.hosts: dict[str, dict[str, Evidence]] = {"external": {}, "internal": {}}

    def feed(self, tap: str, line_no: int, text: str) -> None:
        m = _HOST.search(text)
        if m is None or tap not in self.hosts:
            return
        self.hosts[tap].setdefault(m[1], self.evidence(line_no, text, 0, len(text), tap))

    def finish(self, facts: Facts) -> Report:
        report = Report()
        external, internal = self.hosts["external"], self.hosts["internal"]
        without = sorted(set(internal) - set(external))
        with_ = sorted(set(external) - set(internal))
        if not without or not with_:
            return report
        report.findings.append(
            Finding(
                "net-plugin-on-some-nodes",
                "net-plugin-on-some-nodes",
                0.8,
                f"NCCL loads a network plugin on {', '.join(with_[:4])} but not on "
                f"{', '.join(without[:4])}: the nodes' NCCL installations differ",
                [external[with_[0]], internal[without[0]]],
                {"host_with_plugin": with_[0], "host_without_plugin": without[0]},
            )
        )
        return report
