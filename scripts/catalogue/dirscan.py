"""A library read as files rather than a git mirror: `<dir>/<version>/<path in the
repository>`, one folder per release or commit that was read (as the search tools'
`read_file` gives them, file by file), listed oldest first in `<dir>/VERSIONS` (one
label a line; a `#` starts a comment). Python files go through `pyextract`, C/C++ files
through `cppmsg`; each message keeps the first and last label that prints it."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import cppmsg
import pyextract
from merge import Merger, Seen, span

CPP = (".cc", ".cpp", ".cu", ".h", ".hpp", ".cuh")


def labels(src: Path) -> list[str]:
    listing = src / "VERSIONS"
    if not listing.is_file():
        raise ValueError(f"{listing}: missing (one version label a line, oldest first)")
    out = []
    for n, raw in enumerate(listing.read_text(encoding="utf-8").splitlines(), 1):
        label = raw.split("#", 1)[0].strip()
        if not label:
            continue
        if not (src / label).is_dir():
            raise ValueError(f"{listing}:{n}: no folder {src / label}")
        out.append(label)
    if not out:
        raise ValueError(f"{listing}: lists no version")
    return out


def file_messages(rel: str, text: str) -> list[tuple[str, str]]:
    """(level, template) of one file: Python through `pyextract`, C/C++ through `cppmsg`."""
    if rel.endswith(".py"):
        found = [(m.level, m.template) for m in pyextract.messages(text)]
    elif rel.endswith(CPP):
        found = [(m.level, m.template) for m in cppmsg.messages(text)]
    else:
        found = []
    return list(dict.fromkeys(found))


def scan(
    src: Path,
    wanted: Callable[[str], bool] = lambda rel: True,
    messages: Callable[[str, str], list[tuple[str, str]]] = file_messages,
) -> tuple[str, list[Seen]]:
    """Every message of every file (`wanted`, read by `messages`) under each version's
    folder; a library with its own reader (Paddle's, DALI's wheels) passes both."""
    order = labels(src)
    merger = Merger()
    for label in order:
        root = src / label
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            if not wanted(rel):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for level, template in messages(rel, text):
                merger.add(label, level, template, rel)
    return span(order[0], order[-1]), merger.entries()


def wheel_tree(
    wheel: Path,
    out: Path,
    repo_path: Callable[[str], str | None],
    wanted: Callable[[str], bool],
) -> int:
    """Write the files of a released wheel that `wanted` keeps under `out`, each at the
    path `repo_path` gives it in the repository (None: not a file of the sources), so a
    wheel reads as one version's folder; how many were written."""
    n = 0
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            path = repo_path(member)
            if path is None or not wanted(path):
                continue
            target = out / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(member))
            n += 1
    return n
