"""The speedup verdict: each point against DLPerf's, where the loss starts, and why.

A point is `low` when its single-GPU throughput or its scaling efficiency is below
0.9 x DLPerf's.  The first losing stage is a finding (`kb.cluster.findings`) that
names, through the rules' `named_by`, the symptom of the decision tree; its suspects
are findings too, whose causes the rules name; where DLPerf's own efficiency was
poor, `reference_note` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from kb.cluster.findings import Finding
from kb.cluster.report.causes import CauseBook, evidence
from kb.cluster.speedup.logs import Point
from kb.cluster.speedup.reference import Config, Ref
from kb.util.errors import UserError

THRESHOLD = 0.9
NOT_PUBLISHED = "not published"  # a point's verdict when DLPerf has no figure for its shape
POOR_REFERENCE = 0.7
MORE_FROM_RULES = 3  # causes the rules link to the symptom, beyond the stage's own suspects
REFERENCE_HARDWARE = "8x V100-SXM2-16GB per node, 100 Gb/s InfiniBand (DLPerf's test bed)"
STAGES = {  # where the loss starts -> the finding whose symptom the rules name
    "single-gpu": Finding.LOW_SINGLE_GPU,
    "intra-node": Finding.LOW_SINGLE_NODE,
    "inter-node": Finding.LOW_MULTI_NODE,
}
SUSPECTS = {  # per stage: findings naming the causes to look at first, and how likely
    # each of their causes is without other evidence
    "single-gpu": [
        (Finding.LOW_SINGLE_GPU_STRONG, 0.5),
        (Finding.LOW_SINGLE_GPU_LIKELY, 0.45),
        (Finding.LOW_SINGLE_GPU_POSSIBLE, 0.4),
    ],
    "intra-node": [
        (Finding.LOW_SINGLE_NODE_STRONG, 0.5),
        (Finding.LOW_SINGLE_NODE_LIKELY, 0.45),
        (Finding.LOW_SINGLE_NODE_POSSIBLE, 0.4),
        (Finding.LOW_SINGLE_NODE_WEAK, 0.35),
    ],
    "inter-node": [
        (Finding.LOW_MULTI_NODE_PRIME, 0.6),
        (Finding.LOW_MULTI_NODE_LIKELY, 0.45),
        (Finding.LOW_MULTI_NODE_POSSIBLE, 0.4),
        (Finding.LOW_MULTI_NODE_WEAK, 0.35),
    ],
}
KNOWN_POOR = (  # (framework contains, model contains, precision starts) -> what DLPerf found
    (
        "paddle",
        "",
        "amp",
        "DLPerf could not reconcile Paddle's mixed-precision multi-node "
        "speedup with Paddle's official figures (no official container; input pipeline suspected, "
        "Oneflow-Inc/DLPerf#54, #78)",
    ),
    ("tensorflow2", "", "amp", "TensorFlow 2.3 with AMP scaled poorly in DLPerf's runs as well"),
    ("gluoncv", "", "amp", "gluon-cv with AMP scaled poorly in DLPerf's runs as well"),
    (
        "insightface",
        "mobilefacenet",
        "",
        "the MobileFaceNet backbone barely scales: its huge FC "
        "layer makes it I/O bound, which is not a network fault",
    ),
    (
        "pytorch1.6.0-examples",
        "",
        "fp32+dataloader_workers8",
        "8 DataLoader workers starve the GPUs (3.49x at 1x8); DLPerf reached 7.55x with 48 workers",
    ),
)


def _r(x: float, places: str = "0.01") -> float:
    return float(Decimal(repr(x)).quantize(Decimal(places), rounding=ROUND_HALF_UP))


@dataclass
class Verdict:
    config: Config
    points: list[dict[str, Any]] = field(default_factory=list)
    where: str | None = None
    reference_note: str | None = None
    causes: list[dict[str, Any]] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)

    @property
    def low(self) -> bool:
        return any(p["verdict"] == "low" for p in self.points)

    def to_json(self) -> dict[str, Any]:
        c = self.config
        return {
            "reference": {
                "framework": c.framework,
                "model": c.model,
                "precision": c.precision,
                "batch_per_gpu": c.batch,
            },
            "points": self.points,
            "where": self.where,
            "reference_note": self.reference_note,
            "causes": self.causes,
        }


def judge(config: Config, points: list[Point], book: CauseBook | None = None) -> Verdict:
    """Every point against DLPerf's figure for the same shape."""
    ref = config.rows()
    seen: set[tuple[int, int]] = set()
    for p in points:
        if (p.nodes, p.gpus) in seen:
            raise UserError(f"{p.nodes}x{p.gpus} is given twice")
        seen.add((p.nodes, p.gpus))
    published = [f"{n}x{g}" for n, g in sorted(ref)]
    unpublished = [p for p in points if (p.nodes, p.gpus) not in ref]
    if len(unpublished) == len(points):  # nothing to judge: the run is refused
        p = unpublished[0]
        raise UserError(
            f"DLPerf did not publish {p.nodes}x{p.gpus} for {config.label()}; "
            f"published: {', '.join(published)}"
        )
    points = [p for p in points if (p.nodes, p.gpus) in ref]  # a shape not published is
    # reported as such, after the judged ones, and the rest is still judged
    base = next((p for p in points if (p.nodes, p.gpus) == (1, 1)), None)
    if base is None and any(p.nodes * p.gpus > 1 for p in points):
        raise UserError(
            "a speedup needs your single-GPU throughput too: add --throughput 1x1=VALUE"
        )
    v = Verdict(config)
    low_at: dict[str, list[tuple[Point, float, float]]] = {}
    for p in sorted(points, key=lambda p: (p.nodes * p.gpus, p.nodes)):
        r = ref[(p.nodes, p.gpus)]
        if (p.nodes, p.gpus) == (1, 1):
            ok = p.throughput >= THRESHOLD * r.throughput
            v.points.append(
                {
                    "nodes": 1,
                    "gpus_per_node": 1,
                    "throughput": p.throughput,
                    "reference_throughput": r.throughput,
                    "verdict": "ok" if ok else "low",
                }
            )
            if not ok:
                low_at.setdefault("single-gpu", []).append((p, p.throughput / r.throughput, 1.0))
            continue
        assert base is not None
        total = p.nodes * p.gpus
        speedup = p.throughput / base.throughput
        eff, ref_eff = speedup / total, r.speedup / total
        ok = eff >= THRESHOLD * ref_eff
        v.points.append(
            {
                "nodes": p.nodes,
                "gpus_per_node": p.gpus,
                "throughput": p.throughput,
                "speedup": _r(speedup),
                "efficiency": _r(eff),
                "reference_efficiency": _r(ref_eff),
                "verdict": "ok" if ok else "low",
            }
        )
        if ref_eff < POOR_REFERENCE and v.reference_note is None:
            v.reference_note = _poor_note(config, p, r, ref_eff)
        if not ok:
            low_at.setdefault("intra-node" if p.nodes == 1 else "inter-node", []).append(
                (p, eff, ref_eff)
            )
    for p in sorted(unpublished, key=lambda p: (p.nodes * p.gpus, p.nodes)):
        v.points.append(
            {
                "nodes": p.nodes,
                "gpus_per_node": p.gpus,
                "throughput": p.throughput,
                "verdict": NOT_PUBLISHED,
                "published": published,
            }
        )
    v.where = next((s for s in STAGES if s in low_at), None)
    if v.where:
        v.causes = _causes(config, v.where, low_at[v.where], book or CauseBook())
    v.explanation = _explain(v, low_at)
    return v


def _poor_note(config: Config, p: Point, r: Ref, ref_eff: float) -> str:
    why = next(
        (
            text
            for fw, mdl, prec, text in KNOWN_POOR
            if fw in config.framework and mdl in config.model and config.precision.startswith(prec)
        ),
        None,
    )
    note = (
        f"DLPerf's own {config.label()} reached only {ref_eff:.2f} scaling efficiency at "
        f"{p.nodes}x{p.gpus} ({r.speedup:g}x on {p.nodes * p.gpus} GPUs)"
    )
    return note + (f": {why}" if why else "") + "; a result near that is what this stack gives."


def _causes(
    config: Config, where: str, lows: list[tuple[Point, float, float]], book: CauseBook
) -> list[dict[str, Any]]:
    symptom = book.symptom_of(STAGES[where])
    ev = []
    for p, eff, ref_eff in lows:
        if where == "single-gpu":
            text = (
                f"1x1: {p.throughput:g} samples/s is {eff:.0%} of DLPerf's ({config.label()}, "
                f"{REFERENCE_HARDWARE})"
            )
        else:
            text = f"{p.nodes}x{p.gpus}: efficiency {eff:.2f} vs DLPerf {ref_eff:.2f} ({config.label()})"
        ev.append(evidence(p.file, p.line, text + (f" | {p.text}" if p.text else "")))
    params = {"symptom": symptom or "", "where": where}
    suspects = [
        cid for finding, conf in SUSPECTS[where] for cid in book.found(finding, conf, ev, params)
    ]
    extras = [
        cid
        for cid in (book.causes_of_symptom(symptom) if symptom else [])
        if cid not in suspects and _relevant(cid, config.framework)
    ]
    for cid in extras[:MORE_FROM_RULES]:
        book.add(cid, 0.35, ev, params)
    return book.ranked()


_FRAMEWORK_CAUSES = {
    "paddle": "paddle",
    "tf-": "tensorflow",
    "tfds": "tensorflow",
    "mxnet": "mxnet",
    "pytorch": "pytorch",
    "torch": "pytorch",
}


def _relevant(cause_id: str, framework: str) -> bool:
    """A framework-specific cause (`paddle-launch-mode`) only for that framework."""
    family = next((f for p, f in _FRAMEWORK_CAUSES.items() if cause_id.startswith(p)), None)
    return family is None or family in framework


def _explain(v: Verdict, low_at: dict[str, list[tuple[Point, float, float]]]) -> list[str]:
    if v.where is None:
        skipped = sum(1 for p in v.points if p["verdict"] == NOT_PUBLISHED)
        judged = "Every point DLPerf published" if skipped else "Every point"
        return [f"{judged} is within 10 % of DLPerf's result for the same configuration."]
    words = {
        "single-gpu": "One GPU is already slow: look at the GPU, the driver, the input "
        "pipeline and framework settings before the network (DLPerf ran on "
        + REFERENCE_HARDWARE
        + ").",
        "intra-node": "One node scales worse than DLPerf's: look at intra-node transport "
        "(NVLink/P2P, shared memory), GPU topology and the input pipeline.",
        "inter-node": "Each node is fine but adding nodes loses: look at the network "
        "(InfiniBand in use?, NCCL transport, the interface NCCL picked).",
    }
    return [words[v.where]] + [f"Also low at: {s}" for s in low_at if s != v.where]


def to_markdown(v: Verdict) -> str:
    """The verdict as a table plus where the loss is, for the runbook or the TUI."""
    out = [
        f"### Speedup against DLPerf: {v.config.label()}",
        "",
        "| point | throughput | speedup | efficiency | DLPerf | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for p in v.points:
        if p["verdict"] == NOT_PUBLISHED:
            out.append(
                f"| {p['nodes']}x{p['gpus_per_node']} | {p['throughput']:g} | - | - | - | "
                f"not published (DLPerf has {', '.join(p['published'])}) |"
            )
        elif "reference_throughput" in p:
            out.append(
                f"| 1x1 | {p['throughput']:g} | 1 | - | {p['reference_throughput']:g} samples/s | {p['verdict']} |"
            )
        else:
            out.append(
                f"| {p['nodes']}x{p['gpus_per_node']} | {p['throughput']:g} | {p['speedup']:g} | "
                f"{p['efficiency']:.2f} | {p['reference_efficiency']:.2f} | {p['verdict']} |"
            )
    out += ["", *v.explanation]
    if v.reference_note:
        out += ["", f"Note: {v.reference_note}"]
    if v.causes:
        out += ["", "Likely causes: " + ", ".join(f"`{c['id']}`" for c in v.causes)]
    return "\n".join(out) + "\n"
