"""Reading a library's source at every release tag from a bare git mirror, fast: the
files of each tag are listed with `git ls-tree`, and each distinct blob is read once
(through one `git cat-file --batch`) however many tags hold it."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


def release_tags(git_dir: Path, pattern: str, minimum: str = "") -> list[tuple[str, str]]:
    """(tag, version) for every tag whose name fully matches `pattern` (group 1: the
    version), from `minimum` on, oldest first; one tag per version (the last respin)."""
    rx = re.compile(pattern)
    best: dict[str, str] = {}
    for tag in _git(git_dir, "tag").split():
        m = rx.fullmatch(tag)
        if m and version_key(m.group(1)) >= version_key(minimum or "0"):
            best[m.group(1)] = max(best.get(m.group(1), ""), tag, key=version_key)
    return sorted(((t, v) for v, t in best.items()), key=lambda tv: version_key(tv[1]))


class BlobReader:
    """Blob contents by id, each read from git once."""

    def __init__(self, git_dir: Path) -> None:
        self._proc = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._cache: dict[str, str] = {}

    def read(self, sha: str) -> str:
        if sha not in self._cache:
            assert self._proc.stdin and self._proc.stdout
            self._proc.stdin.write(sha.encode() + b"\n")
            self._proc.stdin.flush()
            header = self._proc.stdout.readline().split()
            size = int(header[2]) if len(header) == 3 else 0
            data = self._proc.stdout.read(size) if size else b""
            self._proc.stdout.read(1)
            self._cache[sha] = data.decode("utf-8", "replace")
        return self._cache[sha]

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait()


def files_at(
    git_dir: Path, tag: str, keep: Callable[[str], bool], paths: tuple[str, ...] = ()
) -> Iterator[tuple[str, str]]:
    """(path, blob id) of the files of `tag` under `paths` that `keep` accepts."""
    out = _git(git_dir, "ls-tree", "-r", tag, "--", *paths)
    for row in out.splitlines():
        meta, _, path = row.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and keep(path):
            yield path, parts[2]


def yearly_snapshots(git_dir: Path, first_year: int, ref: str = "HEAD") -> list[tuple[str, str]]:
    """(commit, year) of the last commit of each year on `ref`, for a library without
    release tags (Gloo): its "versions" are the years whose code prints a message."""
    out: list[tuple[str, str]] = []
    last = _git(git_dir, "log", "-1", "--format=%cd", "--date=format:%Y", ref).strip()
    for year in range(first_year, int(last) + 1):
        rev = _git(git_dir, "rev-list", "-1", f"--before={year}-12-31T23:59:59", ref).strip()
        if rev and (not out or out[-1][0] != rev):
            out.append((rev, str(year)))
    return out
