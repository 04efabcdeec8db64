"""Reading logs as a stream of large blocks of whole lines, whatever the input holds.

A log may be gigabytes, gzip-compressed (whatever its name), standard input, full of
ANSI colour codes and CRLF line ends, invalid UTF-8, or one 100 MB line without a
newline. The diagnosis never holds a whole log: it reads blocks of about
`CHUNK` bytes that end at a line end. Here is also what a *line* is, for the fast and
the reference paths alike: the bytes up to `\\n`, ANSI codes removed, trailing `\\r`
removed, cut to its first `MAX_LINE` bytes, decoded as UTF-8 with invalid bytes
replaced. Inputs that cannot be read raise `InputError` with a one-line message.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator
from typing import BinaryIO

from kb.diagnosis.decoding import as_utf8  # UTF-16/32 logs, after gunzip
from kb.diagnosis.rawbytes import _BINARY_SAMPLE, _CONTROL, CHUNK, InputError, _os_reason, _read
from kb.util.lazyre import LazyPattern
from kb.util.record import record
from kb.util.textsafe import ESCAPES_B

MAX_LINE = 64 * 1024

# escape sequences (CSI, OSC/DCS/APC strings ended by BEL or ST, charset and two-byte
# escapes), removed before matching; linear: `kb.util.textsafe` says why
_ANSI_B = ESCAPES_B
_CR_B = LazyPattern(rb"\r+\n")


@record()  # a dataclass, without compiling one at every start
class Block:
    """Whole lines (each ending in `\\n`), cleaned of ANSI codes and `\\r` line ends:
    the bytes `data[lo:hi]` (a region of the bytes read, so that no megabyte is copied)."""

    data: bytes
    lo: int
    hi: int
    first_line: int  # the 1-based number of the block's first line
    lines: int  # how many lines it holds
    raw_bytes: int  # input bytes it stands for

    def __init__(
        self, data: bytes, lo: int, hi: int, first_line: int, lines: int, raw_bytes: int
    ) -> None:
        self.data = data
        self.lo = lo
        self.hi = hi
        self.first_line = first_line
        self.lines = lines
        self.raw_bytes = raw_bytes

    def view(self) -> memoryview:
        return memoryview(self.data)[self.lo : self.hi]


def _block(data: bytes, lo: int, hi: int, line_no: int, raw: int) -> Block:
    """A block over `data[lo:hi]`, cleaned (copied) only when it holds ANSI codes or CRs."""
    if data.find(b"\x1b", lo, hi) >= 0 or data.find(b"\r", lo, hi) >= 0:
        data = _clean(data[lo:hi])
        lo, hi = 0, len(data)
    return Block(data, lo, hi, line_no, data.count(b"\n", lo, hi), raw)


def display_name(name: str) -> str:
    return "-" if name == "-" else name


def open_input(name: str) -> BinaryIO:
    """A binary stream of UTF-8 over a file, a `.gz` file (by content, not name) or stdin
    (`-`), in UTF-8, UTF-16 or UTF-32 (by byte-order mark or NUL pattern)."""
    if name == "-":
        stream: BinaryIO = sys.stdin.buffer
    else:
        try:
            if os.path.isdir(name):
                raise InputError(f"{name}: is a directory (give the log files in it)")
            mode = os.stat(name).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                raise InputError(f"{name}: a device, not a log file")
            stream = open(name, "rb")  # noqa: SIM115 - closed by the caller
        except InputError:
            raise
        except OSError as exc:
            raise InputError(f"{name}: {_os_reason(exc)}") from None

    head = _peek(stream, 2)
    if head == b"\x1f\x8b":
        import gzip  # here: a plain log never pays for importing it (and zlib)

        gz = gzip.GzipFile(fileobj=stream, mode="rb")
        if name != "-":
            gz.myfileobj = stream  # type: ignore[assignment]  # close() closes the file too
        return as_utf8(gz, name)  # type: ignore[arg-type]
    return as_utf8(stream, name)


def _peek(stream: BinaryIO, n: int) -> bytes:
    peek = getattr(stream, "peek", None)
    if peek is not None:
        try:
            return bytes(peek(n)[:n])
        except (OSError, ValueError):
            return b""
    return b""


def _clean(data: bytes) -> bytes:
    if b"\x1b" in data:
        data = _ANSI_B.sub(b"", data)
    if b"\r" in data:
        data = _CR_B.sub(b"\n", data)
    return data


def looks_binary(sample: bytes) -> bool:
    """True for data that is not a text log (an executable, an image, a tarball)."""
    text = sample.replace(b"\0", b"")
    if len(text) < 32:
        return False
    controls = len(text) - len(text.translate(None, _CONTROL))
    return controls > 0.1 * len(text)


def blocks(stream: BinaryIO, name: str, chunk: int | None = None) -> Iterator[Block]:
    """The input as blocks of whole, cleaned lines; lines over `MAX_LINE` bytes are cut."""
    chunk = chunk or CHUNK
    carry = b""  # the start of a line that continues in the next read
    skipping = False  # inside an over-long line whose start was already kept
    line_no = 1
    first = True
    while True:
        data = _read(stream, chunk, name)
        if first:
            first = False
            if looks_binary(data[:_BINARY_SAMPLE]):
                raise InputError(f"{name}: binary data, not a text log")
        if not data:
            break
        raw, start = len(data), 0
        if skipping:
            i = data.find(b"\n")
            if i < 0:
                yield Block(b"", 0, 0, line_no, 0, raw)
                continue
            start, skipping = i + 1, False
        last = data.rfind(b"\n", start)
        if last < 0:
            carry += data[start:]
            if len(carry) > MAX_LINE:
                head = carry[:MAX_LINE] + b"\n"
                carry, skipping = b"", True
                block = _block(head, 0, len(head), line_no, raw)
            else:
                block = Block(b"", 0, 0, line_no, 0, raw)
            line_no += block.lines
            yield block
            continue
        if carry:  # the line that started in the previous read, as a block of its own
            i = data.find(b"\n", start)
            head = carry + data[start : i + 1]
            if len(head) > MAX_LINE + 1:
                head = head[:MAX_LINE] + b"\n"
            block = _block(head, 0, len(head), line_no, 0)
            line_no += block.lines
            yield block
            carry, start = b"", i + 1
        block = _block(data, start, last + 1, line_no, raw)
        line_no += block.lines
        yield block
        carry = data[last + 1 :]
    if carry and not skipping:
        head = carry[:MAX_LINE] + b"\n"
        yield _block(head, 0, len(head), line_no, 0)


def decode_line(raw: bytes) -> str:
    """One line of a block (without its `\\n`) as text."""
    return raw[:MAX_LINE].decode("utf-8", "replace")


def iter_lines(block: Block) -> Iterator[tuple[int, int, str]]:
    """(line number, offset in `block.data`, text) for every line: the simple way."""
    n, pos, data = block.first_line, block.lo, block.data
    while pos < block.hi:
        end = data.find(b"\n", pos, block.hi)
        yield n, pos, decode_line(data[pos:end])
        n, pos = n + 1, end + 1


def tail(block: Block, n: int) -> list[tuple[int, str]]:
    """The block's last `n` lines as (line number, text), in order."""
    data, lo, end = block.data, block.lo, block.hi - 1  # `end`: the last line's newline
    out: list[tuple[int, str]] = []
    line_no = block.first_line + block.lines - 1
    while end >= lo and len(out) < n:
        start = data.rfind(b"\n", lo, end) + 1 or lo
        out.append((line_no, decode_line(data[start:end])))
        end, line_no = start - 1, line_no - 1
    out.reverse()
    return out


def text_stream(text: str) -> BinaryIO:
    """A pasted text as an input stream."""
    return io.BytesIO(text.encode("utf-8", "surrogatepass"))


def file_lines(name: str) -> Iterator[str]:
    """A log file's lines exactly as the diagnosis numbers them (gzip, UTF-16/32, ANSI
    codes and CRLF handled by `kb.diagnosis.reader`), for views that show the log next to
    the diagnosis; input the reader refuses has no lines."""
    try:
        stream = open_input(name)
    except InputError:
        return
    try:
        for block in blocks(stream, name):
            for _, _, text in iter_lines(block):
                yield text
    except InputError:
        return
    finally:
        if name != "-":
            stream.close()
