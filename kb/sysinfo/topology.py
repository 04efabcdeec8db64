"""Reading `nvidia-smi topo -m`: which GPUs (and NICs) talk over NVLink, PCIe or the CPU.

The matrix decides how fast intra-node collectives can be and whether GPUDirect
RDMA is possible.  `parse(text)` takes the output as printed or pasted (tabs or
spaces, old `SOC` legends, `NIC0` columns with a NIC legend) and returns a
`Topology` whose `findings()` say, in plain words, which GPU groups or NIC
placements force a slow path (which causes a slow finding names is the rules' business).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kb.util.textsafe import strip_escapes

RANK = {"X": 0, "NV": 1, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 5, "SYS": 6}
LINK_WORDS = {
    "X": "the device itself",
    "NV#": "a bonded set of # NVLinks: direct GPU-to-GPU links, the fastest path",
    "PIX": "at most one PCIe bridge (a PCIe switch) between them: peer-to-peer is fast",
    "PXB": "several PCIe bridges but not the CPU's host bridge: peer-to-peer still works",
    "PHB": "through a PCIe host bridge, i.e. the CPU: peer-to-peer traffic usually bounces "
    "through host memory",
    "NODE": "across the PCIe host bridges of one NUMA node (one CPU socket): no direct "
    "peer-to-peer",
    "SYS": "across the interconnect between CPU sockets (QPI/UPI/Infinity Fabric): the "
    "slowest path",
}
SLOW = ("PHB", "NODE", "SYS")

# DLPerf's test bed (every DLPerf report prints it): 8x V100-SXM2-16GB, NV1/NV2 hybrid
# cube-mesh, one mlx5_0 that is PIX to GPU2/3, NODE to GPU0/1 and SYS to GPU4-7.
DLPERF_TOPOLOGY = """\
        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    mlx5_0  CPU Affinity
GPU0     X      NV1     NV1     NV2     NV2     SYS     SYS     SYS     NODE    0-11,24-35
GPU1    NV1      X      NV2     NV1     SYS     NV2     SYS     SYS     NODE    0-11,24-35
GPU2    NV1     NV2      X      NV2     SYS     SYS     NV1     SYS     PIX     0-11,24-35
GPU3    NV2     NV1     NV2      X      SYS     SYS     SYS     NV1     PIX     0-11,24-35
GPU4    NV2     SYS     SYS     SYS      X      NV1     NV1     NV2     SYS     12-23,36-47
GPU5    SYS     NV2     SYS     SYS     NV1      X      NV2     NV1     SYS     12-23,36-47
GPU6    SYS     SYS     NV1     SYS     NV1     NV2      X      NV2     SYS     12-23,36-47
GPU7    SYS     SYS     SYS     NV1     NV2     NV1     NV2      X      SYS     12-23,36-47
mlx5_0  NODE    NODE    PIX     PIX     SYS     SYS     SYS     SYS      X
"""


def kind(link: str) -> str:
    """`NV12` -> `NV`; `SOC` (old nvidia-smi) -> `SYS`."""
    if re.fullmatch(r"NV\d+", link):
        return "NV"
    return "SYS" if link == "SOC" else link


def rank(link: str) -> int:
    """Smaller is faster; more bonded NVLinks beat fewer."""
    k = kind(link)
    if k == "NV":
        return -int(link[2:])
    return RANK.get(k, 9)


def words(link: str) -> str:
    if kind(link) == "NV":
        n = link[2:]
        return LINK_WORDS["NV#"].replace("#", n, 1)
    return LINK_WORDS.get(kind(link), "an unknown link type")


@dataclass
class Finding:
    severity: str  # "ok", "note" or "slow"
    text: str
    devices: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"severity": self.severity, "text": self.text, "devices": list(self.devices)}


@dataclass
class Topology:
    gpus: list[str] = field(default_factory=list)
    nics: list[str] = field(default_factory=list)
    nic_names: dict[str, str] = field(default_factory=dict)  # NIC0 -> mlx5_2
    links: dict[tuple[str, str], str] = field(default_factory=dict)
    cpu_affinity: dict[str, str] = field(default_factory=dict)
    numa_affinity: dict[str, str] = field(default_factory=dict)

    def link(self, a: str, b: str) -> str:
        return "X" if a == b else self.links.get((a, b)) or self.links.get((b, a)) or "?"

    def nic_label(self, col: str) -> str:
        return self.nic_names.get(col, col)

    def link_types(self) -> list[str]:
        seen = {self.link(a, b) for a in self.gpus for b in [*self.gpus, *self.nics] if a != b}
        return sorted(seen, key=rank)

    def nvlink_groups(self) -> list[list[str]]:
        """GPUs connected to each other through NVLink, directly or via other GPUs."""
        groups: list[list[str]] = []
        for g in self.gpus:
            linked = [
                grp for grp in groups if any(kind(self.link(g, other)) == "NV" for other in grp)
            ]
            merged = [g] + [x for grp in linked for x in grp]
            groups = [grp for grp in groups if grp not in linked] + [merged]
        ordered = [sorted(grp, key=self.gpus.index) for grp in groups]
        return sorted(ordered, key=lambda grp: self.gpus.index(grp[0]))

    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        groups = self.nvlink_groups()
        if len(self.gpus) > 1 and len(groups) == 1:
            nv = sorted(
                {
                    self.link(a, b)
                    for a in self.gpus
                    for b in self.gpus
                    if a != b and kind(self.link(a, b)) == "NV"
                },
                key=rank,
            )
            out.append(
                Finding(
                    "ok",
                    f"All {len(self.gpus)} GPUs are joined by NVLink "
                    f"({', '.join(nv)}): intra-node collectives stay on NVLink.",
                    list(self.gpus),
                )
            )
        for i, ga in enumerate(groups):
            for gb in groups[i + 1 :]:
                best = min((self.link(a, b) for a in ga for b in gb), key=rank)
                who = f"{_names(ga)} and {_names(gb)}"
                if kind(best) in SLOW:
                    out.append(
                        Finding(
                            "slow",
                            f"{who} are linked only through {best} ({words(best)}). "
                            f"Collectives between them are limited by that path.",
                            [*ga, *gb],
                        )
                    )
                else:
                    out.append(
                        Finding(
                            "note",
                            f"{who} have no NVLink between them; they use PCIe "
                            f"({best}: {words(best)}).",
                            [*ga, *gb],
                        )
                    )
        out.extend(self._nic_findings())
        return out

    def nearest_nic(self, gpu: str) -> str:
        """The NIC column with the fastest path from `gpu`."""
        return min(self.nics, key=lambda nic: rank(self.link(gpu, nic)))

    def _nic_findings(self) -> list[Finding]:
        if not self.nics or not self.gpus:
            return []
        best = {g: self.nearest_nic(g) for g in self.gpus}
        by_link: dict[str, list[str]] = {}
        for g, n in best.items():
            by_link.setdefault(self.link(g, n), []).append(g)
        out = []
        if all(kind(lk) in ("NODE", "SYS", "PHB") for lk in by_link):
            out.append(
                Finding(
                    "slow",
                    "No GPU sits on the same PCIe switch as a NIC: GPUDirect "
                    "RDMA is not used and all inter-node traffic goes through "
                    "host memory.",
                    list(self.gpus),
                )
            )
        for lk, gpus in sorted(by_link.items(), key=lambda kv: rank(kv[0])):
            if kind(lk) == "SYS":
                nics = ", ".join(sorted({self.nic_label(best[g]) for g in gpus}))
                out.append(
                    Finding(
                        "note",
                        f"{_names(gpus)} reach the nearest NIC ({nics}) only "
                        f"through SYS ({words('SYS')}); their inter-node traffic "
                        f"crosses sockets and cannot use GPUDirect RDMA.",
                        gpus,
                    )
                )
        return out

    @property
    def slow(self) -> bool:
        return any(f.severity == "slow" for f in self.findings())

    def summary(self) -> str:
        if not self.gpus:
            return "no GPUs in the matrix"
        groups = self.nvlink_groups()
        if len(self.gpus) == 1:
            text = "1 GPU"
        elif len(groups) == 1:
            text = f"{len(self.gpus)} GPUs, all joined by NVLink"
        else:
            text = f"{len(self.gpus)} GPUs in {len(groups)} NVLink group(s); worst path " + max(
                (self.link(a, b) for a in self.gpus for b in self.gpus if a != b), key=rank
            )
        if self.nics:
            text += f"; {len(self.nics)} NIC(s): " + ", ".join(self.nic_label(n) for n in self.nics)
        return text

    def to_json(self) -> dict[str, Any]:
        cols = [*self.gpus, *self.nics]
        return {
            "gpus": list(self.gpus),
            "nics": [{"column": n, "name": self.nic_label(n)} for n in self.nics],
            "matrix": {a: {b: self.link(a, b) for b in cols if b != a} for a in self.gpus},
            "cpu_affinity": dict(self.cpu_affinity),
            "numa_affinity": dict(self.numa_affinity),
            "summary": self.summary(),
            "findings": [f.to_json() for f in self.findings()],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Topology:
        nics = [n["column"] for n in data.get("nics", [])]
        topo = cls(
            list(data.get("gpus", [])),
            nics,
            {n["column"]: n["name"] for n in data.get("nics", []) if n["name"] != n["column"]},
        )
        for a, row in (data.get("matrix") or {}).items():
            for b, lk in row.items():
                topo.links[(a, b)] = lk
        topo.cpu_affinity = dict(data.get("cpu_affinity") or {})
        topo.numa_affinity = dict(data.get("numa_affinity") or {})
        return topo


def _names(devs: list[str]) -> str:
    return devs[0] if len(devs) == 1 else ", ".join(devs[:-1]) + " and " + devs[-1]


# colour codes whose ESC a copy and paste lost (`[4mGPU0`); complete escape sequences of
# every kind (OSC, DCS, ...) go first, through `kb.util.textsafe.strip_escapes`
_ANSI = re.compile(r"\x1b?\[[0-9;]*m")
_LINK = re.compile(r"^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC|NA|N/A)$")


def parse(text: str) -> Topology:
    """A `Topology` from `nvidia-smi topo -m` output; empty `gpus` when there is no matrix."""
    lines = [_ANSI.sub("", strip_escapes(ln)).replace("|", " ") for ln in text.splitlines()]
    cols: list[str] = []
    topo = Topology()
    for line in lines:
        tokens = line.split()
        if not cols:
            if tokens and tokens[0] == "GPU0" and "X" not in tokens:
                cols = tokens[: tokens.index("CPU")] if "CPU" in tokens else tokens
            continue
        if not tokens or tokens[0] not in cols:
            legend = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", line)
            if legend:
                topo.nic_names[legend[1]] = legend[2]
            continue
        me = tokens[0]
        cells = tokens[1 : 1 + len(cols)]
        if len(cells) < len(cols) or not all(_LINK.match(c) for c in cells):
            continue
        for col, cell in zip(cols, cells, strict=True):
            if col != me:
                topo.links[(me, col)] = "SYS" if cell == "SOC" else cell
        rest = tokens[1 + len(cols) :]
        if me.startswith("GPU") and rest:
            if re.fullmatch(r"[\d,\-]+|N/A", rest[0]):
                topo.cpu_affinity[me] = rest[0]
            if len(rest) > 1:
                topo.numa_affinity[me] = rest[1]
    rows = {a for a, _ in topo.links}
    topo.gpus = [c for c in cols if c.startswith("GPU") and c in rows]
    topo.nics = [c for c in cols if not c.startswith("GPU")]
    return topo


def reference() -> Topology:
    """DLPerf's test-bed topology, to hold a user's node against."""
    return parse(DLPERF_TOPOLOGY)


def differences(a: Topology, b: Topology) -> list[tuple[str, str, str, str]]:
    """GPU pairs whose link type differs: (gpu, gpu, link in a, link in b)."""
    out = []
    for i, x in enumerate(a.gpus):
        for y in a.gpus[i + 1 :]:
            if x in b.gpus and y in b.gpus and a.link(x, y) != b.link(x, y):
                out.append((x, y, a.link(x, y), b.link(x, y)))
    return out


def matrix_rows(topo: Topology) -> tuple[list[str], list[list[str]]]:
    """Plain header and rows (for a table widget): GPUs and NICs as columns, GPUs as rows."""
    cols = [*topo.gpus, *topo.nics]
    header = ["", *(topo.nic_label(c) for c in cols), "CPU affinity"]
    rows = [[g, *(topo.link(g, c) for c in cols), topo.cpu_affinity.get(g, "")] for g in topo.gpus]
    return header, rows


def to_markdown(topo: Topology) -> str:
    """The matrix, what each link type means, and the findings, as Markdown."""
    header, rows = matrix_rows(topo)
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    out += ["", "Link types in this matrix:", ""]
    out += [f"- `{lk}`: {words(lk)}" for lk in topo.link_types() if lk != "?"]
    out += ["", "Findings:", ""] + [f"- **{f.severity}**: {f.text}" for f in topo.findings()]
    return "\n".join(out) + "\n"
