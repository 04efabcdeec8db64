"""What surrounds a log line's message, and what a pattern's line anchors mean there.

The same message reaches us in many dressings: quoted in an e-mail or issue (`> `),
prefixed by the launcher (`[rank3]:`, `[1,0]<stdout>:`, `3: `, `[default0]:`), by Ray
(`(pid=123)`, `(RayTrainWorker pid=123, ip=10.0.0.1)`), by a CI viewer (a line number
`[1824]`, an ISO timestamp) or with colour codes whose escape byte was lost in a copy
(`[0m`, `[31;1m`). A rule anchored with `^` would miss all of them, so matching tries a
line's *content* (the line after these decorations) when the whole line does not match.
People also quote a message inside a sentence (``I get `No IB devices found` on ib0``,
`the log says "Connection closed by 10.0.0.2 port 22"`): a rule anchored at a line's
start or end also tries each such quoted stretch (`quoted`).

Here also are the facts about a regex's text that the scanner needs: whether it
anchors at a line start, the same pattern without those anchors (the prefilter must
find the line whatever its decorations), and whether an automaton hit on raw bytes
proves that RE2 matches the decoded line (`line_exact`), which lets the scanner drop
vetoed lines without looking at them in Python.
"""

from __future__ import annotations

import re

_DECORATION = re.compile(
    r"(?:[ \t]*(?:"
    r">+[ \t]?"  # quoting in mail, Markdown, GitHub replies
    r"|\[[Rr]ank ?\d+\]:"  # PyTorch's [rank3]:
    r"|\[\d+,\d+\]<std(?:out|err)>:"  # mpirun --tag-output
    r"|\[default\d+\]:"  # torchrun --tee
    r"|\((?:[\w.]+ )?pid=\d+(?:, ip=[\w.:]+)?\)"  # Ray workers
    r"|\[\d{1,3}(?:;\d{1,3})*m"  # colour codes that lost their escape byte
    r"|\[\d{1,7}\](?=[ \t])"  # a viewer's line number
    r"|\d{1,5}: "  # srun -l, torchrun's rank prefix
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z(?=[ \t])"  # CI timestamps
    r"))+[ \t]*"
)
_QUICK = frozenset(">[(0123456789 \t")


def content_start(line: str) -> int:
    """Where a line's message starts once quoting and launcher prefixes are skipped
    (0 when it has none)."""
    if not line or line[0] not in _QUICK:
        return 0
    m = _DECORATION.match(line)
    return m.end() if m else 0


_QUOTED = re.compile(r"`([^`]{6,})`|\"([^\"]{12,})\"")


def quoted(line: str) -> list[tuple[int, int]]:
    """(start, end) of each stretch of the line quoted in backticks (6 characters or
    more) or double quotes (12 or more): a message quoted in prose."""
    if "`" not in line and '"' not in line:
        return []
    return [m.span(m.lastindex or 0) for m in _QUOTED.finditer(line)]


def _outside_classes(pattern: str) -> list[tuple[int, str]]:
    """(position, token) of the pattern's tokens outside character classes; an escape
    is one token (`\\d`), as is a character class (`[^a-z]`)."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            out.append((i, pattern[i : i + 2]))
            i += 2
        elif ch == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1  # a leading ] is a literal
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append((i, pattern[i : j + 1]))
            i = j + 1
        else:
            out.append((i, ch))
            i += 1
    return out


def has_line_anchor(pattern: str) -> bool:
    """True when the regex anchors somewhere at a line's (or the text's) start."""
    return any(t in ("^", "\\A") for _, t in _outside_classes(pattern))


def has_any_anchor(pattern: str) -> bool:
    """True when the regex anchors at a line's start or end (`^`, `$`, `\\A`, `\\z`)."""
    return any(t in ("^", "\\A", "$", "\\z") for _, t in _outside_classes(pattern))


def without_line_anchors(pattern: str) -> str:
    """The regex with its start anchors removed: it matches every line the original
    matches, at the line's start or after any decoration."""
    return "".join(t for _, t in _outside_classes(pattern) if t not in ("^", "\\A"))


def without_anchors(pattern: str) -> str:
    """The regex with its start and end anchors removed: it matches every line the
    original matches, after any decoration and inside quotes."""
    return "".join(t for _, t in _outside_classes(pattern) if t not in ("^", "\\A", "$", "\\z"))


_SAFE_ESCAPES = {"\\d", "\\w", "\\b"}


def line_exact(pattern: str) -> bool:
    """True when a hyperscan/RE2 hit of `pattern` on a line's raw bytes proves that RE2
    finds it in the decoded line: the pattern is ASCII and nothing in it can match a
    newline or depend on how non-ASCII bytes decode (no `.`, negated classes, `\\s`,
    `\\D`, `\\W`, Unicode classes, or flags that change those)."""
    if not pattern.isascii():
        return False
    for _, tok in _outside_classes(pattern):
        if tok == ".":
            return False
        if tok.startswith("\\"):
            if tok[1].isalnum() and tok not in _SAFE_ESCAPES:
                return False
        elif tok.startswith("["):
            body = tok[1:-1]
            if body.startswith(("^", "[:^")) or "\n" in body:
                return False
            escapes = re.findall(r"\\(.)", body)
            if any(e.isalnum() and e not in "dw" for e in escapes):
                return False
    return not re.search(r"\(\?[a-zA-Z]*[sm]", pattern)
