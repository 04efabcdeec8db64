"""Merging what each release prints into one entry per message, with the first and last
release that prints it and its file at the newest of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gitsrc import BlobReader, files_at, release_tags

# what a reader finds in one file: (level, template, extra fields such as the topic)
Found = tuple[str, str, dict[str, str]]


@dataclass
class Seen:
    template: str
    level: str
    first: str
    last: str
    file: str
    extra: dict[str, str] = field(default_factory=dict)


class Merger:
    """Feed it releases oldest first; `entries()` gives one `Seen` per (level, template)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], Seen] = {}

    def add(self, version: str, level: str, template: str, file: str, **extra: str) -> None:
        key = (level, template)
        got = self._seen.get(key)
        if got is None:
            self._seen[key] = Seen(template, level, version, version, file, dict(extra))
        else:
            got.last, got.file = version, file
            got.extra.update(extra)

    def entries(self) -> list[Seen]:
        return sorted(self._seen.values(), key=lambda s: (s.file, s.level, s.template))


def span(first: str, last: str) -> str:
    return first if first == last else f"{first}-{last}"


def scan_releases(
    git_dir: Path,
    tag_pattern: str,
    minimum: str,
    keep: Callable[[str], bool],
    read: Callable[[str], list[Found]],
    paths: tuple[str, ...] = (),
) -> tuple[str, list[Seen]]:
    """Every message `read` finds in the files `keep` accepts, at every release tag from
    `minimum`, merged across releases."""
    tags = release_tags(git_dir, tag_pattern, minimum)
    if not tags:
        raise ValueError(f"{git_dir}: no tag matches {tag_pattern} from {minimum}")
    return scan_revisions(git_dir, tags, keep, read, paths)


def scan_revisions(
    git_dir: Path,
    revisions: list[tuple[str, str]],
    keep: Callable[[str], bool],
    read: Callable[[str], list[Found]],
    paths: tuple[str, ...] = (),
) -> tuple[str, list[Seen]]:
    """The same over (revision, version) pairs, oldest first; each file version (blob) is
    read once."""
    reader = BlobReader(git_dir)
    merger = Merger()
    per_blob: dict[str, list[Found]] = {}
    for rev, version in revisions:
        for path, sha in files_at(git_dir, rev, keep, paths):
            if sha not in per_blob:
                per_blob[sha] = read(reader.read(sha))
            for level, template, extra in per_blob[sha]:
                merger.add(version, level, template, path, **extra)
    reader.close()
    return span(revisions[0][1], revisions[-1][1]), merger.entries()
