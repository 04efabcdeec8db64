"""Error-code string tables: `case hipErrorX: return "text";` switch functions such as
HIP's `ihipGetErrorString`, which returns CUDA's `cudaGetErrorString` texts for the CUDA
error codes HIP mirrors (ROCm/clr, hipamd/src/hip_error.cpp), at every release tag."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from cprintf import _decode
from gitsrc import BlobReader, files_at, release_tags
from merge import Merger, Seen, span

_CASE = re.compile(r"case\s+(\w+)\s*:\s*(?:\n\s*)?return\s+((?:\"(?:[^\"\\]|\\.)*\"\s*)+);")
_FUNC = re.compile(r"GetErrorString\s*\([^)]*\)\s*\{")


def strings(text: str) -> Iterator[tuple[str, str]]:
    """(code, text) of the `case ...: return "..."` lines inside every *GetErrorString
    function of `text`."""
    for fm in _FUNC.finditer(text):
        depth, i = 1, fm.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        for m in _CASE.finditer(text, fm.end(), i):
            parts = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(2))
            yield m.group(1), "".join(_decode(p) for p in parts)


def scan_hip(git_dir: Path, path: str = "hipamd/src/hip_error.cpp") -> tuple[str, list[Seen]]:
    tags = release_tags(git_dir, r"rocm-(\d+\.\d+\.\d+)", "5.6.0")
    if not tags:
        raise ValueError(f"{git_dir}: no rocm-X.Y.Z tag")
    reader = BlobReader(git_dir)
    merger = Merger()
    for tag, version in tags:
        for file, sha in files_at(git_dir, tag, lambda p: p == path, (path,)):
            for _code, text in strings(reader.read(sha)):
                if "ROCm" not in text:  # HIP's own wording, never CUDA's
                    merger.add(version, "error", text, file)
    reader.close()
    return span(tags[0][1], tags[-1][1]), merger.entries()
