"""The bytes of an input, before any decoding: how much is read at a time, which bytes never
occur in text, and the one-line error for an input that cannot be read. Shared by the
reader and the UTF-16/32 decoder, which sits below it."""

from __future__ import annotations

import errno
from typing import BinaryIO

CHUNK = 1 << 20
_BINARY_SAMPLE = 64 * 1024

# bytes that never occur in text (NUL is left out: truncated logs start with NUL runs)
_CONTROL = (
    bytes(range(1, 9)) + bytes([0x0E, 0x0F]) + bytes(range(0x10, 0x1B)) + b"\x1c\x1d\x1e\x1f\x7f"
)


class InputError(Exception):
    """An input that cannot be diagnosed; the message is one line for the user."""


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.EACCES:
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "is a directory (give the log files in it)"
    return exc.strerror or str(exc)


def _read(stream: BinaryIO, n: int, name: str) -> bytes:
    try:
        return stream.read(n)
    except Exception as exc:
        import gzip  # only after an error: a plain log never imports gzip (only it raises these)
        import zlib

        if isinstance(exc, gzip.BadGzipFile | EOFError | zlib.error):
            raise InputError(f"{name}: damaged gzip data ({exc})") from None
        if isinstance(exc, OSError):
            raise InputError(f"{name}: {_os_reason(exc)}") from None
        raise
