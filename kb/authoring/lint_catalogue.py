"""Lint's check of the message catalogue beside the rules (catalogue/ next to rules/, or
kb/_catalogue next to kb/_rules in a wheel): every cause id it names is a cause of the
rules, every symptom word is in catalogue/symptoms.yaml, every template compiles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kb.rules.catalogue.model import Message
from kb.rules.knowledge import Issue, KnowledgeBase

CLASSES = ("cause", "symptom", "benign")


def catalogue_beside(root: Path) -> Path | None:
    """The catalogue that ships with the rules at `root`, if there is one."""
    name = "_catalogue" if root.name == "_rules" else "catalogue"
    path = root.parent / name
    return path if path.is_dir() else None


def check_catalogue(kb: KnowledgeBase) -> Iterator[Issue]:
    """Issues of the catalogue beside `kb`'s rules (none when it has no catalogue)."""
    if kb.root is None:
        return
    root = catalogue_beside(kb.root)
    if root is None:
        return
    yield from check_catalogue_dir(root, set(kb.causes))


def check_catalogue_dir(root: Path, causes: set[str]) -> Iterator[Issue]:
    from kb.rules.catalogue.loader import (
        CatalogueError,
        library_files,
        parse_library,
        parse_vocabulary,
    )
    from kb.util import re2syntax

    shown = root.parent
    try:
        words = parse_vocabulary(root)
    except CatalogueError as exc:
        yield Issue(str(root / "symptoms.yaml"), 1, "catalogue", "catalogue", str(exc))
        return
    for path in library_files(root):
        display = str(path.relative_to(shown)) if path.is_relative_to(shown) else str(path)
        try:
            _lib, messages = parse_library(path)
        except CatalogueError as exc:
            yield Issue(display, 1, "catalogue", "catalogue", str(exc))
            continue
        for m in messages:

            def bad(msg: str, hint: str = "", m: Message = m, display: str = display) -> Issue:
                return Issue(display, m.line or 1, "catalogue", "catalogue", msg, hint)

            if m.class_ not in CLASSES:
                yield bad(f"message without a class (cause|symptom|benign): {m.template!r}")
            elif m.class_ == "cause" and m.cause not in causes:
                yield bad(f"unknown cause id '{m.cause}'", "an id of a cause in rules/")
            elif m.class_ == "symptom" and m.symptom not in words:
                yield bad(
                    f"symptom word '{m.symptom}' is not in symptoms.yaml",
                    "add it to catalogue/symptoms.yaml or use an existing word",
                )
            problem = re2syntax.check(m.pattern) if m.pattern else None
            if problem is not None:
                yield bad(f"template does not compile to RE2: {problem.message}")
