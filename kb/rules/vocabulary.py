"""The words rules share with the engine: finding names and traits (`rules/vocabulary/`).

An analyzer (or the cluster report, or the speedup verdict) never writes a cause id: it
emits a *finding name* such as `gloo-loopback-peer`, and the rules that list that name
under `named_by` are the causes (or symptoms) it is evidence for. Where a cause can occur
(between nodes, in a container, when NCCL returns a system error ...) is a list of
*traits*, and how much each thing the logs show about the job weighs a trait is here too.
Every word a rule uses must be defined in a vocabulary file, so a misspelt one is a lint
error with its file and line instead of a finding that silently becomes a note.

Each `*.yaml` file under `rules/vocabulary/` may hold any of `findings`, `observations`,
`traits` and `frameworks` (the framework areas, their weights, and the `markers` that show a
framework in a log: RE2 patterns, checked here); a word defined twice is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import Field

from kb.rules.schema.models import ID_PATTERN, Strict
from kb.util import re2syntax
from kb.util.yamlsrc import Located

FOLDER = "vocabulary"
MARKER_LITERAL = 3  # the shortest literal text a framework marker must hold

Factor = Annotated[float, Field(gt=0, description="a factor on a cause's weight")]


class FindingWord(Strict):
    """A finding an engine module emits: what it means, and which module emits it."""

    meaning: str = Field(min_length=1)
    emitted_by: list[str] = Field(
        min_length=1, description="the modules that emit it, e.g. kb.diagnosis.analyzers.gloo"
    )


class ObservationWord(Strict):
    """Something the logs can show about the job (kb.diagnosis.candidates.JobContext)."""

    meaning: str = Field(min_length=1)
    otherwise: float | None = Field(
        None,
        gt=0,
        description="the factor for a cause none of whose traits weighs this observation "
        "(none: such a cause is not weighed by it)",
    )


class TraitWord(Strict):
    """Where a cause can occur, and how each observation weighs a cause with this trait."""

    meaning: str = Field(min_length=1)
    weights: dict[str, Factor] = Field(
        default_factory=dict,
        description="observation -> factor for a cause with this trait when the logs show it",
    )


class FrameworkWeights(Strict):
    """How a framework seen in the logs weighs the causes of framework areas."""

    areas: list[str] = Field(default_factory=list, description="rule folders that are frameworks")
    shown: float = Field(1.0, gt=0, description="factor when the logs show the cause's framework")
    not_shown: float = Field(
        1.0, gt=0, description="factor when they show frameworks, but not the cause's"
    )
    libraries: dict[str, str] = Field(
        default_factory=dict,
        description="message catalogue library -> the framework area its messages show",
    )
    markers: dict[str, list[str]] = Field(
        default_factory=dict,
        description="framework -> RE2 patterns: a log line matching one shows the framework "
        "(its paths, modules, launcher, log prefixes; kb.diagnosis.analyzers.setting)",
    )


class VocabularyFile(Strict):
    findings: dict[str, FindingWord] = Field(default_factory=dict)
    observations: dict[str, ObservationWord] = Field(default_factory=dict)
    traits: dict[str, TraitWord] = Field(default_factory=dict)
    frameworks: FrameworkWeights | None = None


@dataclass
class Vocabulary:
    """Every word of every vocabulary file, with the file and line it is defined on."""

    findings: dict[str, FindingWord] = field(default_factory=dict)
    observations: dict[str, ObservationWord] = field(default_factory=dict)
    traits: dict[str, TraitWord] = field(default_factory=dict)
    frameworks: FrameworkWeights = field(
        default_factory=lambda: FrameworkWeights.model_validate({})
    )
    where: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    marker_lines: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)

    def add(self, data: VocabularyFile, display: str, located: Located) -> list[tuple[int, str]]:
        """Merge one file's words; (line, message) for each word already defined."""
        problems: list[tuple[int, str]] = []
        for section in ("findings", "observations", "traits"):
            table = getattr(self, section)
            for word, value in getattr(data, section).items():
                line = located.line_of((section, word))
                if word in table:
                    first = self.where[(section, word)]
                    problems.append(
                        (
                            line,
                            f"{section[:-1]} '{word}' is already defined in {first[0]}:{first[1]}",
                        )
                    )
                    continue
                table[word] = value
                self.where[(section, word)] = (display, line)
        if data.frameworks is not None:
            if ("frameworks", "") in self.where:
                first = self.where[("frameworks", "")]
                problems.append(
                    (
                        located.line_of(("frameworks",)),
                        f"frameworks are already defined in {first[0]}:{first[1]}",
                    )
                )
            else:
                self.frameworks = data.frameworks
                self.where[("frameworks", "")] = (display, located.line_of(("frameworks",)))
                for area, patterns in data.frameworks.markers.items():
                    for i in range(len(patterns)):
                        loc = ("frameworks", "markers", area, i)
                        self.marker_lines[(area, i)] = (display, located.line_of(loc))
        return problems

    def bad_words(self) -> list[tuple[str, int, str]]:
        """(file, line, message) for each malformed word or unknown observation."""
        out: list[tuple[str, int, str]] = []
        for (section, word), (display, line) in sorted(self.where.items()):
            if section != "frameworks" and not re.match(ID_PATTERN, word):
                out.append(
                    (
                        display,
                        line,
                        f"{section[:-1]} '{word}' is not lower-case words joined by '-'",
                    )
                )
        for trait, spec in self.traits.items():
            for obs in spec.weights:
                if obs not in self.observations:
                    display, line = self.where[("traits", trait)]
                    out.append(
                        (display, line, f"trait '{trait}' weighs unknown observation '{obs}'")
                    )
        out.extend(self._bad_markers())
        return out

    def _bad_markers(self) -> list[tuple[str, int, str]]:
        """A framework marker must name a framework area and be an RE2 pattern with some
        literal text (the scanner finds candidate lines by it: one without makes most lines
        of a log candidates)."""
        out: list[tuple[str, int, str]] = []
        areas = set(self.frameworks.areas)
        for area, patterns in self.frameworks.markers.items():
            for i, pattern in enumerate(patterns):
                display, line = self.marker_lines.get((area, i), ("", 0))
                if area not in areas:
                    out.append((display, line, f"marker of '{area}', which is not in areas"))
                    break
                problem = re2syntax.check(pattern)
                literal = re2syntax.required_literal(pattern)  # None: RE2-only syntax
                if problem is not None:
                    out.append((display, line, f"marker `{pattern}`: {problem.message}"))
                elif literal is not None and literal < MARKER_LITERAL:
                    out.append(
                        (
                            display,
                            line,
                            f"marker `{pattern}` holds no literal text of {MARKER_LITERAL} "
                            "characters every match contains (it would make most lines "
                            "candidates)",
                        )
                    )
        return out


def is_vocabulary_file(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return len(parts) > 1 and parts[0] == FOLDER


def parse(located: Located) -> VocabularyFile:
    """Validate one file's data (raises pydantic's ValidationError)."""
    return VocabularyFile.model_validate(located.data)


__all__ = [
    "FOLDER",
    "FindingWord",
    "FrameworkWeights",
    "ObservationWord",
    "TraitWord",
    "Vocabulary",
    "VocabularyFile",
    "is_vocabulary_file",
    "parse",
]
