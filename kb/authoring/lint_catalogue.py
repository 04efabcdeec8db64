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
    """The catalogue's issues, from a cache keyed by its content and the cause ids: parsing
    8,000 located templates takes seconds, and every command that loads the rules lints."""
    import contextlib
    import hashlib
    import json

    from kb.rules.catalogue.loader import content_key
    from kb.util.atomicfile import write_atomic
    from kb.util.paths import cache_dir

    h = hashlib.blake2b(b"catalogue-lint/1\0", digest_size=16)
    h.update(content_key(root).encode())
    h.update("\0".join(sorted(causes)).encode("utf-8", "surrogateescape"))
    h.update(Path(__file__).read_bytes())  # this module's checks are part of the answer
    cached = cache_dir() / f"catalogue-lint-{h.hexdigest()}.json"
    try:
        known = [Issue(**row) for row in json.loads(cached.read_text(encoding="utf-8"))]
    except (OSError, ValueError, TypeError):
        pass  # none yet, or unreadable: lint again
    else:
        yield from known
        return
    issues = list(_check_catalogue_dir(root, causes))
    with contextlib.suppress(OSError):  # a cache that cannot be written is no error
        write_atomic(cached, json.dumps([i.as_json() for i in issues]).encode("utf-8"))
    yield from issues


def _check_catalogue_dir(root: Path, causes: set[str]) -> Iterator[Issue]:
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
