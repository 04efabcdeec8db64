"""The loaded knowledge base: every valid node by id, with where each came from."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kb.rules.schema.models import Cause, Check, Fix, Symptom
from kb.rules.vocabulary import Vocabulary
from kb.util.yamlsrc import Located


@dataclass(frozen=True)
class Issue:
    """One lint finding, reported as `file:line: message (hint)`."""

    file: str
    line: int
    rule: str
    check: str
    message: str
    hint: str = ""
    severity: str = "error"  # or "warning"

    def __str__(self) -> str:
        """One line, whatever the rule file held (a key with a newline, a control char)."""
        from kb.util.textsafe import safe_line

        hint = f" (hint: {safe_line(self.hint)})" if self.hint else ""
        level = "" if self.severity == "error" else f"{self.severity}: "
        return f"{self.file}:{self.line}: {level}{safe_line(self.message)}{hint}"

    def as_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "rule": self.rule,
            "check": self.check,
            "message": self.message,
            "hint": self.hint,
            "severity": self.severity,
        }


@dataclass
class Source:
    """Where a node was defined."""

    path: Path
    display: str  # the path as shown to users, relative to the rules directory's parent
    kind: str
    area: str
    located: Located

    def line(self, *loc: object) -> int:
        return self.located.line_of(tuple(loc))


@dataclass
class KnowledgeBase:
    causes: dict[str, Cause] = field(default_factory=dict)
    symptoms: dict[str, Symptom] = field(default_factory=dict)
    fixes: dict[str, Fix] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    root: Path | None = None
    vocabulary: Vocabulary = field(default_factory=Vocabulary)

    @property
    def checks(self) -> dict[str, tuple[str, Check]]:
        """Every inline check by id, with the id of the cause that defines it."""
        out: dict[str, tuple[str, Check]] = {}
        for cause in self.causes.values():
            for chk in cause.checks:
                if isinstance(chk, Check):
                    out.setdefault(chk.id, (cause.id, chk))
        return out

    def checks_of(self, cause_id: str) -> Iterator[Check]:
        """A cause's checks, its own and those it borrows by id."""
        table = self.checks
        for chk in self.causes[cause_id].checks:
            if isinstance(chk, Check):
                yield chk
            elif chk in table:
                yield table[chk][1]

    def causes_of(self, symptom_id: str) -> list[Cause]:
        """The causes that list the symptom, and those a failure symptom names."""
        symptom = self.symptoms.get(symptom_id)
        named = set(symptom.failure.causes) if symptom and symptom.failure else set()
        return [c for c in self.causes.values() if symptom_id in c.symptoms or c.id in named]

    def causes_named_by(self, finding: str) -> list[str]:
        """The ids of the causes whose `named_by` lists the finding (in load order)."""
        return [c.id for c in self.causes.values() if finding in c.named_by]

    def symptoms_named_by(self, finding: str) -> list[str]:
        """The ids of the symptoms whose `named_by` lists the finding."""
        return [s.id for s in self.symptoms.values() if finding in s.named_by]

    def area_of(self, node_id: str) -> str:
        src = self.sources.get(node_id)
        return src.area if src else ""
