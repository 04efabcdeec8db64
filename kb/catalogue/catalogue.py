"""The loaded catalogue and its line matcher."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from kb.catalogue.model import Library, Message


class Catalogue:
    """Every catalogued message; `match` says which of them a log line is."""

    def __init__(
        self,
        libraries: Sequence[Library],
        messages: Sequence[Message],
        vocabulary: dict[str, str] | None = None,
    ) -> None:
        self.libraries = tuple(libraries)
        self.messages = tuple(messages)
        self.vocabulary = dict(vocabulary or {})
        self._usable = [m for m in self.messages if m.usable and m.pattern]
        self._set: Any = None
        self._rx: dict[int, Any] = {}

    def _build(self) -> None:
        import re2

        opts = re2.Options()
        opts.log_errors = False
        opts.never_nl = True
        opts.max_mem = 256 << 20  # a budget, not an allocation: 8 MB (the default) is too
        # little for a Set of thousands of patterns
        rset = re2.Set.SearchSet(opts)
        for m in self._usable:
            rset.Add(m.pattern)
        rset.Compile()
        self._set = rset

    def match(self, line: str) -> list[Message]:
        """The usable messages whose pattern occurs in `line`, most specific (longest
        template) first."""
        if self._set is None:
            self._build()
        hits = self._set.Match(line) or []
        found = [self._usable[i] for i in hits]
        found.sort(key=lambda m: -len(m.template))
        return found

    def by_library(self, name: str) -> list[Message]:
        return [m for m in self.messages if m.library == name]


def catalogue_root() -> Path:
    from kb.paths import catalogue_dir

    return catalogue_dir()


@lru_cache(maxsize=4)
def _load(root: Path) -> Catalogue:
    from kb.catalogue.loader import load_raw

    data = load_raw(root)
    libs = [Library(**lib) for lib in data["libraries"]]
    msgs = [Message.from_json(m) for m in data["messages"]]
    return Catalogue(libs, msgs, data.get("vocabulary", {}))


def load_catalogue(root: Path | None = None) -> Catalogue:
    """The catalogue under `root` (default: the shipped one, see `kb.paths`); loaded once
    per process. Raises `kb.catalogue.CatalogueError` for a file that cannot be read."""
    return _load((root or catalogue_root()).resolve())
