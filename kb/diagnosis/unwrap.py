"""Lines that a terminal wrapped, joined back into the message they were.

A log copied from a terminal window arrives cut at the window's width, often in the
middle of a word (`ProcessGroupNCCL'` / `s watchdog got stuck ...`), so no single
physical line holds the phrase a rule looks for. The shape is easy to see: a run of
lines of one width W (60 columns or more), each but the last exactly W long, with at
least one cut inside a word; a line padded with spaces to W, or shorter than W, ends
the message, and a line that starts like its first line (`GPU1` after `GPU0`, a log
prefix) starts another (rows of a table are not a wrapped message). Such runs are joined and matched as one more (logical) line, numbered as
its first physical line; the physical lines are matched as usual too.

Only the first `UNWRAP_BYTES` of each log are examined: wrapping comes from copying a
terminal, which gives small logs; a program writing a file does not wrap.
"""

from __future__ import annotations

from kb.diagnosis.reader import Block, decode_line

UNWRAP_BYTES = 4 << 20
MIN_WIDTH = 60
MAX_LINES = 64  # physical lines joined into one message, at most


_WORD_BYTES = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
HEAD = 4  # a line that starts like the message's first line starts a new message


def _head(line: bytes) -> bytes:
    return line[:HEAD].translate(_DIGITS)


class Unwrapper:
    """Collects the first `UNWRAP_BYTES` of a log, then finds its wrapped messages."""

    def __init__(self) -> None:
        self.parts: list[tuple[int, bytes]] = []  # (first line number, whole lines)
        self.size = 0

    @property
    def full(self) -> bool:
        return self.size >= UNWRAP_BYTES

    def add(self, block: Block) -> None:
        if self.full or not block.lines:
            return
        take = block.data[block.lo : block.hi]
        if self.size + len(take) > UNWRAP_BYTES:
            cut = take.rfind(b"\n", 0, UNWRAP_BYTES - self.size) + 1
            take = take[:cut]
        self.parts.append((block.first_line, take))
        self.size += len(take) or UNWRAP_BYTES  # a first line longer than the budget: stop

    def messages(self) -> list[tuple[int, str]]:
        """(line number of its first line, joined text) of every wrapped message."""
        if not self.parts:
            return []
        first = self.parts[0][0]  # the blocks of one log follow each other
        data = b"".join(d for _, d in self.parts)
        self.parts, self.size = [], 0
        return _messages(first, data.split(b"\n")[:-1])


def _messages(first: int, lines: list[bytes]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    i, n = 0, len(lines)
    while i < n - 1:
        width = len(lines[i])
        if width < MIN_WIDTH or len(lines[i + 1]) > width or b"\t" in lines[i]:
            i += 1
            continue
        j, cut_in_word, head = i, False, _head(lines[i])
        while j < n - 1 and j - i < MAX_LINES - 1:
            line, nxt = lines[j], lines[j + 1]
            if len(line) != width or line.endswith(b"  ") or not nxt or b"\t" in nxt:
                break
            if len(nxt) > width or not nxt.strip() or _head(nxt) == head:
                break
            cut_in_word = cut_in_word or (line[-1] in _WORD_BYTES and nxt[0] in _WORD_BYTES)
            j += 1
        if j > i and cut_in_word:
            text = b"".join(lines[i : j + 1]).rstrip()
            out.append((first + i, decode_line(text)))
            i = j + 1
        else:  # a run starting inside this one ends where it ends, with fewer cuts
            i = max(i + 1, j)
    return out
