"""What the per-library readers (`*_src.py`) share: reading each blob of a release once,
sampling release lines, C switch tables, `+`-joined message expressions, and the wheel
layout and catalogue writing of their `main`.

Why: each reader was written for one library, and the same loops came back in each with
other names; one definition each keeps them reading sources the same way (a fix to one is
a fix to all), and keeps each reader down to what its library does differently.
"""

from __future__ import annotations

import argparse
import re
import sys
import zipfile
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path

from cprintf import _decode
from gitsrc import BlobReader, version_key
from merge import Found, Merger, Seen

# ------------------------------------------------------------------ releases and blobs


def add_files(
    merger: Merger,
    reader: BlobReader,
    files: Iterable[tuple[str, str]],
    version: str,
    read: Callable[[str, str], list[Found]],
    done: dict[Hashable, list[Found]],
    key: Callable[[str, str], Hashable] = lambda path, sha: sha,
    prefix: str = "",
) -> None:
    """Merge what `read(path, text)` finds in each (path, blob) of one release; a blob is
    read once across releases (`done`, by `key`: the blob alone unless its path changes
    what is read), and its file named `prefix + path` (a submodule's folder)."""
    for path, sha in files:
        at = key(path, sha)
        if at not in done:
            done[at] = read(path, reader.read(sha))
        for level, template, extra in done[at]:
            merger.add(version, level, template, prefix + path, **extra)


def first_and_last(tags: Iterable[tuple[str, str]], depth: int) -> list[tuple[str, str]]:
    """The first and the last (tag, version) of each release line, oldest first: a line is
    the versions that share their first `depth` numbers (a minor: 2, a major or a driver
    branch: 1); its later releases only backport fixes, so its ends bound what it prints."""
    lines: dict[tuple[int, ...], list[tuple[str, str]]] = {}
    for tag, version in sorted(tags, key=lambda tv: version_key(tv[1])):
        lines.setdefault(version_key(version)[:depth], []).append((tag, version))
    ends = [tv for rows in lines.values() for tv in dict.fromkeys((rows[0], rows[-1]))]
    return sorted(ends, key=lambda tv: version_key(tv[1]))


# -------------------------------------------------------------------------- C and C++

_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")
# `case NAME: return "text" "more";` in a function that maps codes to their texts
_CASE_RETURN = re.compile(r"case\s+(\w+)\s*:\s*return\s+((?:\"(?:[^\"\\]|\\.)*\"\s*)+);")


def literals_text(code: str) -> str:
    """The text of the adjacent C string literals in `code`, escapes decoded."""
    return "".join(_decode(p) for p in _LITERAL.findall(code))


def closing_brace(text: str, i: int) -> int:
    """Where the `}` closing the block opened just before `i` stands (the end of `text`
    when it never closes)."""
    depth = 1
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def switch_returns(text: str, head: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """(case, text) of each `case X: return "...";` in the functions whose `{` `head` ends
    with (`PMIx_Error_string`, nvJPEG's `ErrorString`): the text a status code prints."""
    for fm in head.finditer(text):
        end = closing_brace(text, fm.end()) + 1
        for m in _CASE_RETURN.finditer(text, fm.end(), end):
            yield m.group(1), literals_text(m.group(2))


def split_plus(expr: str, raw: str = "") -> list[str]:
    """`a + "b" + f(x, y)` as its top-level pieces (C++'s `++` is no `+`); quotes `"` and
    `'` hold escapes, the quotes in `raw` (Go's backtick) none."""
    pieces, depth, start, j = [], 0, 0, 0
    while j < len(expr):
        ch = expr[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch in "\"'" or ch in raw:
            k = j + 1
            while k < len(expr) and expr[k] != ch:
                k += 2 if expr[k] == "\\" and ch not in raw else 1
            j = k
        elif ch == "+" and depth == 0 and expr[j + 1 : j + 2] != "+" and expr[j - 1 : j] != "+":
            pieces.append(expr[start:j])
            start = j + 1
        j += 1
    pieces.append(expr[start:])
    return pieces


# ------------------------------------------------------------------------ wheels, main


def wheel_repo_path(member: str, package: str, include: str, python: str) -> str | None:
    """The repository path of a wheel member: a header it ships,
    `<package>/include/<include>/x.h`, is `<include>/x.h`; a module `<package>/x.py` is
    `<python><package>/x.py`; anything else is no file of the sources (None)."""
    headers = f"{package}/include/"
    if member.startswith(f"{headers}{include}/"):
        return member[len(headers) :]
    if member.startswith(f"{package}/") and member.endswith(".py"):
        return python + member
    return None


def wheel_name_version(wheel: Path, pattern: str, what: str) -> str:
    """The version a released wheel's name gives (`pattern`'s group 1); a name that is no
    such wheel's is a ValueError that says `what` it should have been."""
    m = re.match(pattern, wheel.name)
    if not m:
        raise ValueError(f"{wheel}: not {what}")
    return m.group(1)


def lay_out_wheels(
    folders: list[Path],
    glob: str,
    version: Callable[[Path], str],
    tree: Callable[[Path, Path], int],
    src_dir: Path,
) -> list[str]:
    """Each wheel of `folders` that `glob` names, oldest first, laid out by `tree` as its
    version's folder of `src_dir` (as `dirscan` reads them); the versions."""
    found = [w for d in folders for w in d.glob(glob)]
    wheels = sorted(found, key=lambda w: version_key(version(w)))
    if not wheels:
        raise ValueError(f"{' '.join(map(str, folders))}: no {glob}")
    for wheel in wheels:
        n = tree(wheel, src_dir / version(wheel))
        print(f"{wheel.name}: {n} files")
    return [version(w) for w in wheels]


def wheels_main(
    argv: list[str] | None,
    doc: str | None,
    name: str,
    glob: str,
    version: Callable[[Path], str],
    tree: Callable[[Path, Path], int],
    then: Callable[[Path, list[str]], None],
) -> int:
    """The `main` of a reader of released wheels (`name`): `--wheels DIR [DIR ...] --src-dir
    DIR`, the wheels laid out (`lay_out_wheels`), then `then(src_dir, versions)`; a
    problem is one line on stderr and exit status 1."""
    ap = argparse.ArgumentParser(description=(doc or name).splitlines()[0])
    ap.add_argument("--wheels", type=Path, nargs="+", required=True, help=f"folders of {glob}")
    ap.add_argument("--src-dir", type=Path, required=True, help="labelled folders (dirscan)")
    args = ap.parse_args(argv)
    try:
        then(args.src_dir, lay_out_wheels(args.wheels, glob, version, tree, args.src_dir))
    except (LookupError, ValueError, OSError, zipfile.BadZipFile) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    return 0


def write_versions(src_dir: Path, versions: list[str]) -> None:
    """`src_dir/VERSIONS`, the releases laid out, oldest first (dirscan's listing)."""
    (src_dir / "VERSIONS").write_text("".join(f"{v}\n" for v in versions), encoding="utf-8")


def write_catalogue(
    library: str, scanned: tuple[str, list[Seen]], source: str | None = None
) -> None:
    """Write catalogue/<library>.yaml from a scan, classified by catalogue/classify.yaml
    (build.py's emit), and say how many messages it holds; the source named is build.py's
    for a library read file by file, unless given."""
    import build
    from classify import Table

    versions, seen = scanned
    source = build.DIR_SOURCES[library] if source is None else source
    n = build.emit(library, source, versions, seen, Table(build.CATALOGUE / "classify.yaml"))
    print(f"{library}: {n} messages, versions {versions}")
