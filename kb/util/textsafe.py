"""Text from logs and nodes made safe for a terminal: every control removed or made visible.

Why it exists: a log line or a node's output can hold what a terminal obeys rather than
shows: OSC 52 writes the clipboard, OSC 8 hides a link's target, RIS (`ESC c`) resets the
screen, DCS/SOS/PM/APC strings reach the terminal's parsers, C1 controls (U+0080-U+009F)
act as ESC sequences on some terminals, CR and backspace overwrite what was printed, and
bidi controls reorder it. Everything written to a terminal from a log, a path or a node
goes through `safe` (or `safe_line`, `json_dumps`): complete escape sequences are removed,
every other control is shown as a visible stand-in (`␛`, `␍`, `<U+202E>`); tabs and
newlines stay. One regex pass, linear in the text: each repetition in the grammar
excludes the characters that start another sequence, so no character is scanned twice.
"""

from __future__ import annotations

import re
from typing import Any

from kb.util.lazyre import LazyPattern

# ESC-introduced sequences (ECMA-48, as xterm parses them); the 8-bit forms of the
# introducers (C1) are sequences too. A string's body stops at any ESC, C1, BEL, CAN,
# SUB or newline, so a string that is never terminated costs one scan of its body.
_ST = "(?:\x07|\x1b\\\\|\x9c)"
_STRING = "(?:\x1b[\\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\n\x18\x1a\x1b\x80-\x9f]*" + _ST
_CSI = "(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]"
_NF = "\x1b[ -/]+[0-~]"  # character sets (ESC ( B), DECALN (ESC # 8), ...
_FE = "\x1b[0-~]"  # two-character escapes: RIS (ESC c), ESC 7, ESC M, a string's bare start
# single characters shown instead of obeyed: C0 but tab and newline, DEL, C1, bidi and
# line-separator controls, lone surrogates (they cannot even be encoded for a terminal)
_SINGLE = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
_UNSAFE = LazyPattern(f"(?P<seq>{_STRING}|{_CSI}|{_NF}|{_FE})|{_SINGLE}")
ESCAPES = LazyPattern(f"{_STRING}|{_CSI}|{_NF}|{_FE}")  # only the sequences (for matching)
_SGR = LazyPattern(r"\x1b\[[0-9;]*m\Z")
_CRLF = LazyPattern(r"\r+\n")
_JSON_UNSAFE = LazyPattern(
    "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)

# the same sequences in bytes, for the log reader (7-bit forms only: in UTF-8 the bytes
# 0x80-0x9f are parts of characters); it removes them before matching
ESCAPES_B = LazyPattern(
    (
        "\x1b[\\]PX^_][^\x07\n\x18\x1a\x1b]*" + _ST.replace("|\x9c", "") + f"|{_CSI}|{_NF}|{_FE}"
    ).encode("latin-1")
)


def visible(ch: str) -> str:
    """What stands for one control character: a control picture for C0 (`␛`, `␍`, `␀`)
    and DEL, `<U+XXXX>` for C1 and bidi controls, U+FFFD for a lone surrogate."""
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"<U+{code:04X}>"


_SHOWN = {
    chr(c): visible(chr(c))
    for c in [*range(0x20), *range(0x7F, 0xA0), 0x61C, 0x200E, 0x200F, *range(0x2028, 0x202F)]
    + [*range(0x2066, 0x206A)]
}


def safe(text: str, *, keep_sgr: bool = False) -> str:
    """`text` as a terminal may show it: escape sequences removed, other controls visible,
    tabs and newlines kept (CRLF and CRs before a newline become that newline).
    `keep_sgr` keeps bare colour codes (`ESC [ 1;31 m`): for text this program coloured
    itself, never for text from outside."""
    if text.isascii() and text.replace("\n", "").replace("\t", "").isprintable():
        return text  # printable ASCII, tabs and newlines: nothing to remove or show
    return _safe(text, keep_sgr)


def _safe(text: str, keep_sgr: bool) -> str:
    """`safe` the long way: what it returns for any text (the pattern is compiled on first
    use, which most runs, printing only plain ASCII, never need)."""
    if "\r" in text:
        text = _CRLF.sub("\n", text)

    def repl(m: re.Match[str]) -> str:
        if m.lastgroup is None:  # one character
            ch = m.group()
            return _SHOWN.get(ch) or visible(ch)
        if keep_sgr and _SGR.match(m.group()):
            return m.group()
        return ""

    return _UNSAFE.sub(repl, text)


def safe_line(text: str) -> str:
    """`safe`, for a place that holds one line (a status, a table cell): a newline shows as
    `␤` and a tab as a space."""
    return safe(text).replace("\n", "\u2424").replace("\t", " ")


def strip_escapes(text: str) -> str:
    """Only the escape sequences removed (for matching and parsing, not for showing)."""
    return ESCAPES.sub("", text)


def json_dumps(data: Any, **kwargs: Any) -> str:
    """`json.dumps` whose output is safe on a terminal and still means the same data: the
    characters JSON leaves raw (DEL, C1, bidi controls, lone surrogates) are `\\u` escapes."""
    import json  # here: the TUI's first frame needs `safe`, not json

    text = json.dumps(data, ensure_ascii=False, **kwargs)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_MD_SPECIAL = LazyPattern(r"([\\\[\]<>|])")
_TICKS = LazyPattern(r"`+")


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where the code spans are (CommonMark: a backtick run closed by the next run of the
    same length), found in one pass over the runs: linear, whatever the backticks."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    later: dict[int, list[int]] = {}  # run length -> indexes of runs, last first
    for i in range(len(runs) - 1, -1, -1):
        later.setdefault(runs[i][1] - runs[i][0], []).append(i)
    spans, i = [], 0
    while i < len(runs):
        same = later[runs[i][1] - runs[i][0]]
        while same and same[-1] <= i:
            same.pop()
        if same:
            j = same.pop()
            spans.append((runs[i][0], runs[j][1]))
            i = j + 1
        else:
            i += 1
    return spans


def markdown_text(text: str) -> str:
    """`safe_line(text)` as literal Markdown: no link, image, HTML tag or table cell
    boundary can start inside it (each such character is backslash-escaped, except in a
    code span, where nothing is active and an escape would show)."""
    text, out, pos = safe_line(text), [], 0
    for start, end in _code_spans(text):
        out += [_MD_SPECIAL.sub(r"\\\1", text[pos:start]), text[start:end]]
        pos = end
    return "".join([*out, _MD_SPECIAL.sub(r"\\\1", text[pos:])])
