"""Turning a log in UTF-16 or UTF-32 into the UTF-8 bytes the reader works on.

Windows PowerShell's `>` writes UTF-16LE with a byte-order mark, and some Windows tools
write UTF-16 or UTF-32 without one. Read as UTF-8, such a log is NUL bytes between
letters: no rule matches and the diagnosis says "no known problem" for a failed run.
So the first bytes of every input (after gunzip) are looked at: a byte-order mark, or
NULs at every second (fourth) byte while the other bytes are not NUL, names the
encoding, and the stream is transcoded as it is read, a block at a time. A UTF-8 mark
is dropped. Input that is neither text in one of these encodings nor UTF-8 text
(random bytes, a compressed archive) is refused with a one-line error.
"""

from __future__ import annotations

import codecs
from typing import Any, BinaryIO

from kb.diagnosis.rawbytes import _BINARY_SAMPLE, _CONTROL, CHUNK, InputError, _read

_BOMS = (  # longest first: a UTF-32LE mark starts like a UTF-16LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BAD_CATEGORIES = {"Cs", "Co", "Cn", "Cc"}  # surrogates, private use, unassigned, controls


def sniff(head: bytes) -> tuple[str, int]:
    """(codec, length of its byte-order mark) for the first bytes of an input."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec, len(bom)
    n = len(head) - len(head) % 4
    if n >= 4:
        lanes = [_nul_share(head[i:n:4]) for i in range(4)]
        if min(lanes[1:]) > 0.9 and lanes[0] < 0.1:
            return "utf-32-le", 0
        if min(lanes[:3]) > 0.9 and lanes[3] < 0.1:
            return "utf-32-be", 0
    n = len(head) - len(head) % 2
    if n >= 2:
        even, odd = _nul_share(head[0:n:2]), _nul_share(head[1:n:2])
        # ASCII text in UTF-16 has a NUL in every other byte and none between them;
        # a run of NULs (a log truncated in place) has them at both
        if odd > 0.3 and even < 0.02:
            return "utf-16-le", 0
        if even > 0.3 and odd < 0.02:
            return "utf-16-be", 0
    return "utf-8", 0


def _nul_share(lane: bytes) -> float:
    return lane.count(0) / len(lane) if lane else 0.0


def as_utf8(stream: BinaryIO, name: str) -> BinaryIO:
    """`stream` as UTF-8 bytes, whatever Unicode encoding it is in; raise `InputError`
    (and close the stream) for data that is no text in any of them."""
    try:
        head = _read(stream, _BINARY_SAMPLE, name)
        codec, bom = sniff(head)
        head = head[bom:]
        if _garbage(head, codec):
            raise InputError(f"{name}: binary data, not a text log")
    except InputError:
        if name != "-":
            stream.close()
        raise
    replay = _Replay(head, stream)
    if codec == "utf-8":
        return replay  # type: ignore[return-value]
    return _Transcoded(replay, codec)  # type: ignore[return-value]


def _garbage(head: bytes, codec: str) -> bool:
    """Whether the first bytes are no text: for UTF-8, mostly invalid sequences among
    control bytes (random data; text in a legacy encoding such as GBK has no control
    bytes); for UTF-16/32, many characters that text never holds."""
    if codec == "utf-8":
        controls = len(head) - len(head.translate(None, _CONTROL))
        if controls <= 0.03 * len(head) or len(head.strip(b"\0")) < 32:
            return False
        text = head.decode(codec, "replace")
        return text.count("\ufffd") > 0.3 * len(text)
    text = head[:16384].decode(codec, "replace")
    if len(text.strip("\0")) < 32:
        return False
    import unicodedata  # here: only a UTF-16/32 log needs it

    bad = sum(
        1
        for ch in text
        if ch == "\ufffd" or (unicodedata.category(ch) in _BAD_CATEGORIES and ch not in "\t\n\r")
    )
    return bad > 0.1 * len(text)


class _Replay:
    """A stream whose first bytes were read to look at them: they come back first."""

    def __init__(self, head: bytes, inner: BinaryIO) -> None:
        self._head, self._inner = head, inner
        # what `tell()` should be asked for progress: the file (the compressed one for gzip)
        self.fileobj: Any = getattr(inner, "fileobj", None) or inner

    def read(self, n: int | None = -1) -> bytes:
        head = self._head
        if not head:
            return self._inner.read(-1 if n is None else n)
        if n is None or n < 0:
            self._head = b""
            return head + self._inner.read()
        if len(head) >= n:
            self._head = head[n:]
            return head[:n]
        self._head = b""
        return head + self._inner.read(n - len(head))

    def close(self) -> None:
        self._inner.close()


class _Transcoded:
    """A UTF-16/UTF-32 stream read as UTF-8, decoded a block at a time (never whole);
    invalid code units become U+FFFD, as invalid UTF-8 does."""

    def __init__(self, inner: _Replay, codec: str) -> None:
        self._inner = inner
        self._decoder = codecs.getincrementaldecoder(codec)("replace")
        self._eof = False
        self.fileobj: Any = inner.fileobj

    def read(self, n: int | None = -1) -> bytes:
        size = n if n is not None and n > 0 else CHUNK
        while not self._eof:
            raw = self._inner.read(size)
            self._eof = not raw
            text = self._decoder.decode(raw, final=self._eof)
            if text:
                return text.encode("utf-8", "surrogatepass")
        return b""

    def close(self) -> None:
        self._inner.close()
