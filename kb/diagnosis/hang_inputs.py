"""Hang artefacts among the inputs: Flight Recorder dump folders and files, RAS reports.

`diagnose run.log fr_dumps/` names a folder: its Flight Recorder dumps (files named
`..._<rank>` holding a pickle or JSON dump, two folders deep at most) are read together,
its other files are diagnosed as logs; a folder without dumps is refused as before. Dumps given as files are grouped the same way. A text that holds
an `ncclras` report (a file, standard input is left alone, or a pasted text) is
scanned as a log as usual and, beside it, its statements are. The statements
(`kb.diagnosis.hangs`) become one more input, named after the dumps or the report, whose lines
the hang signatures of `rules/nccl/nccl-timeout-hang.yaml` judge.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from kb.diagnosis import rawbytes, reader
from kb.diagnosis.hangs import markers  # the readers (flightrec, ras): only for an artefact

Opener = Callable[[], BinaryIO]
Input = tuple[str, Any]
RAS_SCAN_BYTES = 8 * 1024 * 1024  # a report pasted into a larger log is found in its first 8 MB
_FOLDER_DEPTH = 2


def expand_paths(names: list[str], opener: Callable[[str], Opener]) -> list[Input]:
    """The inputs for `names`: logs as `opener` opens them, dumps and RAS reports as
    their statements."""
    inputs: list[Input] = []
    dumps: list[str] = []
    folders: list[str] = []
    for name in names:
        logs, found = _folder(name) if name != "-" and os.path.isdir(name) else ([], [])
        if found:  # a folder without dumps stays an error: "is a directory"
            folders.append(name)
            dumps.extend(found)
            for log in logs:
                inputs.extend(_log(log, opener))
        elif name != "-" and markers.sniff(name):
            dumps.append(name)
        else:
            inputs.extend(_log(name, opener))
    if dumps:
        inputs.extend(_flight_recorder(dumps, folders))
    return inputs


def _log(name: str, opener: Callable[[str], Opener]) -> list[Input]:
    """A log, and the statements of the RAS report it holds, if any."""
    out: list[Input] = [(reader.display_name(name), opener(name))]
    text = _ras_text(name)
    if text:
        from kb.diagnosis.hangs import ras

        out.append(_statements(f"{name} [nccl-ras]", ras.statements(text)))
    return out


def from_text(text: str, name: str) -> list[Input]:
    """The statements of a pasted text that holds an `ncclras` report (none otherwise)."""
    if not markers.looks_like_ras(text):
        return []
    from kb.diagnosis.hangs import ras

    return [_statements(f"{name} [nccl-ras]", ras.statements(text))]


def _folder(path: str) -> tuple[list[str], list[str]]:
    logs: list[str] = []
    dumps: list[str] = []
    base = path.rstrip(os.sep).count(os.sep)
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if root.rstrip(os.sep).count(os.sep) - base >= _FOLDER_DEPTH:
            dirs[:] = []
        for f in sorted(files):
            if f.startswith(".") or f.endswith(".tmp"):
                continue
            p = os.path.join(root, f)
            (dumps if markers.sniff(p) else logs).append(p)
    return logs, dumps


def _flight_recorder(paths: list[str], folders: list[str]) -> list[Input]:
    """The dumps' statements as one input, and one failing input per unreadable dump
    (its rank exists, so it is not taken for dead)."""
    from kb.diagnosis.hangs import flightrec

    read, errors = flightrec.read_all(paths)
    unread = {r for r in map(flightrec.rank_of, paths) if r is not None} - {d.rank for d in read}
    lines = flightrec.analyze(read, unreadable=unread)
    where = folders[0] if len(folders) == 1 else os.path.dirname(paths[0]) or "."
    name = f"{where.rstrip(os.sep)}{os.sep} [flight-recorder, {len(read)} ranks]"
    out = [_statements(name, lines)] if read else []
    out.extend((path, _failing(message)) for path, message in errors)
    return out


def _ras_text(name: str) -> str:
    if name == "-":
        return ""
    try:
        if not _has_marker(name):
            return ""
        stream = reader.open_input(name)
        try:
            data = stream.read(RAS_SCAN_BYTES)
        finally:
            stream.close()
    except (rawbytes.InputError, OSError, EOFError, ValueError):
        return ""  # the log's own reading reports it
    except Exception as exc:
        if not _zlib_error(exc):
            raise
        return ""
    text = data.decode("utf-8", "replace")
    return text if markers.looks_like_ras(text) else ""


def _zlib_error(exc: Exception) -> bool:
    """Whether `exc` is a `zlib.error` (a damaged .gz), without importing zlib: only the
    gzip reader, which imports it, can raise one, and a plain log never needs it."""
    zlib = sys.modules.get("zlib")
    return zlib is not None and isinstance(exc, zlib.error)


# ASCII: found in the bytes as in the text
_MARKERS_B = tuple(m.encode() for m in markers.RAS_MARKERS)


def _has_marker(name: str) -> bool:
    """Whether a RAS report's marker is in the first `RAS_SCAN_BYTES`, read a megabyte at
    a time: the text of 8 MB (up to 32 MB as a str) is built only for a report."""
    reach = max(map(len, _MARKERS_B)) - 1
    stream = reader.open_input(name)
    try:
        left, tail = RAS_SCAN_BYTES, b""
        while left > 0:
            piece = stream.read(min(rawbytes.CHUNK, left))
            if not piece:
                return False
            left -= len(piece)
            window = tail + piece
            if any(m in window for m in _MARKERS_B):
                return True
            tail = window[-reach:]
        return False
    finally:
        stream.close()


def _statements(name: str, lines: list[str]) -> Input:
    text = "".join(line + "\n" for line in lines)
    return (name, lambda: reader.text_stream(text))


def _failing(message: str) -> Opener:
    def open_() -> BinaryIO:
        raise rawbytes.InputError(message)

    return open_
