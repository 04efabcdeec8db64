"""Open MPI / PRRTE / PMIx show_help files (`help-*.txt`): each `[topic]` section is one
message, printed whole by `opal_show_help(file, topic, ...)` with its `%s`/`%d` filled."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from merge import Found, Seen, scan_releases

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
    """Every show_help topic of the `help-*.txt` files at every release tag."""
    keep = re.compile(r"(^|/)help-[^/]*\.txt$").search

    def read(text: str) -> list[Found]:
        return [("help", body, {"topic": topic}) for topic, body in sections(text)]

    return scan_releases(git_dir, tag_pattern, minimum, lambda p: bool(keep(p)), read)
