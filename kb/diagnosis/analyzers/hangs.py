"""What a hang's artefacts say beyond "one rank is stuck": findings the rules turn into causes.

The Flight Recorder dumps and the RAS report become `dlperf-hang:` statements
(`kb.diagnosis.hangs`); the hang signatures judge each one. Some statements point past
the hang at a cause elsewhere, and need the others to name the host: ranks whose dumps
carry different NCCL versions (or NCCL RAS warning that a peer runs another version),
a node that runs a different number of NCCL processes than the others (RAS's outlier
nodes), a rank that died (left no dump, or RAS considers its process dead), whose host
may have killed it. Each is a finding of `rules/vocabulary/findings.yaml` with the rank
and its host (`rank`, `rank_host`: from the RAS lines about that rank), and the rules
that list it under `named_by` are the causes; no cause id here.
"""

from __future__ import annotations

import re

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.hangs.markers import FLIGHT_RECORDER_PREFIX, RAS_PREFIX
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

VERSIONS_DIFFER = "hang-nccl-versions-differ"
PROCESSES_PER_NODE_DIFFER = "hang-processes-per-node-differ"
RANK_DIED = "hang-rank-died"

_FR = re.escape(FLIGHT_RECORDER_PREFIX)
_RAS = re.escape(RAS_PREFIX)
_FR_VERSIONS = LazyPattern(rf"^{_FR} ranks run different NCCL versions: (.+)$")
_FR_GROUP = LazyPattern(r"(\S+) on ranks? ([\d,…]+)")
# NCCL's RAS thread (src/ras/ras.cc) when a peer of another NCCL version connects
_RAS_PEER_VERSION = LazyPattern(
    r"NCCL version mismatch with remote peer (\S+?)(?:<\d+>)? \(local: ([^,]+), remote ([^)]+)\)"
)
_OUTLIER = LazyPattern(rf"^{_RAS} node (\S+) runs a different number of NCCL processes")
_NO_DUMP = LazyPattern(rf"^{_FR} ranks? ([\d,]+)…? left no dump")
_DEAD = LazyPattern(
    rf"^{_RAS} process (\d+) on host (\S+) \(GPUs? [^,)]+(?:, rank (\d+))?\) is considered dead"
)
_RANK_HOST = LazyPattern(
    rf"^{_RAS} (?:process \d+ on host (\S+) \(GPUs? [^,)]+, rank (\d+)\)"
    rf"|rank (\d+) \(process \d+ on host (\S+), GPU)"
)


class Hangs(Analyzer):
    name = "hangs"
    taps = (
        Tap("statement", r"^dlperf-hang: ", cap=2000),
        Tap("ras-peer-version", r"NCCL version mismatch with remote peer", cap=50),
    )

    def __init__(self) -> None:
        super().__init__()
        self.hosts: dict[str, str] = {}  # rank -> host, from the RAS statements
        self.versions: list[tuple[Evidence, str, str]] = []  # (line, odd ranks, desc)
        self.peers: list[tuple[Evidence, str, str]] = []  # (line, peer host, versions)
        self.outliers: list[tuple[Evidence, str]] = []
        self.dead: list[tuple[Evidence, str | None, str | None]] = []  # (line, rank, host)

    def feed(self, tap: str, line_no: int, text: str) -> None:
        if tap == "ras-peer-version":
            m = _RAS_PEER_VERSION.search(text)
            if m:
                ev = self.evidence(line_no, text, m.start(), m.end(), "peer-version")
                self.peers.append((ev, m[1], f"local {m[2]}, remote {m[3]}"))
            return
        m = _RANK_HOST.match(text)
        if m:
            rank, host = (m[2], m[1]) if m[2] else (m[3], m[4])
            self.hosts.setdefault(rank, host)
        if m := _FR_VERSIONS.match(text):
            groups = [(v, rs.rstrip("…").split(",")) for v, rs in _FR_GROUP.findall(m[1])]
            if len(groups) > 1:
                odd = min(groups, key=lambda g: len(g[1]))[1]
                ev = self.evidence(line_no, text, what="versions")
                self.versions.append((ev, ",".join(odd), m[1]))
        elif m := _OUTLIER.match(text):
            self.outliers.append((self.evidence(line_no, text, what="outlier-node"), m[1]))
        elif m := _NO_DUMP.match(text):
            self.dead.append((self.evidence(line_no, text, what="no-dump"), m[1], None))
        elif m := _DEAD.match(text):
            self.dead.append((self.evidence(line_no, text, what="dead"), m[3], m[2]))

    def _values(self, rank: str | None, host: str | None) -> dict[str, str]:
        first = rank.split(",")[0] if rank else None
        host = host or (self.hosts.get(first) if first else None)
        values = {"rank": first} if first else {}
        return {**values, "rank_host": host} if host else values

    def finish(self, facts: Facts) -> Report:
        report = Report()
        for ev, ranks, desc in self.versions[:1]:
            report.findings.append(
                Finding(
                    VERSIONS_DIFFER,
                    "fr-nccl-versions-differ",
                    0.85,
                    f"the ranks' Flight Recorder dumps were written by different NCCL "
                    f"versions ({desc}): rank {ranks} runs another NCCL than the others",
                    [ev],
                    self._values(ranks, None),
                )
            )
        for _ev, host, desc in self.peers[:1]:
            report.findings.append(
                Finding(
                    VERSIONS_DIFFER,
                    "ras-peer-nccl-version",
                    0.85,
                    f"NCCL's RAS refused a peer on {host} that runs another NCCL ({desc})",
                    [p[0] for p in self.peers[:3]],
                    {"rank_host": host},
                )
            )
        for _ev, host in self.outliers[:1]:
            report.findings.append(
                Finding(
                    PROCESSES_PER_NODE_DIFFER,
                    "ras-outlier-node",
                    0.5,
                    f"RAS counts a different number of NCCL processes on {host} than on the "
                    "other nodes: ranks there died, never started, or share its GPUs",
                    [e for e, _ in self.outliers[:3]],
                    {"rank_host": host},
                )
            )
        if self.dead:  # shows its symptom: what killed the rank is asked on its host
            report.shows.append(RANK_DIED)
        return report
