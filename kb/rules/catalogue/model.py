"""One catalogued message and the catalogue of them all, as plain frozen data.

Records (`kb.util.record`), not `@dataclass`: a pasted log's diagnosis makes the few
messages its lines match, and `dataclasses` alone would cost it more than they do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kb.util.record import record

CLASSES = ("cause", "symptom", "benign")
LEVELS = ("warn", "error", "info", "fatal", "help")


@record(hashable=True)  # frozen: never changed after __init__
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

    def __init__(
        self,
        library: str,
        template: str,
        level: str,
        file: str,
        versions: str,
        class_: str,
        cause: str = "",
        variant: str = "",
        symptom: str = "",
        topic: str = "",
        pattern: str = "",
        literal: str = "",
        usable: bool = True,
        line: int = 0,
    ) -> None:
        self.library = library
        self.template = template
        self.level = level
        self.file = file
        self.versions = versions
        self.class_ = class_
        self.cause = cause
        self.variant = variant
        self.symptom = symptom
        self.topic = topic
        self.pattern = pattern
        self.literal = literal
        self.usable = usable
        self.line = line

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


FIELDS = (  # the order of a cached row: Message's fields
    "library", "template", "level", "file", "versions", "class_", "cause", "variant",
    "symptom", "topic", "pattern", "literal", "usable", "line",
)  # fmt: skip


@record(hashable=True)
class Library:
    """A catalogue file's header: what was scanned."""

    name: str
    source: str
    versions: str
    path: str = ""

    def __init__(self, name: str, source: str, versions: str, path: str = "") -> None:
        self.name = name
        self.source = source
        self.versions = versions
        self.path = path


@record()
class Vocabulary:
    """catalogue/symptoms.yaml: the words a `symptom` entry may use."""

    words: Mapping[str, str]  # word -> what it means

    def __init__(self, words: Mapping[str, str] | None = None) -> None:
        self.words = {} if words is None else words
