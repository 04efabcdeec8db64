"""Python regexes compiled once per user, not once per process: `compile(pattern, flags)`.

Why: `re.compile` parses the pattern and generates its matching code in Python, 0.1-0.7 ms
a regex; a pasted log's diagnosis compiles about forty of the engine's own regexes (line
shapes, timestamps, decorations), a tenth of its run. The code `re` generates depends
only on the pattern, the flags and the interpreter, so it is kept on disk the way Python
keeps bytecode: one cache file per interpreter build (its version and `_sre.MAGIC` name
it), holding for each (pattern, flags) what `re._compiler.compile` hands `_sre.compile`.
A cached entry is made into a pattern by `_sre.compile` (which validates the code); an
entry is stored only after the pattern it makes has been checked equal to `re.compile`'s
(same pattern, flags and code). Anything unexpected (another interpreter, a damaged or
foreign file) falls back to `re.compile`: the cache can cost a miss, never a different
regex. Only the engine's own pattern constants come here (never a pattern from a log or
a rule), so the file stays small; it is written at exit when something was added.
"""

from __future__ import annotations

import re
import sys
from typing import AnyStr

FORMAT = 2  # 2: the code as the bytes of an array of unsigned ints (read back in one go)
MAX_ENTRIES = 2048  # far above the engine's few hundred constants: a bound, never reached

Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]

_entries: dict[tuple[str | bytes, int], Entry] | None = None  # read at the first compile
_added: dict[tuple[str | bytes, int], Entry] = {}
_saving = False  # `_save` registered with atexit
_CODE = "I"  # an array of `_sre.CODESIZE` bytes a code (4: checked in `_tag`)


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:  # re's name, on purpose
    """`re.compile(pattern, flags)`, its code read from the cache when there."""
    flags = int(flags)
    entries = _loaded()
    entry = entries.get((pattern, flags))
    if entry is not None:
        try:
            return _sre_compile(pattern, entry)
        except Exception:  # a foreign entry: compiled as usual below
            pass
    rx = re.compile(pattern, flags)
    if len(entries) + len(_added) < MAX_ENTRIES:
        _learn(pattern, flags, rx)
    return rx


def _sre_compile(pattern: AnyStr, entry: Entry) -> re.Pattern[AnyStr]:
    import _sre  # type: ignore[import-not-found]
    from array import array

    final_flags, code, groups, groupindex, indexgroup = entry
    ops = array(_CODE, code).tolist()  # a list of ints, as `_sre.compile` takes them
    rx: re.Pattern[AnyStr] = _sre.compile(pattern, final_flags, ops, groups, groupindex, indexgroup)
    return rx


def _entry(pattern: str | bytes, flags: int) -> Entry:
    """What `re._compiler.compile` passes to `_sre.compile` for this pattern."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    from array import array

    final = int(flags | parsed.state.flags)
    packed = array(_CODE, code).tobytes()  # unpickled at once, not int by int
    return final, packed, parsed.state.groups - 1, groupindex, tuple(indexgroup)


def _learn(pattern: AnyStr, flags: int, rx: re.Pattern[AnyStr]) -> None:
    """Keep the entry of a pattern just compiled, if it makes that very pattern."""
    try:
        entry = _entry(pattern, flags)
        if _sre_compile(pattern, entry) != rx:
            return
    except Exception:  # another interpreter's `re` internals: nothing is cached
        return
    global _saving
    if not _saving:
        import atexit

        atexit.register(_save)
        _saving = True
    _added[(pattern, flags)] = entry


def _tag() -> str:
    import _sre
    from array import array

    from kb.util.digest import blake2b

    if array(_CODE).itemsize != _sre.CODESIZE:  # another build's code size: cache nothing
        raise ValueError("code size")

    build = f"{FORMAT}\0{sys.implementation.name}\0{sys.version}\0{_sre.MAGIC}\0{_sre.CODESIZE}"
    return blake2b(build.encode(), digest_size=8).hexdigest()


def cache_file() -> str:
    from kb.util import paths

    return paths.cache_file(f"regex-{_tag()}.pickle")


def _read() -> dict[tuple[str | bytes, int], Entry]:
    from kb.util import cachepickle

    got = cachepickle.load(cache_file(), {})  # plain containers only: no class is allowed
    return got if isinstance(got, dict) else {}


def _loaded() -> dict[tuple[str | bytes, int], Entry]:
    global _entries
    if _entries is None:
        try:
            _entries = _read()
        except Exception:  # no cache folder, say: every regex compiled as usual
            _entries = {}
    return _entries


def _save() -> None:
    """At exit: what this process learned, merged with what others wrote meanwhile."""
    if not _added:
        return
    from kb.util import cachepickle

    try:
        merged = {**_read(), **_added}
        if len(merged) <= MAX_ENTRIES:
            cachepickle.save(cache_file(), merged)
    except Exception:  # a cache that cannot be written is no error
        pass
    _added.clear()


def forget() -> None:
    """Drop what was read and learned (for tests that point the cache elsewhere)."""
    global _entries
    _entries = None
    _added.clear()
