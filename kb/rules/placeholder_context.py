"""Where each `{placeholder}` lands in a command template, as the shell will read it.

Why it exists: a filled value is shell-quoted (`'...'`), which keeps it one inert word
only outside every other quoting.  Inside `"..."` or `'...'` the value's own quote
re-opens the string (`echo "not found: {library}"` with `x"; touch P; echo "`), inside
backticks a trailing backslash escapes the closing one, inside `${...}` or `$((...))`
quoting means something else, after a backslash the opening quote is a literal, and in
a here-document nothing is unquoted.  And a value that starts a word can be an option.
`spots` reports each placeholder's context so the linter can refuse the unsafe ones.
A `$(...)` body is a fresh command (also inside double quotes): its words are plain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kb.rules.placeholders import TOKEN as _TOKEN

PLAIN = "plain"
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# words that start a command list rather than being one (`{{` is a literal `{`)
_RESERVED = {"if", "then", "else", "elif", "do", "while", "until", "!", "{{", "}}", "time"}
_ENDS_WORD = " \t\n;|&()<>"
_ENDS_COMMAND = ";|&()\n"


@dataclass(frozen=True)
class Spot:
    """One placeholder occurrence: its name, offset, context and whether it starts a word."""

    name: str
    offset: int
    where: str  # "plain", or the quoting it is inside ("double quotes", ...)
    starts_word: bool = False
    after_dashdash: bool = False  # a `--` word came before it in the same simple command
    command: str = ""  # the simple command's program ("" when the placeholder is it)
    position: int = 0  # which argument of it the placeholder's word is (1 = the first)


@dataclass
class _Scan:
    text: str
    spots: list[Spot]
    stack: list[str]
    word_start: bool = True
    word: str = ""
    dashdash: bool = False
    heredoc: bool = False
    words: list[str] = field(default_factory=list)  # the simple command's words so far
    saved: list[tuple[list[str], bool]] = field(default_factory=list)  # outside each $(


def spots(template: str) -> list[Spot]:
    """Every placeholder in `template` with the context the shell reads it in."""
    s = _Scan(template, [], ["top"])
    i, n = 0, len(template)
    while i < n:
        if s.heredoc and template[i - 1 : i] == "\n":
            _rest(s, i, "a here-document")
            break
        m = _TOKEN.match(template, i)
        if m:
            if m.group(1):
                _record(s, m.group(1), i)
            s.word_start = False
            s.word += m.group(0)
            i = m.end()
            continue
        i = _step(s, i)
    return s.spots


def _record(s: _Scan, name: str, offset: int) -> None:
    ctx = s.stack[-1]
    if ctx in ("top", "cmd"):
        program = [w for w in s.words if not _ASSIGNMENT.match(w)]
        command, position = (program[0], len(program)) if program else ("", 0)
        s.spots.append(Spot(name, offset, PLAIN, s.word_start, s.dashdash, command, position))
    else:
        s.spots.append(Spot(name, offset, ctx))


def _rest(s: _Scan, start: int, where: str) -> None:
    for m in _TOKEN.finditer(s.text, start):
        if m.group(1):
            s.spots.append(Spot(m.group(1), m.start(), where))


def _after_backslash(s: _Scan, i: int) -> None:
    """`\\{x}`: the backslash makes the value's opening quote a literal character."""
    m = _TOKEN.match(s.text, i + 1)
    if m and m.group(1):
        s.spots.append(Spot(m.group(1), i + 1, "after a backslash"))


def _step(s: _Scan, i: int) -> int:
    """Read the character at `i` in the current context; the index of the next one."""
    t, ctx = s.text, s.stack[-1]
    c = t[i]
    if ctx == "single quotes":
        if c == "'":
            s.stack.pop()
        return i + 1
    if ctx == "$'...' quotes":
        if c == "\\":
            return i + 2
        if c == "'":
            s.stack.pop()
        return i + 1
    if ctx == "backticks":
        if c == "\\":
            _after_backslash(s, i)
            return i + 2
        if c == "`":
            s.stack.pop()
        return i + 1
    if ctx == "a ${...} expansion":
        if c == "\\":
            return i + 2
        if c == "}":
            s.stack.pop()
        return i + 1
    if ctx == "an arithmetic expansion":
        if t.startswith("))", i):
            s.stack.pop()
            return i + 2
        return i + 1
    opened = _opening(t, i)
    if ctx == "double quotes":
        if c == "\\":
            _after_backslash(s, i)
            return i + 2
        if c == '"':
            s.stack.pop()
            return i + 1
        if opened and opened[0] != "single quotes" and opened[0] != "$'...' quotes":
            return _open(s, i, opened)
        return i + 1
    return _plain(s, i, opened)


def _opening(t: str, i: int) -> tuple[str, int] | None:
    """The context a construct starting at `i` opens, and its length."""
    for start, ctx in (
        ("$((", "an arithmetic expansion"),
        ("$(", "cmd"),
        ("${", "a ${...} expansion"),
        ("$'", "$'...' quotes"),
        ("'", "single quotes"),
        ('"', "double quotes"),
        ("`", "backticks"),
    ):
        if t.startswith(start, i):
            return ctx, len(start)
    return None


def _open(s: _Scan, i: int, opened: tuple[str, int]) -> int:
    ctx, length = opened
    s.stack.append(ctx)
    if ctx == "cmd":
        s.saved.append((s.words, s.dashdash))
        s.word_start, s.word, s.dashdash, s.words = True, "", False, []
    else:
        s.word_start = False
        s.word += s.text[i : i + length]
    return i + length


def _plain(s: _Scan, i: int, opened: tuple[str, int] | None) -> int:
    """A character outside quotes (at the top, or in a `$(...)` body)."""
    t, c = s.text, s.text[i]
    if c == "\\":
        _after_backslash(s, i)
        s.word_start = False
        s.word += t[i : i + 2]
        return i + 2
    if opened:
        return _open(s, i, opened)
    if c == ")" and s.stack[-1] == "cmd":
        s.stack.pop()
        s.words, s.dashdash = s.saved.pop() if s.saved else ([], False)
        s.word_start = False
        return i + 1
    if c == "#" and s.word_start:
        end = t.find("\n", i)
        return len(t) if end < 0 else end
    if t.startswith("<<", i) and not t.startswith("<<<", i):
        s.heredoc = True
    if c in _ENDS_WORD:
        _end_word(s, c in _ENDS_COMMAND)
    else:
        s.word_start = False
        s.word += c
    return i + 1


def _end_word(s: _Scan, ends_command: bool) -> None:
    if s.word == "--":
        s.dashdash = True
    if s.word and not (s.word in _RESERVED and not s.words):
        s.words.append(s.word)
    if ends_command:
        s.dashdash, s.words = False, []
    s.word_start, s.word = True, ""
