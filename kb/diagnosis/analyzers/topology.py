"""A pasted `nvidia-smi topo -m` (or `topo -p2p`) matrix, judged.

The link matrix is read and judged by `kb.sysinfo.topology` (the cluster doctor's parser):
GPU groups joined only through SYS/NODE/PHB make intra-node collectives slow
(gpu-topology-slow) where the job is shown slow (a matrix alone describes the machine: said
as a note, since nothing failed); GPUs with no NIC nearby cannot use GPUDirect RDMA (supporting
evidence, and a note). A `topo -p2p` matrix is read here: a cell other than OK means
peer-to-peer is unavailable between two GPUs (supporting nccl-p2p-failure).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence, Note
from kb.util.lazyre import LazyPattern

if TYPE_CHECKING:  # the matrix's parser is imported with the first matrix: few logs hold one
    from kb.sysinfo import topology as topo_mod

_DEVICE = LazyPattern(r"^(?:GPU\d+|NIC\d+|mlx\d*_\d+)$")
P2P_CELLS = {"OK", "CNS", "GNS", "TNS", "NS", "U"}
MAX_ROWS = 64
GPU_GROUPS_WEIGHT = {"SYS": 0.7, "NODE": 0.55, "PHB": 0.55}


def p2p_matrix(lines: list[str]) -> dict[tuple[str, str], str]:
    """{(row GPU, column GPU): status} from `nvidia-smi topo -p2p` output."""
    cols = [t for t in lines[0].split() if _DEVICE.match(t)]
    cells: dict[tuple[str, str], str] = {}
    for line in lines[1 : MAX_ROWS + 1]:
        toks = line.split()
        if not toks or not _DEVICE.match(toks[0]):
            if cells:
                break
            continue
        for col, cell in zip(cols, toks[1 : len(cols) + 1], strict=False):
            if cell in P2P_CELLS or cell == "X":
                cells[(toks[0], col)] = cell
    return cells


RowEvidence = Callable[[str], Evidence]


def _evidence_for(file: str, rows: list[tuple[int, str]]) -> RowEvidence:
    """Evidence pointing at a device's row of the matrix (its header, if no row)."""
    row_of = {t.split()[0]: (n, t) for n, t in rows[1:] if t.split()}

    def ev(dev: str) -> Evidence:
        n, t = row_of.get(dev, rows[0])
        return Evidence(file, n, t, 0, len(t), "topology")

    return ev


class Topology(Analyzer):
    name = "topology"
    taps = (Tap("header", r"^\s*GPU0\s+(?:GPU1|NIC0|mlx|CPU Affinity)", follow=MAX_ROWS, cap=200),)

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[tuple[str, list[tuple[int, str]]]] = []

    def feed(self, tap: str, line_no: int, text: str) -> None:
        if tap == "header":
            self.blocks.append((self.file, [(line_no, text)]))
        elif self.blocks and self.blocks[-1][0] == self.file:
            rows = self.blocks[-1][1]
            if line_no == rows[-1][0] + 1 and len(rows) <= MAX_ROWS:
                rows.append((line_no, text))

    def finish(self, facts: Facts) -> Report:
        report = Report()
        for file, rows in self.blocks:
            from kb.sysinfo import topology as topo_mod

            ev = _evidence_for(file, rows)
            topo = topo_mod.parse("\n".join(t for _, t in rows))
            if topo.gpus:
                self._links(report, topo, ev, bool(facts.get("slow")))
            else:
                self._p2p(report, p2p_matrix([t for _, t in rows]), ev)
        return report

    def _links(self, report: Report, topo: topo_mod.Topology, ev: RowEvidence, slow: bool) -> None:
        from kb.sysinfo import topology as topo_mod

        for f in topo.findings():
            gpus = [d for d in f.devices if d.startswith("GPU")]
            evidence = [ev(gpus[0] if gpus else topo.gpus[0])]
            if f.severity == "slow" and "NIC" not in f.text:
                worst = max(
                    (topo.link(a, b) for a in gpus for b in gpus if a != b),
                    key=topo_mod.rank,
                    default="SYS",
                )
                link = topo_mod.kind(worst)
                if not slow:  # the machine as it is: a cause only where the job is slow
                    report.notes.append(Note("gpu-topology-slow-links", f.text, evidence))
                    continue
                report.findings.append(
                    Finding(
                        "gpu-groups-without-nvlink",
                        "gpu-groups-without-nvlink",
                        GPU_GROUPS_WEIGHT.get(link, 0.55),
                        f.text,
                        evidence,
                        {"link": link, "gpus": ", ".join(gpus)},
                    )
                )
            elif f.severity == "slow":
                report.findings.append(
                    Finding(
                        "no-nic-near-gpus", "no-nic-near-gpus", 0.4, f.text, evidence, alone=False
                    )
                )
                report.notes.append(Note("gpu-nic-placement", f.text, evidence))
            elif f.severity == "note":
                report.notes.append(Note("gpu-topology", f.text, evidence))

    def _p2p(self, report: Report, cells: dict[tuple[str, str], str], ev: RowEvidence) -> None:
        bad = sorted(k for k, v in cells.items() if k[0] != k[1] and v in P2P_CELLS - {"OK"})
        if bad:
            a, b = bad[0]
            report.findings.append(
                Finding(
                    "topo-p2p-unsupported",
                    "topo-p2p-unsupported",
                    0.5,
                    f"peer-to-peer between {a} and {b} is {cells[bad[0]]} (not OK)",
                    [ev(a)],
                    {"gpu_a": a, "gpu_b": b},
                    alone=False,
                )
            )
