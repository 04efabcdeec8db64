"""Applying catalogue/classify.yaml: per-message overrides first, then the ordered rules
(the first whose regexes all match wins). A message no rule classifies is an error: the
table must be extended, never the message left unknown."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MATCH_KEYS = ("library", "level", "file", "template", "topic")
RESULT_KEYS = ("class", "cause", "variant", "symptom")


@dataclass(frozen=True)
class Rule:
    where: dict[str, re.Pattern[str]]
    result: dict[str, str]
    index: int

    def fits(self, fields: dict[str, str]) -> bool:
        return all(rx.search(fields.get(k, "")) for k, rx in self.where.items())


class Table:
    def __init__(self, path: Path) -> None:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        self.overrides: dict[tuple[str, str], dict[str, str]] = {}
        for o in data.get("overrides") or []:
            self.overrides[(o["library"], o["template"])] = _result(o)
        self.rules = []
        for i, r in enumerate(data.get("rules") or []):
            where = {k: re.compile(str(r[k])) for k in MATCH_KEYS if k in r}
            if not where:
                raise ValueError(f"{path}: rule {i} matches nothing")
            self.rules.append(Rule(where, _result(r), i))
        self.used: set[int] = set()

    def classify(
        self, library: str, level: str, file: str, template: str, topic: str = ""
    ) -> dict[str, str]:
        got = self.overrides.get((library, template))
        if got is not None:
            return got
        fields = {
            "library": library, "level": level, "file": file, "template": template, "topic": topic
        }  # fmt: skip
        for rule in self.rules:
            if rule.fits(fields):
                self.used.add(rule.index)
                return rule.result
        raise LookupError(f"no classification for {library} {level} {file}: {template!r}")


def _result(entry: dict[str, Any]) -> dict[str, str]:
    out = {k: str(entry[k]) for k in RESULT_KEYS if entry.get(k)}
    if out.get("class") not in ("cause", "symptom", "benign"):
        raise ValueError(f"classification needs class cause|symptom|benign: {entry}")
    if out["class"] == "cause" and not out.get("cause"):
        raise ValueError(f"class cause needs a cause id: {entry}")
    if out["class"] == "symptom" and not out.get("symptom"):
        raise ValueError(f"class symptom needs a symptom word: {entry}")
    return out
