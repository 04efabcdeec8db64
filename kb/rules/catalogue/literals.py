"""Which of the catalogue's prefilter literals occur in a line, in one pass.

Why: `Catalogue.match` used to try each of ~23,000 literals with `in` on every line (about
8 ms a line). Here they are one hyperscan literal database (compiled once per catalogue
content and cached beside it, as `kb.diagnosis.scanner` caches its databases), so a line
costs one scan; where hyperscan is missing or refuses them, an index of each literal's
first `GRAM` characters finds the same ones (a literal occurs in the line exactly when it
starts at one of the line's positions, whose next `GRAM` characters are its first).
The answer is the same either way: the literals' indices, ascending.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

GRAM = 4  # the first characters a literal is indexed by (shorter ones are tried with `in`)


class LiteralFilter:
    """The literals (in their order) and a way to find those of a line: `present`."""

    def __init__(self, literals: Sequence[str], key: str = "") -> None:
        self.literals = list(literals)
        # "" is in any line (the literals are distinct: one at most)
        self.always = [self.literals.index("")] if "" in self.literals else []
        self._hs: tuple[Any, Any] | None = _hyperscan_db(self.literals, key) if key else None
        self._grams: dict[str, list[int]] | None = None
        self._short: list[int] = []

    @property
    def engine(self) -> str:
        return "hyperscan" if self._hs is not None else "grams"

    def present(self, line: str) -> list[int]:
        """The indices of the literals that occur in `line`, ascending."""
        if self._hs is not None:
            db, scratch = self._hs
            found = list(self.always)

            def on_match(j: int, _from: int, _to: int, _flags: int, _ctx: object) -> None:
                found.append(j)

            db.scan(line.encode("utf-8", "surrogatepass"), match_event_handler=on_match,
                    scratch=scratch)  # fmt: skip
            return sorted(found)
        return self._by_grams(line)

    def _by_grams(self, line: str) -> list[int]:
        grams = self._grams if self._grams is not None else self._index()
        lits = self.literals
        found = {*self.always, *(j for j in self._short if lits[j] in line)}
        get = grams.get
        for at in range(len(line) - GRAM + 1):
            for j in get(line[at : at + GRAM], ()):
                if line.startswith(lits[j], at):
                    found.add(j)
        return sorted(found)

    def _index(self) -> dict[str, list[int]]:
        grams: dict[str, list[int]] = {}
        for j, lit in enumerate(self.literals):
            if len(lit) < GRAM:
                if lit:
                    self._short.append(j)
            else:
                grams.setdefault(lit[:GRAM], []).append(j)
        self._grams = grams
        return grams


def _hyperscan_db(literals: list[str], key: str) -> tuple[Any, Any] | None:
    """The literal database of `literals` (ids: their indices) and its scratch, read from
    the cache named by `key` (the catalogue's content) when there, else compiled and kept;
    None without hyperscan, or where it refuses them."""
    try:
        import hyperscan
    except ImportError:
        return None
    try:
        path = _db_path(hyperscan, key)
    except OSError:  # no source to name it by: compiled, not kept
        path = ""
    with contextlib.suppress(Exception):  # no cache, or one of another hyperscan or CPU
        with open(path, "rb") as fh:
            body = fh.read(max(0, os.fstat(fh.fileno()).st_size))
        db = hyperscan.loadb(body, hyperscan.HS_MODE_BLOCK)
        return db, hyperscan.Scratch(db)
    ids = [j for j, lit in enumerate(literals) if lit]
    if not ids:
        return None
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(
            expressions=[literals[j].encode("utf-8", "surrogatepass") for j in ids],
            ids=ids,
            elements=len(ids),
            flags=hyperscan.HS_FLAG_SINGLEMATCH,
            literal=True,
        )
    except Exception:  # hyperscan.error, or a hyperscan without the literal compiler
        return None
    from kb.util.atomicfile import write_atomic  # here: a warm run writes nothing

    with contextlib.suppress(Exception):
        if path:
            write_atomic(path, hyperscan.dumpb(db))
    return db, hyperscan.Scratch(db)


def _db_path(hyperscan: Any, key: str) -> str:
    from kb.util.digest import blake2b
    from kb.util.paths import cache_file

    with open(__file__, "rb") as fh:  # the code that chooses the ids names it too
        source = fh.read()
    name = blake2b(repr((key, getattr(hyperscan, "__version__", "?"))).encode(), digest_size=16)
    name.update(source)
    return cache_file(f"catalogue-literals-{name.hexdigest()}.hsdb")
