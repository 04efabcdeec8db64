"""Open MPI / PRRTE / PMIx show_help files (`help-*.txt`): each `[topic]` section is one
message, printed whole by `opal_show_help(file, topic, ...)` with its `%s`/`%d` filled."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from gitsrc import BlobReader, files_at, release_tags
from merge import Merger, Seen, span

_TOPIC = re.compile(r"^\[([^\]\n]+)\]\s*$")


def sections(text: str) -> Iterator[tuple[str, str]]:
    """(topic, text) of every section; `#` lines are comments, several topics in a row
    share the text that follows them."""
    topics: list[str] = []
    body: list[str] = []

    def flush() -> Iterator[tuple[str, str]]:
        msg = "\n".join(body).strip("\n")
        if topics and msg.strip():
            for t in topics:
                yield t, msg

    for line in text.splitlines():
        m = _TOPIC.match(line)
        if m:
            if body:
                yield from flush()
                topics, body = [], []
            topics.append(m.group(1).strip())
            continue
        if line.startswith("#"):
            continue
        if topics:
            body.append(line.rstrip())
    yield from flush()


def scan(
    git_dir: Path, tag_pattern: str = r"v(\d+\.\d+\.\d+)", minimum: str = "3.0.0"
) -> tuple[str, list[Seen]]:
    tags = release_tags(git_dir, tag_pattern, minimum)
    if not tags:
        raise ValueError(f"{git_dir}: no tag matches {tag_pattern} from {minimum}")
    reader = BlobReader(git_dir)
    merger = Merger()
    per_blob: dict[str, list[tuple[str, str]]] = {}
    keep = re.compile(r"(^|/)help-[^/]*\.txt$").search
    for tag, version in tags:
        for path, sha in files_at(git_dir, tag, lambda p: bool(keep(p))):
            if sha not in per_blob:
                per_blob[sha] = list(sections(reader.read(sha)))
            for topic, text in per_blob[sha]:
                merger.add(version, "help", text, path, topic=topic)
    reader.close()
    return span(tags[0][1], tags[-1][1]), merger.entries()
