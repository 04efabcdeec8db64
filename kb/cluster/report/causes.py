"""Causes in the shape of `diagnose --json`, named by the rules and never by this code.

The report's rules and the speedup verdict emit *findings* (`kb.cluster.findings`,
defined in `rules/vocabulary/findings.yaml`); each cause whose YAML lists a finding
under `named_by` gets its evidence, and its title and fixes come from its YAML too.
With no rules loaded a finding names nothing, and a cause that data names (a failed
check's `cause`) is titled by its id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kb.cluster.findings import Finding
from kb.rules.knowledge import KnowledgeBase


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
        except Exception:  # the rules are optional here: findings then name no cause
            kb = None
        return cls(kb)

    def named_by(self, finding: Finding) -> list[str]:
        """The ids of the causes whose YAML lists `finding` under `named_by`."""
        return self.kb.causes_named_by(finding.value) if self.kb else []

    def symptom_of(self, finding: Finding) -> str | None:
        """The symptom whose YAML lists `finding` under `named_by` (the first, if several)."""
        named = self.kb.symptoms_named_by(finding.value) if self.kb else []
        return named[0] if named else None

    def title(self, cause_id: str) -> str:
        if self.kb and cause_id in self.kb.causes:
            from kb.rules.schema.models import text_of

            return str(text_of(self.kb.causes[cause_id].title))
        return cause_id

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

    def found(
        self,
        finding: Finding,
        confidence: float,
        ev: list[dict[str, Any]],
        params: dict[str, str] | None = None,
    ) -> list[str]:
        """Record a finding for every cause it names; returns their ids."""
        named = self.named_by(finding)
        for cause_id in named:
            self.add(cause_id, confidence, ev, params)
        return named

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
