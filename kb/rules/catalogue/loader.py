"""Reading catalogue/*.yaml into `Message`s, cached as JSON by the files' content.

The catalogue holds thousands of entries; PyYAML alone takes about a second for them, so
the first load compiles every template and writes the result under `kb.util.paths.cache_dir()`
named by a hash of the files and of these modules; later loads read the JSON.

The folder can be anyone's (`$DLPERF_HELP_CATALOGUE`), so it is read like the rules folder:
regular files inside it only (`kb.util.rulefiles`: a FIFO would hang every command, since the
rules' cache key hashes the catalogue) and plain YAML only (`kb.util.yamlsrc`: no anchors,
aliases or tags, so a 400-byte alias bomb is a `file:line` error, not gigabytes).
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kb.rules.catalogue.model import FIELDS, Library, Message
from kb.rules.catalogue.templates import Compiled, compile_template
from kb.util.rulefiles import RuleFileError, read_rule_bytes

FORMAT = "dlperf-catalogue/5"  # 3: patterns match a line cut after a value; 4: and without a Python exception class; 5: a template of generic words only is no matcher
VOCABULARY = "symptoms.yaml"
CLASSIFY = "classify.yaml"
NOT_LIBRARIES = {VOCABULARY, CLASSIFY}
MAX_CATALOGUE_BYTES = 8 << 20  # nccl.yaml, the largest, is about 400 KB


class CatalogueError(ValueError):
    """A catalogue file that cannot be read: `file:line: what`."""


def library_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*.yaml") if p.name not in NOT_LIBRARIES)


def content_key(root: Path) -> str:
    """A hash of the catalogue files and of the modules that compile them."""
    h = hashlib.blake2b(FORMAT.encode(), digest_size=16)
    here = Path(__file__).parent
    for src in sorted(here.glob("*.py")):
        h.update(src.read_bytes())
    for path in [*library_files(root), root / VOCABULARY]:
        h.update(path.name.encode("utf-8", "surrogateescape") + b"\0")
        try:  # never `read_bytes`: a FIFO would block (the error is the parser's to tell)
            h.update(read_rule_bytes(path, root, MAX_CATALOGUE_BYTES))
        except RuleFileError as exc:
            h.update(b"\0unreadable " + str(exc).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _read_text(path: Path, root: Path) -> str:
    """A catalogue file's text; `CatalogueError` (one line, naming it) for anything else."""
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
    if not any(_key(c) in shared for c in comp.cuts):
        return m
    comp = compile_template(m.template, _style(m.library, m.file), lambda c: _key(c) not in shared)
    return dataclasses.replace(m, pattern=comp.pattern, literal=comp.literal, usable=comp.usable)


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
    """Libraries, messages and vocabulary as JSON-able data, from the cache when fresh."""
    from kb.util.paths import cache_dir

    key = content_key(root)
    cached = cache_dir() / f"catalogue-{key}.json"
    with contextlib.suppress(OSError, ValueError):
        data: dict[str, Any] = json.loads(cached.read_text(encoding="utf-8"))
        if data.get("format") == FORMAT and data.get("key") == key:
            return data
    libraries: list[dict[str, Any]] = []
    parsed = [(path, *_parse(path, False, root)) for path in library_files(root)]
    shared = shared_cuts([pair for _path, _lib, pairs in parsed for pair in pairs])
    messages: list[list[Any]] = []  # rows in the order of FIELDS: compact and fast to read
    for path, lib, pairs in parsed:
        libraries.append({**vars(lib), "path": path.name})
        for m, comp in pairs:
            m = _without_cuts(m, comp, shared)
            messages.append([getattr(m, f) for f in FIELDS])
    data = {
        "format": FORMAT,
        "key": key,
        "libraries": libraries,
        "messages": messages,
        "vocabulary": parse_vocabulary(root),
    }
    from kb.util.atomicfile import write_atomic

    with contextlib.suppress(OSError):
        write_atomic(cached, json.dumps(data).encode("utf-8"))
    return data
