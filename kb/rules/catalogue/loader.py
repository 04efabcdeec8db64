"""Reading catalogue/*.yaml into `Message`s, cached by the files' content.

The catalogue holds thousands of entries; PyYAML alone takes about a second for them, so
the first load compiles every template and writes the result under `kb.util.paths.cache_dir()`
named by a hash of the files and of these modules (`content_key`); later loads read it back.
The cache is a pickle of plain data (`kb.util.cachepickle`) packed for a pasted log, which
needs only the few messages its lines match (`pack`): each row is its own line of JSON,
decoded when asked for, beside the prefilter literals and the rows of each. Hashing the
files costs tens of milliseconds, so the key is recorded for what `os.stat` says of them
(`known_key`, as `kb.diagnosis.compiled` does for the rules) and hashed only when that moved.

The folder can be anyone's (`$DLPERF_HELP_CATALOGUE`), so it is read like the rules folder:
regular files inside it only (`kb.util.rulefiles`: a FIFO would hang every command, since the
rules' cache key hashes the catalogue) and plain YAML only (`kb.util.yamlsrc`: no anchors,
aliases or tags, so a 400-byte alias bomb is a `file:line` error, not gigabytes).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from stat import S_ISREG
from typing import TYPE_CHECKING, Any

from kb.rules.catalogue.model import FIELDS, Library, Message

if TYPE_CHECKING:  # a warm load reads the cache by plain strings: no pathlib, no templates
    from pathlib import Path

    from kb.rules.catalogue.templates import Compiled

FORMAT = "dlperf-catalogue/6"  # 3: patterns match a line cut after a value; 4: and without a Python exception class; 5: a template of generic words only is no matcher; 6: a packed pickle
VOCABULARY = "symptoms.yaml"
CLASSIFY = "classify.yaml"
NOT_LIBRARIES = {VOCABULARY, CLASSIFY}
MAX_CATALOGUE_BYTES = 8 << 20  # nccl.yaml, the largest, is about 400 KB
RACY_NS = 2_000_000_000  # a file changed this recently may change again within its clock tick
_HERE = os.path.dirname(os.path.abspath(__file__))
_USABLE, _PATTERN, _LITERAL = (FIELDS.index(f) for f in ("usable", "pattern", "literal"))


class CatalogueError(ValueError):
    """A catalogue file that cannot be read: `file:line: what`."""


def library_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*.yaml") if p.name not in NOT_LIBRARIES)


def content_key(root: Path) -> str:
    """A hash of the catalogue files and of the modules that compile them."""
    from kb.util.digest import blake2b
    from kb.util.rulefiles import RuleFileError, read_rule_bytes

    h = blake2b(FORMAT.encode(), digest_size=16)
    from kb.util.statkey import listing

    for src in listing(_HERE, (".py",)):
        with open(src, "rb") as fh:
            h.update(fh.read())
    for path in [*library_files(root), root / VOCABULARY]:
        h.update(path.name.encode("utf-8", "surrogateescape") + b"\0")
        try:  # never `read_bytes`: a FIFO would block (the error is the parser's to tell)
            h.update(read_rule_bytes(path, root, MAX_CATALOGUE_BYTES))
        except RuleFileError as exc:
            h.update(b"\0unreadable " + str(exc).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _read_text(path: Path, root: Path) -> str:
    """A catalogue file's text; `CatalogueError` (one line, naming it) for anything else."""
    from kb.util.rulefiles import RuleFileError, read_rule_bytes

    try:
        return read_rule_bytes(path, root, MAX_CATALOGUE_BYTES).decode("utf-8")
    except RuleFileError as exc:
        raise CatalogueError(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise CatalogueError(f"{path}: cannot read: not UTF-8 text") from None


def _style(library: str, file: str) -> str:
    """How a template marks its values: Python sources use `{}` (and `%s`)."""
    return "python" if file.endswith(".py") else "printf"


def parse_library(
    path: Path, lines: bool = True, root: Path | None = None
) -> tuple[Library, list[Message]]:
    """One catalogue file of the folder `root` (default: its own); raises `CatalogueError`
    with the file and line. `lines`: keep each entry's line (for lint)."""
    lib, parsed = _parse(path, lines, root or path.parent)
    return lib, [m for m, _comp in parsed]


def _parse(path: Path, lines: bool, root: Path) -> tuple[Library, list[tuple[Message, Compiled]]]:
    """`parse_library`, each message with its compiled template (its cuts included)."""
    from kb.rules.catalogue.templates import compile_template

    data, where = _load_yaml(path, root)
    if not lines:
        where = {}
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise CatalogueError(f"{path}:1: expected `library`, `source`, `versions`, `messages`")
    lib = Library(
        str(data.get("library", path.stem)),
        str(data.get("source", "")),
        str(data.get("versions", "")),
        str(path),
    )
    out: list[tuple[Message, Compiled]] = []
    for i, entry in enumerate(data["messages"]):
        line = where.get(("messages", i), 0)
        if not isinstance(entry, dict) or not isinstance(entry.get("template"), str):
            raise CatalogueError(f"{path}:{line}: an entry needs a `template` string")
        file = str(entry.get("file", ""))
        comp = compile_template(entry["template"], _style(lib.name, file))
        msg = Message(
            library=lib.name,
            template=entry["template"],
            level=str(entry.get("level", "")),
            file=file,
            versions=str(entry.get("versions", "")),
            class_=str(entry.get("class", "")),
            cause=str(entry.get("cause", "") or ""),
            variant=str(entry.get("variant", "") or ""),
            symptom=str(entry.get("symptom", "") or ""),
            topic=str(entry.get("topic", "") or ""),
            pattern=comp.pattern,
            literal=comp.literal,
            usable=comp.usable,
            line=line,
        )
        out.append((msg, comp))
    return lib, out


def shared_cuts(compiled: Sequence[tuple[Message, Compiled]]) -> frozenset[str]:
    """The cut prefixes (`Compiled.cuts`) that a message of another meaning (label) also
    begins with: a line that ends there may be either, so neither may claim it. Compared
    past any leading punctuation (an unanchored pattern matches after whatever precedes)."""
    import bisect

    flats = sorted((_key(comp.flat), m.label) for m, comp in compiled)
    keys = [f for f, _label in flats]
    out: set[str] = set()
    for m, comp in compiled:
        for cut in map(_key, comp.cuts):
            i = bisect.bisect_left(keys, cut)
            while i < len(keys) and keys[i].startswith(cut):
                if flats[i][1] != m.label:
                    out.add(cut)
                    break
                i += 1
    return frozenset(out)


def _key(flat: str) -> str:
    return flat.lstrip(_LEADING)


_LEADING = " \t:;,.-=>|*#[](){}<!?'\"`"


def _without_cuts(m: Message, comp: Compiled, shared: frozenset[str]) -> Message:
    """`m` compiled again without its cuts in `shared` (when it has any)."""
    from kb.rules.catalogue.templates import compile_template
    from kb.util.record import replace

    if not any(_key(c) in shared for c in comp.cuts):
        return m
    comp = compile_template(m.template, _style(m.library, m.file), lambda c: _key(c) not in shared)
    return replace(m, pattern=comp.pattern, literal=comp.literal, usable=comp.usable)


def _load_yaml(path: Path, root: Path) -> tuple[Any, dict[Any, int]]:
    """The plain-YAML data of one catalogue file and the line of each key and item (as fast
    as PyYAML's own safe loader, since both run the C parser)."""
    from kb.util.yamlsrc import YamlSyntaxError, load_located

    text = _read_text(path, root)
    try:
        located = load_located(text)
    except YamlSyntaxError as exc:
        raise CatalogueError(f"{path}:{exc.line}: {exc}") from None
    return located.data, located.lines


def parse_vocabulary(root: Path) -> dict[str, str]:
    path = root / VOCABULARY
    if not os.path.lexists(path):
        return {}
    data = _load_yaml(path, root)[0] or {}
    words = data.get("symptoms", {}) if isinstance(data, dict) else {}
    return {str(k): str(v) for k, v in words.items()} if isinstance(words, dict) else {}


def load_raw(root: Path) -> dict[str, Any]:
    """Libraries, messages (rows in the order of FIELDS) and vocabulary as JSON-able data,
    compiled from the files (the cache is `load_packed`'s)."""
    return _compile_raw(root, content_key(root))


def _compile_raw(root: Path, key: str) -> dict[str, Any]:
    libraries: list[dict[str, Any]] = []
    parsed = [(path, *_parse(path, False, root)) for path in library_files(root)]
    shared = shared_cuts([pair for _path, _lib, pairs in parsed for pair in pairs])
    messages: list[list[Any]] = []  # rows in the order of FIELDS: compact and fast to read
    for path, lib, pairs in parsed:
        libraries.append({**vars(lib), "path": path.name})
        for m, comp in pairs:
            m = _without_cuts(m, comp, shared)
            messages.append([getattr(m, f) for f in FIELDS])
    return {
        "format": FORMAT,
        "key": key,
        "libraries": libraries,
        "messages": messages,
        "vocabulary": parse_vocabulary(root),
    }


def pack(raw: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """`load_raw`'s data as the cache holds it, and its rows: one JSON text a line (row i
    from `offsets[i]` to `offsets[i + 1]`), kept in a file of their own (`rows_file`) and
    read when needed; with the prefilter `literals` of the usable rows, in the order of
    their first row, and the rows of each (literal j's are `members[starts[j]:starts[j +
    1]]`). The three tables are arrays of unsigned ints as bytes (`array("I")`; read with
    `memoryview.cast("I")`): a list of 23,000 lists alone takes 10 ms to unpickle."""
    import json
    from array import array

    lines = [json.dumps(row).encode("ascii") + b"\n" for row in raw["messages"]]
    offsets = array("I", [0])
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    index: dict[str, list[int]] = {}
    for i, row in enumerate(raw["messages"]):
        if row[_USABLE] and row[_PATTERN]:
            index.setdefault(row[_LITERAL], []).append(i)
    starts, members = array("I", [0]), array("I")
    for rows in index.values():
        members.extend(rows)
        starts.append(len(members))
    out = {k: v for k, v in raw.items() if k != "messages"}
    out.update(offsets=offsets.tobytes(), literals=list(index))
    out.update(starts=starts.tobytes(), members=members.tobytes())
    return out, b"".join(lines)


def rows_file(key: str) -> str:
    """The file of the rows of the catalogue of content `key` (`pack`)."""
    from kb.util.paths import cache_file

    return cache_file(f"catalogue-{key}.rows")


def load_packed(root: str) -> dict[str, Any]:
    """`pack`'s data for the catalogue folder `root` (its rows in `rows_file(data["key"])`),
    from the cache when fresh."""
    from kb.util import cachepickle
    from kb.util.paths import cache_file

    fingerprint, racy = _fingerprint(root)
    key = _known_key(fingerprint)
    known = key is not None
    if key is None:
        from pathlib import Path

        key = content_key(Path(root))
    cached = cache_file(f"catalogue-{key}.pickle")
    loaded = cachepickle.load(cached, {})
    data: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    fresh = data.get("format") == FORMAT and data.get("key") == key
    if not fresh or _rows_size(key) != _last(data.get("offsets", b"")):
        from pathlib import Path

        from kb.util.atomicfile import write_atomic

        data, rows = pack(_compile_raw(Path(root), key))
        with contextlib.suppress(OSError):
            write_atomic(rows_file(key), rows)  # the rows first: the pickle says they are there
            cachepickle.save(cached, data)
        data["rows"] = rows  # where they could not be written, kept in memory
    if not known and not racy and os.path.exists(cached):
        _remember(fingerprint, key)
    return data


def _last(offsets: bytes) -> int:
    view = memoryview(offsets).cast("I")
    return int(view[-1]) if len(view) else 0


def _rows_size(key: str) -> int:
    """The size of the rows file of `key` when it is ours (a regular file of this user that
    nobody else may write), else -1."""
    try:
        st = os.stat(rows_file(key))
    except OSError:
        return -1
    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return st.st_size if S_ISREG(st.st_mode) and mine and not st.st_mode & 0o022 else -1


def _fingerprint(root: str) -> tuple[str, bool]:
    """(a hash of what `os.stat` says of every file `content_key` reads, whether one of them
    changed too recently for its stat to prove it unchanged later): every `*.yaml` of
    `root` and every module of this package, a superset (see `kb.diagnosis.compiled`)."""
    from kb.util.digest import blake2b
    from kb.util.statkey import listing, stamp_files

    h = blake2b(f"{FORMAT}\0{root}\0{_HERE}".encode(errors="surrogateescape"), digest_size=16)
    newest = stamp_files(h, [*listing(_HERE, (".py",)), *listing(root, (".yaml",))])
    return h.hexdigest(), newest > time.time_ns() - RACY_NS


def _stat_file(fingerprint: str) -> str:
    from kb.util.paths import cache_file

    return cache_file(f"catalogue-stat-{fingerprint}.key")


def _known_key(fingerprint: str) -> str | None:
    """The content key recorded for this fingerprint, if one was."""
    from kb.util.statkey import read_key

    return read_key(_stat_file(fingerprint))


def _remember(fingerprint: str, key: str) -> None:
    from kb.util.statkey import write_key

    write_key(_stat_file(fingerprint), key)
