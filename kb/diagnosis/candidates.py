"""When the logs show a failure but no line names its cause: the symptom's probable causes.

A bare `RuntimeError: NCCL error ..., unhandled system error` proves that NCCL failed
(the symptom `nccl-init-fails`) without saying why. Answering "no known problem" would
be wrong, so the causes of each symptom the logs show are ranked by how probable they
are *here*: each cause's prior (or, when some of its signatures fired without making it
likely, the confidence they give it), times what the logs tell about the job:

| the logs show | more probable (x2 to x2.5) | less probable |
|---|---|---|
| a container (172.17.x.x, /workspace, docker, nvcr.io, ...) | causes of container setups | |
| several nodes | causes between nodes | causes within a node (x0.6) |
| one node | causes within a node | causes between nodes (x0.15) |
| InfiniBand in use / absent | IB causes / "no IB" causes | the other (x0.2 to x0.5) |
| NCCL's error kind (system, cuda, internal, ...) | causes that return that kind | others (x0.6) |
| a framework (TensorFlow, Paddle, ...) | that framework's causes | other frameworks' (x0.2) |

A failure symptom (`failure:` in rules/symptoms, `kb.diagnosis.failure`) also names
causes of its own (`failure.causes`: the OOM killer behind a rank killed by signal 9),
weighed alike. The shares of these weights are the candidates' confidences, capped at
`SYMPTOM_MAX`
(below the "likely" threshold): the first `TOP` are reported, marked `basis: symptom`,
with the symptom's lines as evidence and its cheapest question as the next step. The
traits below are the field notes' knowledge of where each cause can occur; a cause not
listed is only weighed by its prior (and its framework).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kb.diagnosis.compiled import CompiledRules
from kb.diagnosis.model import BASIS_SYMPTOM, CauseResult, Evidence

SYMPTOM_MAX = 0.45
TOP = 3
MIN_SHARE = 0.1
SEVERAL_SYMPTOMS = 0.5  # extra weight per further observed symptom a cause explains

_T = frozenset
TRAITS: dict[str, frozenset[str]] = {
    "nccl-wrong-interface": _T({"inter-node", "err-system", "err-remote", "err-internal"}),
    "docker-network-mode": _T({"inter-node", "container", "err-system", "err-remote"}),
    "duplicate-hostname": _T({"inter-node", "err-cuda", "err-system", "err-invalid-usage"}),
    "nccl-ib-fabric-error": _T({"inter-node", "ib", "err-remote", "err-system", "err-internal"}),
    "nccl-ib-missing": _T({"inter-node", "no-ib", "container", "err-internal"}),
    "nccl-gdr-disabled": _T({"inter-node", "ib"}),
    "memlock-limit": _T({"ib", "container", "err-system"}),
    "nccl-shm-too-small": _T({"intra-node", "container", "err-system"}),
    "nccl-p2p-failure": _T({"intra-node", "err-cuda"}),
    "gpu-rank-mapping": _T({"intra-node", "err-cuda", "err-invalid-usage"}),
    "nccl-nvls-fabric": _T({"intra-node", "err-cuda", "err-invalid-argument"}),
    "nccl-missing-or-mismatch": _T({"err-internal", "err-invalid-usage", "err-invalid-argument"}),
    "port-in-use": _T({"err-system"}),
    "ssh-passwordless-missing": _T({"inter-node"}),
    "ssh-port-unreachable": _T({"inter-node", "container"}),
    "tf-distribution-strategy": _T({"inter-node"}),
    "cuda-driver-too-old": _T({"err-cuda"}),
}
FRAMEWORK_AREAS = {"tensorflow", "pytorch", "paddle", "mxnet", "horovod"}


@dataclass
class JobContext:
    """What the logs tell about where the job runs, with the reasons."""

    container: list[str] = field(default_factory=list)
    multi_node: list[str] = field(default_factory=list)
    single_node: list[str] = field(default_factory=list)
    ib_present: list[str] = field(default_factory=list)
    ib_absent: list[str] = field(default_factory=list)
    nccl_error: str = ""
    frameworks: set[str] = field(default_factory=set)

    @classmethod
    def from_facts(cls, facts: dict[str, Any]) -> JobContext:
        multi, single = list(facts.get("multi_node", [])), list(facts.get("single_node", []))
        if multi and single:  # the logs disagree (several jobs): trust neither
            multi, single = [], []
        present, absent = list(facts.get("ib_present", [])), list(facts.get("ib_absent", []))
        if present and absent:
            present, absent = [], []
        return cls(
            container=list(facts.get("container", [])),
            multi_node=multi,
            single_node=single,
            ib_present=present,
            ib_absent=absent,
            nccl_error=str(facts.get("nccl_error", "")),
            frameworks=set(facts.get("frameworks", set())),
        )

    def factors(self, cause_id: str, area: str) -> list[tuple[float, str]]:
        """(factor, why) for each thing in the context that makes the cause more or
        less probable."""
        traits = TRAITS.get(cause_id, frozenset())
        out: list[tuple[float, str]] = []

        # (what the logs show, said as, first trait: its factor, else second trait: its factor)
        rows = [
            (self.container, "in a container", "container", 2.5, "", 1.0),
            (self.multi_node, "several nodes", "inter-node", 2.0, "intra-node", 0.6),
            (self.single_node, "one node", "intra-node", 2.0, "inter-node", 0.15),
            (self.ib_present, "InfiniBand in use", "ib", 2.0, "no-ib", 0.5),
            (self.ib_absent, "no InfiniBand", "ib", 0.2, "no-ib", 2.0),
        ]
        for reasons, said, first, by_first, second, by_second in rows:
            if reasons and (first in traits or second in traits):
                factor = by_first if first in traits else by_second
                out.append((factor, f"{said} ({reasons[0]})"))
        if self.nccl_error:
            match = f"err-{self.nccl_error}" in traits
            out.append((2.5 if match else 0.6, f"NCCL returned a {self.nccl_error} error"))
        if area in FRAMEWORK_AREAS and self.frameworks:
            seen = area in self.frameworks
            out.append((2.0 if seen else 0.2, f"the logs {'' if seen else 'do not '}show {area}"))
        return out


def symptom_candidates(
    rules: CompiledRules,
    shown: dict[str, list[Evidence]],
    partial: dict[str, tuple[float, list[Evidence], dict[str, str]]],
    facts: dict[str, Any],
) -> list[CauseResult]:
    """The most probable causes of the failure symptoms `shown` (id -> their lines),
    as symptom-level candidates (confidence below the "likely" threshold).

    `partial` holds, for causes some of whose signatures fired without making them
    likely, (their confidence, evidence, values)."""
    ctx = JobContext.from_facts(facts)
    named: dict[str, list[str]] = {}  # cause -> the failure symptoms shown that name it
    for sid in shown:
        spec = getattr(rules.symptoms.get(sid), "failure", None) or {}
        for cid in spec.get("causes", []):
            named.setdefault(cid, []).append(sid)
    scored: list[tuple[float, str, str, str]] = []  # (weight, cause, symptom, why)
    for cid, cause in rules.causes.items():
        explains = [s for s in cause.symptoms if s in shown]
        explains += [s for s in named.get(cid, []) if s not in explains]
        if cause.generic or not explains:
            continue
        base, basis = (
            (partial[cid][0], "its own weak evidence")
            if cid in partial
            else (
                cause.prior,
                "prior",
            )
        )
        weight = base * (1.0 + SEVERAL_SYMPTOMS * (len(explains) - 1))
        parts = [f"{basis} {base:.2f}"]
        if len(explains) > 1:
            parts.append(f"explains {len(explains)} of the symptoms shown")
        for factor, reason in ctx.factors(cid, cause.area):
            weight *= factor
            parts.append(f"{reason}: x{factor:g}")
        scored.append((weight, cid, explains[0], "; ".join(parts)))
    total = sum(w for w, *_ in scored)
    if total <= 0:
        return []
    scored.sort(key=lambda t: (-t[0], t[1]))
    out: list[CauseResult] = []
    for weight, cid, sid, why in scored[:TOP]:
        share = weight / total
        if out and share < MIN_SHARE:
            break
        cause = rules.causes[cid]
        own = partial.get(cid, (0.0, [], {}))
        lines = {(e.file, e.line) for e in shown[sid][:3]}
        evidence = list(shown[sid][:3]) + [e for e in own[1] if (e.file, e.line) not in lines][:3]
        confidence = min(SYMPTOM_MAX, share)
        explanation = (
            f"only the symptom '{sid}' is visible; {why} -> {share:.0%} of the weight of "
            f"its causes (capped at {SYMPTOM_MAX})"
        )
        out.append(
            CauseResult(
                cid,
                cause.title,
                confidence,
                evidence,
                dict(own[2]),
                list(cause.fixes),
                explanation,
                basis=BASIS_SYMPTOM,
                symptom=sid,
            )
        )
    return out
