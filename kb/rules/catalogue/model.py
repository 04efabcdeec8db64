"""One catalogued message and the catalogue of them all, as plain frozen data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

CLASSES = ("cause", "symptom", "benign")
LEVELS = ("warn", "error", "info", "fatal", "help")


@dataclass(frozen=True, slots=True)
class Message:
    """A message a library can print: its template, where and when it is printed, what it
    means (`class_`: cause, symptom or benign; `class` is a Python keyword), and the
    matcher compiled from the template (`pattern`; `literal` is its prefilter text;
    `usable` is False when the template has too little literal text to match on)."""

    library: str
    template: str
    level: str
    file: str
    versions: str
    class_: str
    cause: str = ""
    variant: str = ""
    symptom: str = ""
    topic: str = ""  # show_help: the [topic] of the help file
    pattern: str = ""
    literal: str = ""
    usable: bool = True
    line: int = 0  # line of the entry in catalogue/<library>.yaml (for lint)

    @property
    def label(self) -> str:
        """`cause/<id>`, `symptom/<word>` or `benign`."""
        if self.class_ == "cause":
            return f"cause/{self.cause}"
        if self.class_ == "symptom":
            return f"symptom/{self.symptom}"
        return self.class_

    def to_json(self) -> dict[str, Any]:
        out = {f: getattr(self, f) for f in FIELDS}
        return {k: v for k, v in out.items() if v not in ("", 0) or k == "usable"}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        return cls(**data)


FIELDS = tuple(f.name for f in fields(Message))  # the order of a cached row


@dataclass(frozen=True)
class Library:
    """A catalogue file's header: what was scanned."""

    name: str
    source: str
    versions: str
    path: str = ""


@dataclass(frozen=True)
class Vocabulary:
    """catalogue/symptoms.yaml: the words a `symptom` entry may use."""

    words: Mapping[str, str] = field(default_factory=dict)  # word -> what it means
