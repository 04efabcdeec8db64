"""Causes in the shape of `diagnose --json`, with titles and fixes from the knowledge base.

The report and the speedup verdict name causes from `knowledge/cause-ids.md`; when
the shipped rules define a cause, its title and fix ids come from there, else from
the short titles below, so these commands work even while the rule set grows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kb.rules.knowledge import KnowledgeBase

FALLBACK_TITLES = {
    "nccl-wrong-interface": "NCCL uses a virtual or unreachable network interface",
    "nccl-missing-or-mismatch": "NCCL missing, or different NCCL versions on different nodes",
    "nccl-shm-too-small": "/dev/shm too small for NCCL's shared-memory transport",
    "nccl-p2p-failure": "GPU peer-to-peer disabled or failing",
    "nccl-ib-missing": "InfiniBand not usable: NCCL falls back to sockets",
    "nccl-ib-fabric-error": "RDMA fails on the IB/RoCE fabric",
    "memlock-limit": "Locked-memory limit too low for RDMA",
    "duplicate-hostname": "Two nodes share a hostname",
    "gpu-rank-mapping": "Ranks not mapped one per GPU",
    "mpi-launch-failure": "mpirun cannot start ranks on every node",
    "horovod-built-without-nccl": "Horovod built without NCCL GPU operations",
    "cuda-driver-too-old": "NVIDIA driver older than the CUDA runtime needs",
    "cuda-lib-missing": "A CUDA library cannot be loaded",
    "code-version-mismatch": "Framework or model code versions differ",
    "gpu-topology-slow": "GPUs or NICs linked through slow PCIe/CPU paths",
    "input-pipeline-bottleneck": "Data loading starves the GPUs",
    "framework-env-tuning": "Framework performance settings missing or harmful",
    "benchmark-misconfig": "The measurement itself is wrong",
    "nccl-timeout-hang": "A collective times out or hangs",
}


def evidence(file: str, line: int, text: str) -> dict[str, Any]:
    return {"file": file, "line": int(line), "text": text[:500]}


@dataclass
class CauseBook:
    """Builds cause entries; `kb` may be None (no rules loaded)."""

    kb: KnowledgeBase | None = None
    _found: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def shipped(cls) -> CauseBook:
        """Titles and fixes from the shipped rules, tolerating a rule set with errors."""
        try:
            from kb.rules import loader
            from kb.util import paths

            kb, _issues = loader.load(paths.rules_dir())
        except Exception:  # the rules are optional here: fall back to built-in titles
            kb = None
        return cls(kb)

    def title(self, cause_id: str) -> str:
        if self.kb and cause_id in self.kb.causes:
            from kb.rules.schema.models import text_of

            return str(text_of(self.kb.causes[cause_id].title))
        return FALLBACK_TITLES.get(cause_id, cause_id)

    def fixes(self, cause_id: str) -> list[str]:
        if self.kb and cause_id in self.kb.causes:
            return list(self.kb.causes[cause_id].fixes)
        return []

    def causes_of_symptom(self, symptom_id: str) -> list[str]:
        """Causes the rules link to a symptom, most likely (highest prior) first."""
        if not self.kb:
            return []
        hits = [c for c in self.kb.causes.values() if symptom_id in c.symptoms]
        return [c.id for c in sorted(hits, key=lambda c: -c.prior)]

    def add(
        self,
        cause_id: str,
        confidence: float,
        ev: list[dict[str, Any]],
        params: dict[str, str] | None = None,
    ) -> None:
        """Record a cause; a second finding of the same cause strengthens the first."""
        cur = self._found.get(cause_id)
        if cur is None:
            self._found[cause_id] = {
                "id": cause_id,
                "title": self.title(cause_id),
                "confidence": round(confidence, 3),
                "evidence": list(ev),
                "params": dict(params or {}),
                "fixes": self.fixes(cause_id),
            }
            return
        cur["confidence"] = round(1 - (1 - cur["confidence"]) * (1 - confidence), 3)
        cur["evidence"].extend(e for e in ev if e not in cur["evidence"])
        for k, v in (params or {}).items():
            cur["params"].setdefault(k, v)

    def ranked(self) -> list[dict[str, Any]]:
        return sorted(self._found.values(), key=lambda c: -c["confidence"])
