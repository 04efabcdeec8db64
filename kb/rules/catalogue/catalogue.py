"""The loaded catalogue and its line matcher."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kb.rules.catalogue.model import FIELDS, Library, Message

if TYPE_CHECKING:
    from pathlib import Path

    from kb.rules.catalogue.literals import LiteralFilter

_LITERAL, _USABLE, _PATTERN = (FIELDS.index(f) for f in ("literal", "usable", "pattern"))


class Catalogue:
    """Every catalogued message; `match` says which of them a log line is.

    Built from `Message`s, from rows (lists in the order of `kb.rules.catalogue.model.FIELDS`),
    or from the cache's packed form (`from_packed`: each row a line of JSON, decoded when
    first needed); a `Message` is made only when it is first needed (`messages`, or a line
    that matches it), which keeps loading fast. `key`: the content key of the files it was
    read from ("" when built in memory), which names what is cached from it."""

    def __init__(
        self,
        libraries: Sequence[Library],
        messages: Sequence[Message] = (),
        vocabulary: dict[str, str] | None = None,
        rows: Sequence[Sequence[Any]] = (),
        key: str = "",
    ) -> None:
        self.libraries = tuple(libraries)
        self.vocabulary = dict(vocabulary or {})
        self.key = key
        self._rows: list[Sequence[Any]] | None = [
            [getattr(m, f) for f in FIELDS] for m in messages
        ] + list(rows)
        self._blob: bytes | None = b""  # packed: the rows as JSON lines (None: in the
        self._rows_path = ""  # file `_rows_path`, read when needed), where each starts
        self._root = ""  # the folder it was read from
        self._offsets: Sequence[int] = ()
        self._decoded: dict[int, Sequence[Any]] = {}
        self._made: dict[int, Message] = {i: m for i, m in enumerate(messages)}
        self._all: tuple[Message, ...] | None = tuple(messages) if not rows else None
        self._literals: list[str] | None = None  # the prefilter texts, in order of first row
        self._members: Sequence[int] = ()  # ... and their rows, literal j's from
        self._starts: Sequence[int] = ()  # `_starts[j]` to `_starts[j + 1]`
        self._filter: LiteralFilter | None = None

    @classmethod
    def from_packed(cls, data: dict[str, Any], root: str = "") -> Catalogue:
        """The catalogue of `kb.rules.catalogue.loader.pack`'s data, read from `root`."""
        cat = cls([Library(**lib) for lib in data["libraries"]], (), data.get("vocabulary", {}))
        cat.key = str(data.get("key", ""))
        cat._rows, cat._all = None, None
        from kb.rules.catalogue.loader import rows_file

        cat._blob, cat._rows_path, cat._root = data.get("rows"), rows_file(cat.key), root
        cat._offsets = memoryview(data["offsets"]).cast("I")
        cat._literals = data["literals"]
        cat._starts = memoryview(data["starts"]).cast("I")
        cat._members = memoryview(data["members"]).cast("I")
        return cat

    def _count(self) -> int:
        return len(self._rows) if self._rows is not None else len(self._offsets) - 1

    def _row(self, i: int) -> Sequence[Any]:
        if self._rows is not None:
            return self._rows[i]
        row = self._decoded.get(i)
        if row is None:
            import json

            start, end = self._offsets[i], self._offsets[i + 1]
            row = self._decoded[i] = json.loads(self._text(start, end))
        return row

    def _text(self, start: int, end: int) -> bytes:
        """Bytes `start` to `end` of the packed rows."""
        if self._blob is None:
            try:
                with open(self._rows_path, "rb") as fh:
                    fh.seek(start)
                    text = fh.read(end - start)
                if len(text) == end - start:
                    return text
            except OSError:
                pass
            self._blob = self._reloaded()  # gone since (pruned, removed): from the files
        return self._blob[start:end]

    def _reloaded(self) -> bytes:
        """The rows, read again from the catalogue's files (or a cache rebuilt meanwhile);
        `CatalogueError` where the files no longer hold this catalogue."""
        from kb.rules.catalogue.loader import CatalogueError, load_packed

        data = load_packed(self._root)
        if data.get("key") != self.key:
            raise CatalogueError(f"{self._root}: the catalogue changed while it was read")
        rows = data.get("rows")
        if not isinstance(rows, bytes):
            with open(self._rows_path, "rb") as fh:
                rows = fh.read()
        return rows

    def _prefilter(self) -> LiteralFilter:
        """The literals of the usable rows, each with its rows, as one filter (built at the
        first match; from the cache when the catalogue came from one)."""
        if self._filter is None:
            from kb.rules.catalogue.literals import LiteralFilter

            if self._literals is None:
                index: dict[str, list[int]] = {}
                for i in range(self._count()):
                    row = self._row(i)
                    if row[_USABLE] and row[_PATTERN]:
                        index.setdefault(row[_LITERAL], []).append(i)
                members: list[int] = []
                starts = [0]
                for rows in index.values():
                    members.extend(rows)
                    starts.append(len(members))
                self._literals, self._members, self._starts = list(index), members, starts
            self._filter = LiteralFilter(self._literals, self.key)
        return self._filter

    def _message(self, i: int) -> Message:
        m = self._made.get(i)
        if m is None:
            m = self._made[i] = Message(*self._row(i))
        return m

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message, in the order of the catalogue files."""
        if self._all is None:
            if self._rows is None:  # all of them: one JSON text is faster than 26,000
                import json

                blob = self._text(0, self._offsets[-1])
                text = b"[" + blob.rstrip(b"\n").replace(b"\n", b",") + b"]"
                self._rows = json.loads(text)
            self._all = tuple(self._message(i) for i in range(self._count()))
        return self._all

    def match(self, line: str) -> list[Message]:
        """The usable messages whose pattern occurs in `line`, most specific (longest
        template) first. The literals (each message's longest literal text) that occur in
        the line are found in one pass (`kb.rules.catalogue.literals`), so only the few
        candidates' patterns are compiled, when first needed, and run."""
        from kb.util.re2syntax import compile_re2

        prefilter = self._prefilter()
        found: list[Message] = []
        members, starts = self._members, self._starts
        for j in prefilter.present(line):
            found.extend(
                self._message(i)
                for i in members[starts[j] : starts[j + 1]]
                if compile_re2(self._row(i)[_PATTERN]).search(line)
            )
        found.sort(key=lambda m: -len(m.template))
        return found

    def by_library(self, name: str) -> list[Message]:
        return [m for m in self.messages if m.library == name]


def catalogue_root() -> Path:
    from kb.util.paths import catalogue_dir

    return catalogue_dir()


@lru_cache(maxsize=4)
def _load(root: str) -> Catalogue:
    from kb.rules.catalogue.loader import load_packed

    return Catalogue.from_packed(load_packed(root), root)


def load_catalogue(root: Path | str | None = None) -> Catalogue:
    """The catalogue under `root` (default: the shipped one, see `kb.util.paths`); loaded once
    per process. Raises `kb.rules.catalogue.CatalogueError` for a file that cannot be read."""
    if root is None:
        from kb.util.paths import catalogue_folder

        root = catalogue_folder()
    return _load(os.path.realpath(os.fspath(root)))
