"""The loaded catalogue and its line matcher."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from kb.rules.catalogue.model import FIELDS, Library, Message

_LITERAL, _USABLE, _PATTERN = (FIELDS.index(f) for f in ("literal", "usable", "pattern"))


class Catalogue:
    """Every catalogued message; `match` says which of them a log line is.

    Built from `Message`s or from the cache's rows (lists in the order of
    `kb.rules.catalogue.model.FIELDS`); from rows, a `Message` is made only when it is first
    needed (`messages`, or a line that matches it), which keeps loading fast."""

    def __init__(
        self,
        libraries: Sequence[Library],
        messages: Sequence[Message] = (),
        vocabulary: dict[str, str] | None = None,
        rows: Sequence[Sequence[Any]] = (),
    ) -> None:
        self.libraries = tuple(libraries)
        self.vocabulary = dict(vocabulary or {})
        self._rows: list[Sequence[Any]] = [
            [getattr(m, f) for f in FIELDS] for m in messages
        ] + list(rows)
        self._made: dict[int, Message] = {i: m for i, m in enumerate(messages)}
        self._all: tuple[Message, ...] | None = tuple(messages) if not rows else None
        self._index: dict[str, list[int]] | None = None  # literal -> rows, at first match

    def _by_literal(self) -> dict[str, list[int]]:
        if self._index is None:
            self._index = {}
            for i, row in enumerate(self._rows):
                if row[_USABLE] and row[_PATTERN]:
                    self._index.setdefault(row[_LITERAL], []).append(i)
        return self._index

    def _message(self, i: int) -> Message:
        m = self._made.get(i)
        if m is None:
            m = self._made[i] = Message(*self._rows[i])
        return m

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message, in the order of the catalogue files."""
        if self._all is None:
            self._all = tuple(self._message(i) for i in range(len(self._rows)))
        return self._all

    def match(self, line: str) -> list[Message]:
        """The usable messages whose pattern occurs in `line`, most specific (longest
        template) first. Each message's literal text prefilters (a substring test), so
        only the few candidates' patterns are compiled, when first needed, and run."""
        from kb.util.re2syntax import compile_re2

        found: list[Message] = []
        for lit, ids in self._by_literal().items():
            if lit in line:
                found.extend(
                    self._message(i)
                    for i in ids
                    if compile_re2(self._rows[i][_PATTERN]).search(line)
                )
        found.sort(key=lambda m: -len(m.template))
        return found

    def by_library(self, name: str) -> list[Message]:
        return [m for m in self.messages if m.library == name]


def catalogue_root() -> Path:
    from kb.util.paths import catalogue_dir

    return catalogue_dir()


@lru_cache(maxsize=4)
def _load(root: Path) -> Catalogue:
    from kb.rules.catalogue.loader import load_raw

    data = load_raw(root)
    libs = [Library(**lib) for lib in data["libraries"]]
    return Catalogue(libs, vocabulary=data.get("vocabulary", {}), rows=data["messages"])


def load_catalogue(root: Path | None = None) -> Catalogue:
    """The catalogue under `root` (default: the shipped one, see `kb.util.paths`); loaded once
    per process. Raises `kb.rules.catalogue.CatalogueError` for a file that cannot be read."""
    return _load((root or catalogue_root()).resolve())
