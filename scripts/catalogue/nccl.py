"""NCCL (and RCCL, its HIP port): every `WARN(fmt, ...)` and `INFO(flags, fmt, ...)` of
src/ at every release tag."""

from __future__ import annotations

from pathlib import Path

from cprintf import calls
from gitsrc import BlobReader, files_at, release_tags
from merge import Merger, Seen, span

MACROS = {"WARN": 0, "INFO": 1}
LEVELS = {"WARN": "warn", "INFO": "info"}
SUFFIXES = (".cc", ".cu", ".h", ".c", ".cpp", ".hpp", ".cuh")


def scan(
    git_dir: Path, tag_pattern: str = r"v(\d+\.\d+\.\d+)-\d+", minimum: str = "2.4.8"
) -> tuple[str, list[Seen]]:
    tags = release_tags(git_dir, tag_pattern, minimum)
    reader = BlobReader(git_dir)
    merger = Merger()
    per_blob: dict[str, list[tuple[str, str]]] = {}
    for tag, version in tags:
        for path, sha in files_at(git_dir, tag, lambda p: p.endswith(SUFFIXES), ("src",)):
            if sha not in per_blob:
                text = reader.read(sha)
                per_blob[sha] = [(LEVELS[c.macro], c.template) for c in calls(text, MACROS)]
            for level, template in dict.fromkeys(per_blob[sha]):
                merger.add(version, level, template, path)
    reader.close()
    return span(tags[0][1], tags[-1][1]), merger.entries()
