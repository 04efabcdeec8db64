"""Messages that reach us in another form than one plain line, rebuilt as logical lines.

A log copied from a terminal window arrives cut at the window's width, often in the
middle of a word (`ProcessGroupNCCL'` / `s watchdog got stuck ...`); one pasted into an
issue or an editor is often re-flowed at a word boundary near 80 columns (`(errno: 98 -
Address` / `already in use)`); one copied from a URL or a web form arrives encoded
(`libtorch_cuda.so:%20undefined%20symbol:%20ncclCommRegister`). No single physical line
holds the phrase a rule looks for, so these are rebuilt and matched as *logical* lines
(`kb.diagnosis.matching.Logical`), which count only where the rebuilding is needed (a match across
a join, or in decoded text), so that one message never counts twice.

- **Cut mid-word** (the first `UNWRAP_BYTES` of a log): a run of lines of one width W
  (`MIN_WIDTH` or more), each but the last exactly W long, with at least one cut inside
  a word; a line padded with spaces to W, or shorter, ends the message, and a line that
  starts like the first one (`GPU1` after `GPU0`, a log prefix) starts another (rows of
  a table are not a wrapped message). Joined as they are. (Two lines alone do not prove
  a fixed width: they are also tried as a word-boundary wrap.)
- **Cut at a word boundary** (the first `WORD_WRAP_BYTES`: re-flowed text is pasted,
  small): consecutive lines of `MIN_WIDTH` to `MAX_WIDTH` characters where the first word
  of each next line would not have fitted on the line before (its length plus the
  word's exceeds the run's widest line; for two lines, the usual width at or above
  the first one, `USUAL_WIDTHS`), the next line continues the text (same
  indentation, not a new log record, a stack frame, a table row, a prompt or a
  fence). Joined with a space.
- **Cut mid-sentence** (the same bytes): a line of text broken where a sentence goes on,
  at any width from `MIN_WIDTH` (a message quoted inside a paragraph of prose: `...
  killed by signal: Bus` / `error. It is possible that ...`): the line ends in a letter
  and the next, not a new record, starts with a lower-case word. Joined with a space;
  a run that overlaps a word-boundary run is one message with it.
- **Quoted** (markdown `> ` marks, as an issue's quote block has them): the marks are
  left out before the joins above, so a message re-flowed inside a quote is joined too.
- **URL-encoded** (the first `UNWRAP_BYTES`): a line with two or more `%XX` escapes is
  decoded (`%0A` starts a new logical line); evidence shows the line as the log has it.

Wrapping comes from copying a terminal or an editor, which gives small logs; a program
writing a file does not wrap, so a huge log costs only the first megabytes here.
"""

from __future__ import annotations

from kb.diagnosis.logical import Logical
from kb.diagnosis.reader import MAX_LINE, Block
from kb.util.lazyre import LazyPattern

UNWRAP_BYTES = 4 << 20
WORD_WRAP_BYTES = 1 << 20
MIN_WIDTH = 60
MAX_WIDTH = 240  # wider lines are a program's, not a re-flowed paragraph
MAX_LINES = 64  # physical lines joined into one message, at most
WORD_RUN_LINES = 32  # the same for a paragraph re-flowed at word boundaries
# the widths editors and formatters wrap text at, for a run of two lines
USUAL_WIDTHS = (72, 76, 78, 79, 80, 88, 100, 120, 132, 160, 200, 240)
HEAD = 4  # a line that starts like the message's first line starts a new message

_WORD = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
_DIGITS = str.maketrans("123456789", "000000000")
# the start of a new record, not the rest of a sentence: a log prefix, a timestamp, an
# exception, a stack frame, a prompt, a fence or a Markdown/table line
_RECORD = LazyPattern(
    r"(?:\[|<|\(\w*\s?pid=|\d{4}-\d\d-\d\d|\d\d?:\d\d:\d\d|[IWEF]\d{4} |Traceback\b|File \"|"
    r"at [\w$.]+\(|[\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\b:?|[\w.\-]+:\d+:\d+ \[|"
    r"[$#>|*+=~`]|-{2,}|[\w.\-]+@[\w.\-]+[:$#]|(?:INFO|WARN|WARNING|ERROR|DEBUG|FATAL)\b)"
)
_TABLE = LazyPattern(r"\S {2,}\S.*\S {2,}\S|\|.*\|")
_ESCAPE = LazyPattern(r"%[0-9A-Fa-f]{2}")
_ESCAPES = LazyPattern(r"(?:%[0-9A-Fa-f]{2})+")


def _head(line: str) -> str:
    return line[:HEAD].translate(_DIGITS)


class Unwrapper:
    """Collects the first `UNWRAP_BYTES` of a log, then rebuilds its logical lines: as
    soon as it holds them all (the bytes are dropped then, before the rest of a long log
    is read), or at the log's end."""

    def __init__(self) -> None:
        self.parts: list[tuple[int, bytes]] = []  # (first line number, whole lines)
        self.size = 0
        self._rebuilt: list[Logical] | None = None  # the logical lines, once full

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
        if self.full:
            self._rebuilt = self._rebuild()

    def messages(self) -> list[Logical]:
        """The log's logical lines (see the module docstring), in that order of kinds;
        the collector is empty again after."""
        out = self._rebuilt if self._rebuilt is not None else self._rebuild()
        self.parts, self.size, self._rebuilt = [], 0, None
        return out

    def _rebuild(self) -> list[Logical]:
        if not self.parts:
            return []
        first = self.parts[0][0]  # the blocks of one log follow each other
        parts, self.parts = self.parts[::-1], []
        lines: list[str] = []
        while parts:  # each part holds whole lines: decoded (and let go) one at a time
            data = parts.pop()[1]
            lines.extend(raw[:MAX_LINE].decode("utf-8", "replace") for raw in data.split(b"\n"))
            lines.pop()  # what follows the part's last newline: nothing
        return logical_lines(first, lines)


def logical_lines(first: int, lines: list[str]) -> list[Logical]:
    """The logical lines of `lines` (numbered from `first`): messages cut mid-word, then
    those cut at word boundaries (in the first `WORD_WRAP_BYTES`), then decoded lines."""
    quoted = _without_quote_marks(lines)  # a message re-flowed inside a markdown quote
    if quoted is not None:
        lines = quoted
    mid = _cut_mid_word(first, lines)
    # two lines are no proof of a fixed width: a word-boundary join is tried on them too
    covered = {
        n - first for m in mid if m.last - m.line_no > 1 for n in range(m.line_no, m.last + 1)
    }
    budget, upto = 0, len(lines)
    for i, line in enumerate(lines):
        budget += len(line) + 1
        if budget > WORD_WRAP_BYTES:
            upto = i
            break
    runs = _cut_at_words(lines[:upto], covered) + _cut_mid_sentence(lines[:upto], covered)
    words = [_joined(first, lines, i, j, " ") for i, j in _merged(runs)]
    return mid + words + _decoded(first, lines)


_QUOTE_MARK = LazyPattern(r"^(?:>(?: |$))+")


def _without_quote_marks(lines: list[str]) -> list[str] | None:
    """The lines without their markdown quote marks (`> `), where some have them: each
    quoted line would otherwise start like the one before it (a new record), so a message
    re-flowed inside a quote would never be joined. None where no line is quoted."""
    out, marked = [], False
    for line in lines:
        m = _QUOTE_MARK.match(line) if line.startswith(">") else None
        marked = marked or m is not None
        out.append(line[m.end() :] if m else line)
    return out if marked else None


def _merged(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs of lines (first, last) that share a line, as one run: a paragraph re-flowed
    at a width and a sentence broken inside it are one message."""
    out: list[tuple[int, int]] = []
    for i, j in sorted(runs):
        if out and i <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], j))
        else:
            out.append((i, j))
    return out


# ---------------------------------------------------------------- cut mid-word


def _cut_mid_word(first: int, lines: list[str]) -> list[Logical]:
    out: list[Logical] = []
    i, n = 0, len(lines)
    while i < n - 1:
        width = len(lines[i])
        if width < MIN_WIDTH or len(lines[i + 1]) > width or "\t" in lines[i]:
            i += 1
            continue
        j, cut_in_word, head = i, False, _head(lines[i])
        while j < n - 1 and j - i < MAX_LINES - 1:
            line, nxt = lines[j], lines[j + 1]
            if len(line) != width or line.endswith("  ") or not nxt or "\t" in nxt:
                break
            if len(nxt) > width or not nxt.strip() or _head(nxt) == head:
                break
            cut_in_word = cut_in_word or (line[-1] in _WORD and nxt[0] in _WORD)
            j += 1
        if j > i and cut_in_word:
            out.append(_joined(first, lines, i, j, ""))
            i = j + 1
        else:  # a run starting inside this one ends where it ends, with fewer cuts
            i = max(i + 1, j)
    return out


def _joined(first: int, lines: list[str], i: int, j: int, sep: str) -> Logical:
    """Lines i..j joined by `sep` (their indentation after the first dropped for a
    word-boundary join)."""
    text = lines[i].rstrip() if sep else lines[i]
    joins: list[int] = []
    for k in range(i + 1, j + 1):
        part = lines[k].strip() if sep else lines[k]
        text += sep
        joins.append(len(text))
        text += part
    return Logical(first + i, first + j, text.rstrip(), tuple(joins))


# ---------------------------------------------------------------- cut at word boundaries


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _may_continue(line: str) -> bool:
    """A line that may go on in the next one: long, not a table row, not padded."""
    return (
        MIN_WIDTH <= len(line.rstrip()) <= MAX_WIDTH
        and "\t" not in line
        and not line.endswith("  ")
        and not _TABLE.search(line)
    )


def _continues(line: str, nxt: str) -> bool:
    """Whether `nxt` reads as the rest of `line`'s text rather than a new record (the
    run's own first line aside: `_head`)."""
    body = nxt.strip()
    if not body or "\t" in nxt or _indent(nxt) != _indent(line):
        return False
    return _RECORD.match(body) is None and _TABLE.search(nxt) is None


def _first_word(line: str) -> str:
    body = line.strip()
    end = body.find(" ")
    return body if end < 0 else body[:end]


def _cut_at_words(lines: list[str], covered: set[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    n = len(lines)
    # each line's verdicts once: a run is tried again from each of its lines
    may = [_may_continue(line) for line in lines]
    size = [len(line.rstrip()) for line in lines]
    heads = [_head(line) for line in lines]
    cont: dict[int, bool] = {}
    i = 0
    while i < n - 1:
        if i in covered or not may[i]:
            i += 1
            continue
        head, j = heads[i], i
        while j < n - 1 and j - i < WORD_RUN_LINES - 1 and j + 1 not in covered:
            if j > i and not may[j]:
                break
            if j not in cont:
                cont[j] = _continues(lines[j], lines[j + 1])
            if not cont[j] or heads[j + 1] == head:
                break
            j += 1
        if j == i:
            i += 1
            continue
        width = max(size[i:j])
        if j == i + 1:  # one line says nothing of the width: assume a usual one
            width = next((w for w in USUAL_WIDTHS if w >= width), width)
        k = i  # the run goes on while each line was too full for the next one's first word
        while k < j and size[k] + 1 + len(_first_word(lines[k + 1])) > width:
            k += 1
        if k > i:
            out.append((i, k))
            i = k + 1
        else:
            i += 1
    return out


# ---------------------------------------------------------------- cut mid-sentence

_ENDS_IN_WORD = LazyPattern(r"[A-Za-z]{2,}$")
_GOES_ON = LazyPattern(r"[a-z][a-z']*(?:[\s.,;:)]|$)")


def _goes_on(line: str, nxt: str) -> bool:
    """Whether `nxt` is the rest of a sentence that `line` broke off."""
    body = line.rstrip()
    return (
        len(body) >= MIN_WIDTH  # a shorter line is a record of its own, not a broken one
        and " " in body.strip()
        and _ENDS_IN_WORD.search(body) is not None
        and _GOES_ON.match(nxt.strip()) is not None
        and _continues(line, nxt)
    )


def _cut_mid_sentence(lines: list[str], covered: set[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    i, n = 0, len(lines)
    while i < n - 1:
        j = i
        while (
            j < n - 1
            and j - i < WORD_RUN_LINES - 1
            and j not in covered
            and j + 1 not in covered
            and _goes_on(lines[j], lines[j + 1])
        ):
            j += 1
        if j > i:
            out.append((i, j))
        i = j + 1
    return out


# ---------------------------------------------------------------- URL-encoded lines


def _decoded(first: int, lines: list[str]) -> list[Logical]:
    out: list[Logical] = []
    for index, line in enumerate(lines):
        if line.count("%") < 2 or len(_ESCAPE.findall(line)) < 2:
            continue
        text, offsets = _unquote(line)
        start = 0
        for piece in text.split("\n"):
            end = start + len(piece)
            spans = offsets[start : end + 1]
            # only the pieces that decoding changed: the others are in the line as it is
            if piece.strip() and spans[-1] - spans[0] != len(piece):
                out.append(Logical(first + index, first + index, piece, (), line, tuple(spans)))
            start = end + 1
    return out


def _unquote(line: str) -> tuple[str, list[int]]:
    """The line with its `%XX` escapes decoded (as UTF-8), and where each character of
    the result starts in the line (plus the line's length)."""
    text: list[str] = []
    offsets: list[int] = []
    pos = 0
    for m in _ESCAPES.finditer(line):
        for k in range(pos, m.start()):
            text.append(line[k])
            offsets.append(k)
        raw = bytes.fromhex(m.group(0).replace("%", ""))
        at = m.start()
        for ch in raw.decode("utf-8", "replace"):
            text.append(ch)
            offsets.append(min(at, m.end() - 1))
            at += 3 * max(1, len(ch.encode("utf-8", "replace")) if ch != "\ufffd" else 1)
        pos = m.end()
    for k in range(pos, len(line)):
        text.append(line[k])
        offsets.append(k)
    offsets.append(len(line))
    return "".join(text), offsets
