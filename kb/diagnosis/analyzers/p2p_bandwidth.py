"""cuda-samples' `p2pBandwidthLatencyTest`: peer-to-peer copies slower than staged ones.

The test measures every GPU pair twice, with peer access off (copies staged through host
memory) and on, and prints a `P2P=Disabled` and a `P2P=Enabled` bandwidth matrix, one
pair of each for unidirectional and bidirectional copies. Where peer access works, the
enabled figure is at least the disabled one (NVLink or a PCIe switch carry it directly).
An enabled figure far *below* the disabled one means the peer path is broken on the way:
ACS or the IOMMU redirecting peer transactions through the root complex, or a PCIe
topology that does not route P2P. NCCL's P2P transport then hangs or crawls
(nccl-p2p-failure; `NCCL_P2P_DISABLE=1` is the workaround, ACS off the fix). Pairs with
no peer access (`CANNOT Access Peer`) run the same staged copy twice and say nothing.
"""

from __future__ import annotations

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

_HEADER = r"^\s*(Unidirectional|Bidirectional) P2P=(Enabled|Disabled) Bandwidth"
_HEADER_RE = LazyPattern(_HEADER)
_ROW = LazyPattern(r"^\s*(\d+)((?:\s+\d+(?:\.\d+)?)+)\s*$")
MAX_GPUS = 64
COLLAPSE = 0.5  # enabled below half the staged copy: the peer path is broken

Matrix = dict[tuple[int, int], float]


class P2pBandwidth(Analyzer):
    name = "p2p-bandwidth"
    taps = (Tap("matrix", _HEADER, follow=MAX_GPUS + 1, cap=50),)

    def __init__(self) -> None:
        super().__init__()
        # (file, direction, enabled) -> the matrix, and the evidence row of each source GPU
        self.matrices: dict[tuple[str, str, bool], Matrix] = {}
        self.rows: dict[tuple[str, str, bool], dict[int, Evidence]] = {}
        self._at: tuple[str, str, bool, int] | None = None  # the matrix being read

    def feed(self, tap: str, line_no: int, text: str) -> None:
        # each header is delivered with the lines that follow it, up to the next header
        if tap == "matrix":
            m = _HEADER_RE.search(text)
            if m:
                self._at = (self.file, m[1], m[2] == "Enabled", line_no)
            return
        if self._at is None or self._at[0] != self.file or line_no > self._at[3] + MAX_GPUS + 1:
            return
        if _HEADER_RE.search(text):  # the next matrix: its own tap reads it
            self._at = None
            return
        row = _ROW.match(text[:2000])
        if row is None:
            return
        key = self._at[:3]
        src = int(row[1])
        cells = self.matrices.setdefault(key, {})
        for dst, value in enumerate(row[2].split()):
            cells[(src, dst)] = float(value)
        self.rows.setdefault(key, {})[src] = self.evidence(line_no, text, 0, len(text), "row")

    def finish(self, facts: Facts) -> Report:
        report = Report()
        worst: tuple[float, tuple[str, str], tuple[int, int]] | None = None
        for (file, direction, enabled), on in self.matrices.items():
            off = self.matrices.get((file, direction, False))
            if not enabled or off is None:
                continue
            for (a, b), value in on.items():
                staged = off.get((a, b), 0.0)
                if a == b or staged <= 0 or value >= COLLAPSE * staged:
                    continue
                ratio = value / staged
                if worst is None or ratio < worst[0]:
                    worst = (ratio, (file, direction), (a, b))
        if worst is None:
            return report
        _, (file, direction), (a, b) = worst
        on_row = self.rows[(file, direction, True)].get(a)
        off_row = self.rows[(file, direction, False)].get(a)
        on_value = self.matrices[(file, direction, True)][(a, b)]
        off_value = self.matrices[(file, direction, False)][(a, b)]
        report.findings.append(
            Finding(
                "p2p-slower-than-staged-copy",
                "p2p-slower-than-staged-copy",
                0.8,
                f"{direction.lower()} copies from GPU {a} to GPU {b} run at {on_value:g} GB/s "
                f"with peer access and {off_value:g} GB/s without it: the peer path is broken",
                [e for e in (on_row, off_row) if e is not None],
                {
                    "gpu_a": str(a),
                    "gpu_b": str(b),
                    "p2p_gbs": f"{on_value:g}",
                    "staged_gbs": f"{off_value:g}",
                },
                measured=True,
            )
        )
        return report
