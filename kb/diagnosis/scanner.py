"""Finding the few lines worth a closer look in megabytes of log, at automaton speed.

Two levels per block of about 1 MB:
1. one multi-pattern automaton over the whole block says *which* patterns occur in it
   at all: hyperscan in block mode with `HS_FLAG_SINGLEMATCH` (each pattern reported
   at most once, so a pattern that matches every line costs one callback, not a
   million); a pattern hyperscan refuses (too large, say) that only feeds matchers,
   which confirm every line anyway, goes in as hyperscan's *prefilter* form (a
   superset); the others (or every pattern, where hyperscan is not installed) go to a
   google-re2 `Set`, which scans far slower;
2. for each pattern that occurred *and* still has a consumer that wants lines (a
   signature with fewer than its maximum hits, an analyzer below its cap), RE2 with
   `never_nl` lists the lines it matches.
The result is a superset of the lines any matcher could fire on; `kb.diagnosis.matching`
confirms each one. The compiled hyperscan databases (the block-level one and each
pattern's line-level one, which a log needs by the hundred) are cached on disk by their
patterns: building them cost seconds per process.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from collections.abc import Callable, Sequence
from typing import Any

import re2

from kb.diagnosis.reader import Block
from kb.util.digest import blake2b
from kb.util.record import record


@record(hashable=True, init_pickle=True)  # frozen; a thousand in the plan's cache
class Pattern:
    """A prefilter pattern in RE2 syntax; hyperscan gets it when `hs_ok`."""

    regex: str
    caseless: bool = False
    lazy: bool = False  # matches most lines: scanned for only while a consumer wants it

    def __init__(self, regex: str, caseless: bool = False, lazy: bool = False) -> None:
        self.regex = regex
        self.caseless = caseless
        self.lazy = lazy

    @property
    def hs_ok(self) -> bool:
        return self.regex.isascii() and self.utf8_ok

    @property
    def utf8_ok(self) -> bool:
        """Hyperscan matches it as RE2 does when it reads the text as UTF-8 (`\\w`, `\\b`
        and `\\s` stay ASCII in both); a non-ASCII pattern is scanned that way only in
        blocks that are valid UTF-8."""
        r = self.regex
        return "\\p" not in r and "\\P" not in r and "(?U" not in r


def _options(caseless: bool) -> re2.Options:
    opts = re2.Options()
    opts.log_errors = False
    opts.never_nl = True
    opts.case_sensitive = not caseless
    return opts


SET_MAX_MEM = 64 << 20  # RE2's budget for one Set (its default, 8 MB, holds a few hundred)


class _SetGroup:
    """RE2 Sets over a list of expressions, split in halves until each compiles: `Match`
    gives the indexes (in `kept`, the expressions RE2 accepts) of the matching ones, as
    one Set would."""

    def __init__(self, exprs: list[bytes]) -> None:
        self.sets: list[tuple[Any, int]] = []  # (compiled Set, index of its first expression)
        rset = self._new()
        self.kept: list[int] = []  # the indexes in `exprs` of those RE2 accepts
        for i, e in enumerate(exprs):
            try:
                rset.Add(e)
            except re2.error:
                continue  # lint rejects these; never a candidate
            self.kept.append(i)
        accepted = [exprs[i] for i in self.kept]
        if accepted:
            self._compile(rset, accepted, 0)

    @staticmethod
    def _new() -> Any:
        opts = _options(False)
        opts.max_mem = SET_MAX_MEM
        return re2.Set.SearchSet(opts)

    def _compile(self, rset: Any, exprs: list[bytes], start: int) -> None:
        """Compile `rset` (which holds `exprs`); past RE2's budget, two halves instead."""
        try:
            rset.Compile()
        except re2.error:
            if len(exprs) == 1:
                return  # one pattern RE2 cannot hold: never a candidate (as a refused one)
            half = len(exprs) // 2
            for part, at in ((exprs[:half], start), (exprs[half:], start + half)):
                sub = self._new()
                for e in part:
                    sub.Add(e)
                self._compile(sub, part, at)
            return
        self.sets.append((rset, start))

    def Match(self, data: bytes | memoryview) -> list[int]:  # re2.Set's name
        return [start + i for rset, start in self.sets for i in rset.Match(data) or ()]


class Scanner:
    """Candidate lines of a block for a fixed list of patterns."""

    def __init__(
        self,
        patterns: Sequence[Pattern],
        use_hyperscan: bool = True,
        approximate: frozenset[int] = frozenset(),
        key: str = "",
    ) -> None:
        """`approximate`: ids of patterns whose lines are confirmed later, so a superset
        of their lines (hyperscan's prefilter form) is good enough. `key`: a content key
        that stands for `patterns` and `approximate` both (the scan plan's, made of its
        cached part's key), which names the cached databases; without one, each database
        is named by a digest of its patterns (a millisecond for a thousand patterns)."""
        self.patterns = list(patterns)
        self.approximate = approximate
        self._line_rx: dict[int, re2._Regexp | None] = {}  # compiled when first needed
        self.hs_db: Any = None
        self.hs_lazy: Any = None
        hs_ids: list[int] = []
        lazy_ids: list[int] = []
        if use_hyperscan:
            eager = [i for i, p in enumerate(self.patterns) if not p.lazy]
            self.hs_db, hs_ids = _hyperscan_db(
                self.patterns, eager, approximate, key=key and f"{key}-eager"
            )
            lazy = [i for i, p in enumerate(self.patterns) if p.lazy]
            self.hs_lazy, lazy_ids = _hyperscan_db(
                self.patterns, lazy, approximate, key=key and f"{key}-lazy"
            )
        self._lazy_ids = lazy_ids
        taken = self._hs_ids = set(hs_ids) | set(lazy_ids)
        # non-ASCII patterns: hyperscan in UTF-8 mode on valid UTF-8 blocks, RE2 on others
        self.hs_utf8: Any = None
        utf8_ids: list[int] = []
        if use_hyperscan:
            wide = [i for i, p in enumerate(self.patterns) if i not in taken and p.utf8_ok]
            self.hs_utf8, utf8_ids = _hyperscan_db(
                self.patterns, wide, approximate, utf8=True, key=key and f"{key}-utf8"
            )
        self._line_dbs: dict[int, Any] = {}
        rest = [i for i in range(len(self.patterns)) if i not in taken and i not in utf8_ids]
        self._set, self._set_ids = self._re2_set(rest)
        self._utf8_ids = utf8_ids  # their RE2 Set is compiled for the first non-UTF-8 block
        self._utf8_fallback: tuple[Any, list[int]] | None = None

    def _re2_set(self, ids: list[int]) -> tuple[Any, list[int]]:
        """An RE2 Set of the patterns `ids` (several, when one would pass RE2's memory
        budget: the knowledge grows), and the ids it holds in its order."""
        exprs = [
            (b"(?mi)" if self.patterns[i].caseless else b"(?m)") + self.patterns[i].regex.encode()
            for i in ids
        ]
        group = _SetGroup(exprs)
        if not group.kept:
            return None, []
        return group, [ids[j] for j in group.kept]

    def _utf8_set(self) -> tuple[Any, list[int]]:
        """The RE2 Set of the patterns hyperscan reads as UTF-8, for the blocks that are
        not UTF-8 (rare: most logs never need it, and it costs milliseconds to compile)."""
        if self._utf8_fallback is None:
            self._utf8_fallback = self._re2_set(self._utf8_ids)
        return self._utf8_fallback

    @property
    def _utf8_set_ids(self) -> list[int]:
        return self._utf8_set()[1]

    def line_rx(self, pid: int) -> re2._Regexp | None:
        """The pattern as a per-line RE2 (`never_nl`): compiled on first use."""
        if pid in self._line_rx:
            return self._line_rx[pid]
        p = self.patterns[pid]
        try:
            rx = re2.compile(b"(?m)" + p.regex.encode("utf-8"), _options(p.caseless))
        except re2.error:
            rx = None
        if rx is not None and rx.search(b"") is not None:
            rx = re2.compile(b"(?m)^", _options(False))  # matches every line
        self._line_rx[pid] = rx
        return rx

    @property
    def engine(self) -> str:
        if self.hs_db is not None:
            utf8 = "+utf8" if self.hs_utf8 is not None else ""
            return "hyperscan" + utf8 + ("+re2" if self._set_ids else "")
        return "re2"

    def present(self, data: bytes | memoryview, wanted: Callable[[int], bool] = bool) -> set[int]:
        """Level 1: the ids of the patterns that occur somewhere in `data` (the lazy
        patterns only while one of them is `wanted`)."""
        found: set[int] = set()
        if not len(data):
            return found

        def on_match(pid: int, _from: int, _to: int, _flags: int, _ctx: object) -> None:
            found.add(pid)

        if self.hs_db is not None:
            self.hs_db.scan(data, match_event_handler=on_match)
        if self.hs_lazy is not None and any(wanted(i) for i in self._lazy_ids):
            self.hs_lazy.scan(data, match_event_handler=on_match)
        if self.hs_utf8 is not None:
            if _valid_utf8(data):
                self.hs_utf8.scan(data, match_event_handler=on_match)
            else:
                rset, ids = self._utf8_set()
                if rset is not None:
                    found.update(ids[i] for i in rset.Match(data) or ())
        if self._set is not None:
            found.update(self._set_ids[i] for i in self._set.Match(data) or ())
        return found

    def candidates(
        self, block: Block, wanted: Callable[[int], bool]
    ) -> list[tuple[int, int, set[int]]]:
        """Level 2: (line number, offset of the line in the block, pattern ids) for each
        line that a wanted pattern matches, in line order."""
        data = block.data
        by_start: dict[int, set[int]] = {}
        for pid in self.present(block.view(), wanted):
            if wanted(pid):
                for start in self.line_starts(pid, block):
                    by_start.setdefault(start, set()).add(pid)
        out = []
        line_no, at = block.first_line, block.lo
        for start in sorted(by_start):
            line_no += data.count(b"\n", at, start)
            at = start
            out.append((line_no, start, by_start[start]))
        return out

    def line_starts(self, pid: int, block: Block) -> list[int]:
        """Offsets (in `block.data`) of the block's lines where pattern `pid` matches."""
        return [start for start, _end in self.line_spans(pid, block)]

    def line_spans(self, pid: int, block: Block) -> list[tuple[int, int]]:
        """(start, end) offsets (in `block.data`; `end` at the line's newline) of the
        block's lines where pattern `pid` matches, in order."""
        data, lo, hi = block.data, block.lo, block.hi
        db = self._line_db(pid)
        spans: list[tuple[int, int]] = []
        if db is not None:
            span = [0, -1]  # the line last reported: [start, end]

            def on_match(_id: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
                pos = lo + (to - 1 if to > 0 else 0)
                if span[0] <= pos <= span[1]:
                    return
                start = data.rfind(b"\n", lo, pos) + 1 or lo
                end = data.find(b"\n", pos, hi)
                span[0], span[1] = start, (hi if end < 0 else end)
                spans.append((start, span[1]))

            db.scan(block.view(), match_event_handler=on_match)
            return spans
        rx = self.line_rx(pid)
        if rx is None:
            return spans
        for m in rx.finditer(data, lo, hi):
            start = data.rfind(b"\n", lo, m.start()) + 1 or lo
            if start < hi and (not spans or spans[-1][0] != start):
                end = data.find(b"\n", start, hi)
                spans.append((start, hi if end < 0 else end))
        return spans

    def _line_db(self, pid: int) -> Any:
        """A hyperscan database of the one pattern, reporting every match: built when
        first needed, cached on disk (a build costs milliseconds, a log may need a
        hundred)."""
        if pid in self._line_dbs:
            return self._line_dbs[pid]
        db = None
        p = self.patterns[pid]
        if pid in self._hs_ids:
            import hyperscan

            flags = hyperscan.HS_FLAG_MULTILINE | (hyperscan.HS_FLAG_CASELESS if p.caseless else 0)
            tries = (
                [flags, flags | hyperscan.HS_FLAG_PREFILTER] if pid in self.approximate else [flags]
            )
            db = _line_database(hyperscan, p.regex.encode(), tries)
        self._line_dbs[pid] = db
        return db


def _line_database(hyperscan: Any, expr: bytes, tries: list[int]) -> Any:
    """The one-pattern database of `expr` with the first of the flags `tries` hyperscan
    takes (None when it takes none: RE2 finds the lines), from the disk cache when there.
    Named by the pattern alone, not by its place in the plan (the matches' ids are never
    read): a rule edit that moves the patterns leaves their databases usable, rather than
    a new file for every pattern after it."""
    key = blake2b(digest_size=16)
    key.update(repr(("line", getattr(hyperscan, "__version__", "?"), expr, tries)).encode())
    name = "line-" + key.hexdigest()
    cached = _load_db(hyperscan, name)
    if cached is not None:
        db, kept = cached
        return db if kept else None
    db = None
    for f in tries:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        try:
            db.compile(expressions=[expr], ids=[0], elements=1, flags=[f])
            break
        except Exception:  # hyperscan.error: leave this pattern to RE2
            db = None
    if db is not None:
        _save_db(hyperscan, name, db, [0])
    return db


def line_at(data: bytes, start: int) -> bytes:
    end = data.find(b"\n", start)
    return data[start : end if end >= 0 else len(data)]


# ---------------------------------------------------------------- hyperscan, cached


def _valid_utf8(data: bytes | memoryview) -> bool:
    try:
        codecs.utf_8_decode(data, "strict", True)
    except UnicodeDecodeError:
        return False
    return True


def _hyperscan_db(
    patterns: Sequence[Pattern],
    subset: Sequence[int],
    approximate: frozenset[int] = frozenset(),
    utf8: bool = False,
    key: str = "",
) -> tuple[Any, list[int]]:
    """A block-mode database of the patterns of `subset` hyperscan takes (with `utf8`,
    the non-ASCII ones, read as UTF-8), and their ids; cached on disk, named by `key`
    (which stands for the patterns, the subset and `approximate`) or by their digest."""
    try:
        import hyperscan
    except ImportError:
        return None, []
    version = getattr(hyperscan, "__version__", "?")
    name = ""
    if key and _source_key():  # looked up before the subset is even filtered: a warm start
        keyed = repr(("keyed", version, key, _source_key())).encode()
        name = blake2b(keyed, digest_size=16).hexdigest()
        cached = _load_db(hyperscan, name)
        if cached is not None:
            return cached
    ids = [i for i in subset if (patterns[i].utf8_ok if utf8 else patterns[i].hs_ok)]
    if not ids:
        return None, []
    base = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_MULTILINE
    if utf8:
        base |= hyperscan.HS_FLAG_UTF8
    flags = [base | (hyperscan.HS_FLAG_CASELESS if patterns[i].caseless else 0) for i in ids]
    exprs = [patterns[i].regex.encode() for i in ids]
    approx = sorted(set(ids) & approximate)
    content = repr((version, ids, exprs, flags, approx)).encode()
    by_content = blake2b(content, digest_size=16).hexdigest()
    cached = _load_db(hyperscan, by_content)
    if cached is not None:
        if name:  # the same database, found by its key from now on
            _save_db(hyperscan, name, *cached)
        return cached
    kept = []
    kept_exprs, kept_flags = [], []
    for i, e, f in zip(ids, exprs, flags, strict=True):
        if not _compiles(hyperscan, e, f):
            if i not in approximate or not _compiles(hyperscan, e, f | hyperscan.HS_FLAG_PREFILTER):
                continue
            f |= hyperscan.HS_FLAG_PREFILTER  # a superset of its lines: matchers confirm them
        kept.append(i)
        kept_exprs.append(e)
        kept_flags.append(f)
    if not kept:
        return None, []
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(expressions=kept_exprs, ids=kept, elements=len(kept), flags=kept_flags)
    except hyperscan.error:
        return None, []
    _save_db(hyperscan, name or by_content, db, kept)
    return db, kept


_SOURCE_KEY: list[str] = []


def _source_key() -> str:
    """A digest of this module's source: a keyed database is named by its patterns (the
    caller's key) and by the code that chooses, from them, its subset and flags."""
    if not _SOURCE_KEY:
        try:
            with open(__file__, "rb") as fh:
                _SOURCE_KEY.append(blake2b(fh.read(), digest_size=16).hexdigest())
        except OSError:  # no source to name the code by: databases named by content only
            _SOURCE_KEY.append("")
    return _SOURCE_KEY[0]


def _compiles(hyperscan: object, expr: bytes, flag: int) -> bool:
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)  # type: ignore[attr-defined]
    try:
        db.compile(expressions=[expr], ids=[0], elements=1, flags=[flag])
    except Exception:  # hyperscan.error and friends: this pattern goes to RE2
        return False
    return True


def _db_path(key: str) -> str:
    from kb.util.paths import cache_file

    return cache_file(f"scan-{key}.hsdb")


def _load_db(hyperscan: object, key: str) -> tuple[object, list[int]] | None:
    path = _db_path(key)
    try:
        with open(path, "rb") as fh:
            head = fh.readline()  # the ids, then the database (read once, never copied)
            # its exact size: a plain `read()` grows and joins chunks (4 ms for 2 MB)
            body = fh.read(max(0, os.fstat(fh.fileno()).st_size - len(head)))
        if not head.endswith(b"\n"):
            return None
        kept = [int(x) for x in head[:-1].split(b",") if x]
        db = hyperscan.loadb(body, hyperscan.HS_MODE_BLOCK)  # type: ignore[attr-defined]
        db.scratch = hyperscan.Scratch(db)  # type: ignore[attr-defined]
    except Exception:  # no cache, or one from another hyperscan or CPU: rebuild
        return None
    return db, kept


def _save_db(hyperscan: object, key: str, db: object, kept: list[int]) -> None:
    from kb.util.atomicfile import write_atomic

    with contextlib.suppress(Exception):
        body = hyperscan.dumpb(db)  # type: ignore[attr-defined]
        write_atomic(_db_path(key), ",".join(map(str, kept)).encode() + b"\n" + body)
