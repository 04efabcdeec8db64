r"""Format strings to matchers, mechanically: a printf/show_help/Python template becomes an
RE2 (and hyperscan) pattern whose literal parts are escaped and whose conversions are
bounded non-greedy gaps, so any value a release prints in them matches.

A line that cuts the message short after a value (an issue's title, a terminal's width,
a paste) matches too, where enough text came before that value to name the message: at
each such value the pattern offers `value \s*$` beside the rest, so `$` (the end of the
line the matcher reads; the scan's prefilter drops it: `kb.diagnosis.plan.prefilter`)
costs a few states per cut, one regex for all of them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kb.util.regexlit import literal as escape_literal

MIN_LITERAL = 12  # fewer literal characters than this: too vague to be a matcher
GAP = ".*?"  # a %s: anything, bounded by the line (matchers run with never_nl; a
# counted bound such as {0,300} costs 300 program states per gap: 2,000 templates overflow RE2)
CUT_MIN_LITERAL = 24  # a line cut after a value matches when this much literal text came
CUT_MIN_WORDS = 3  # before it, in this many words: a short generic prefix never does
_WORD = re.compile(r"[A-Za-z]{2,}")
# words any library's failure says: a template of nothing else (`not supported`, `Invalid
# Argument`, `Unknown Error`) names no message and would match half the lines of a log
NAMELESS_WORDS = frozenset(
    """a an the is are was be been not no none null ok success successful error errors
    failed failure fail fails unknown invalid internal argument arguments supported
    unsupported implemented found exception unexpected protocol generic unspecified
    bad wrong""".split()
)
_SPACE = re.compile(r"\s+")

_PRINTF = re.compile(
    r"%(?:\d+\$)?(?P<flags>[-+ #0']*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d+|\*))?"
    r"(?P<len>hh|h|ll|l|L|q|j|z|Z|t|I64|I32)?(?P<conv>[diouxXeEfFgGaAcspnm%])"
)
_PYTHON = re.compile(r"\{\{|\}\}|\{[^{}]*\}|%(?:\([A-Za-z_]\w*\))?[-+ #0]*\d*(?:\.\d+)?[sdirfgx%]")

_CONV = {
    "d": r"-?\d+",
    "i": r"-?\d+",
    "u": r"\d+",
    "o": r"[0-7]+",
    "x": r"(?:0x)?[0-9a-fA-F]+",
    "X": r"(?:0X)?[0-9a-fA-F]+",
    "p": r"(?:0x[0-9a-fA-F]+|\(nil\)|[0-9a-fA-F]+)",
    "c": r".",
    "f": r"[-+]?(?:[0-9.]+(?:[eE][-+]?\d+)?|inf|nan)",
}
for _c in "FeEgGaA":
    _CONV[_c] = _CONV["f"]


@dataclass(frozen=True)
class Compiled:
    pattern: str  # RE2 syntax, unanchored, matches one line
    literal: str  # the longest literal run: the prefilter text
    usable: bool  # enough literal text to be a matcher
    # the template flat (literal text, its white space collapsed, each value a NUL) and the
    # flat text before each value a line cut short may end at (prefixes of it)
    flat: str = ""
    cuts: tuple[str, ...] = ()


def _gap(conv: str, padded: bool) -> str:
    if conv in ("s", "m", "r"):
        return GAP
    body = _CONV.get(conv, GAP)
    return r" *" + body if padded else body


def _pieces(template: str, style: str) -> list[tuple[bool, str]]:
    """(is_literal, text-or-conversion) in order; `%%`/`{{` become literal text."""
    rx = _PYTHON if style == "python" else _PRINTF
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in rx.finditer(template):
        if m.start() > pos:
            out.append((True, template[pos : m.start()]))
        tok = m.group(0)
        if tok in ("%%", "{{", "}}"):
            out.append((True, tok[0] if tok != "%%" else "%"))
        elif style == "python":
            out.append((False, "d" if tok.endswith("d") and tok.startswith("%") else "s"))
        else:
            padded = bool(m.group("width")) or "-" in (m.group("flags") or "")
            out.append((False, m.group("conv") + ("w" if padded else "")))
        pos = m.end()
    if pos < len(template):
        out.append((True, template[pos:]))
    return out


def _line_of(template: str, style: str) -> str:
    """The line of a multi-line template a matcher looks for (a matcher sees one line of
    a log at a time): the first with enough literal text (the headline, what a user
    pastes), else the one with the most."""
    lines = [ln for ln in template.replace("\r", "").split("\n") if ln.strip()]
    if not lines:
        return ""
    rx = _PYTHON if style == "python" else _PRINTF

    def text(ln: str) -> int:
        return len(rx.sub("", ln).strip())

    return next((ln for ln in lines if text(ln) >= MIN_LITERAL), max(lines, key=text))


def _literal_regex(text: str) -> str:
    parts = re.split(r"(\s{2,}|\t)", text)
    return "".join(
        r"\s+" if p and not p.strip() and (len(p) > 1 or p == "\t") else escape_literal(p)
        for p in parts
    )


def _vanishing(pieces: list[tuple[bool, str]], i: int) -> bool:
    """Whether conversion `i` is a string between two spaces of literal text."""
    if pieces[i][0] or pieces[i][1][0] not in ("s", "r") or not 0 < i < len(pieces) - 1:
        return False
    before, after = pieces[i - 1], pieces[i + 1]
    return (
        before[0]
        and after[0]
        and before[1].endswith(" ")
        and after[1].startswith(" ")
        and len(after[1]) > 1
    )


def _trimmed(template: str, style: str) -> list[tuple[bool, str]]:
    """The pieces of the template's line, conversions at either end dropped (the pattern is
    unanchored: they match anything), and the white space they leave."""
    pieces = _pieces(_line_of(template, style), style)
    for _ in range(2):  # again once an exception's class name is gone
        while pieces and not pieces[0][0]:
            pieces.pop(0)
        while pieces and not pieces[-1][0]:
            pieces.pop()
        if pieces:
            pieces[0] = (True, pieces[0][1].lstrip())
            pieces[-1] = (True, pieces[-1][1].rstrip())
        if style != "python" or not pieces or not _unclassed(pieces):
            break
    return pieces


# a Python exception's class before its message: logs print `str(exc)` as often as the
# traceback's `SSHException: No authentication methods available` ("exception: No
# authentication methods available", "failed with: ...")
_CLASS = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Failure): ")


def _unclassed(pieces: list[tuple[bool, str]]) -> bool:
    """Drop a leading exception class name from `pieces` when the message left is still
    long enough to be a matcher; whether it did."""
    m = _CLASS.match(pieces[0][1])
    if m is None:
        return False
    rest = sum(len(t.strip()) for lit, t in pieces if lit) - len(m.group(0).strip())
    if rest < MIN_LITERAL:
        return False
    pieces[0] = (True, pieces[0][1][m.end() :])
    if not pieces[0][1]:
        pieces.pop(0)
    return True


def _flat(pieces: list[tuple[bool, str]]) -> str:
    return "".join(_SPACE.sub(" ", t) if lit else "\0" for lit, t in pieces)


def _cuts(pieces: list[tuple[bool, str]]) -> dict[int, str]:
    """Conversion index -> the flat text before it, for each conversion a line may end at:
    enough literal text right before it (`CUT_MIN_LITERAL` characters in `CUT_MIN_WORDS`
    words since the last string value, whose gap would take any text: "RAS %s socket
    connection with %s" must not end RAS's "connect timeout warning (5s) on socket
    connection with 127.0.0.1<58101>") that the prefix alone names the message."""
    out: dict[int, str] = {}
    since = 0  # the first piece after the last string value
    for i, (is_lit, text) in enumerate(pieces):
        if is_lit:
            continue
        if 0 < i < len(pieces) - 1:
            before = [t for lit, t in pieces[since:i] if lit]
            words = _WORD.findall(" ".join(before))
            chars = sum(len(t.strip()) for t in before)
            if chars >= CUT_MIN_LITERAL and len(words) >= CUT_MIN_WORDS:
                out[i] = _flat(pieces[:i]).rstrip()
        if _gap(text[0], False) == GAP:
            since = i + 1
    return out


def _token(conv: str) -> str:
    """A value that ends a cut line: one token (a string printed with spaces in it would
    let any text after the prefix pass for it)."""
    if conv[0] in ("s", "m", "r", "c"):
        return r"\S+"
    return r" *" * conv.endswith("w") + _CONV.get(conv[0], r"\S+") + r"\.*"


def compile_template(
    template: str, style: str = "printf", keep_cut: Callable[[str], bool] | None = None
) -> Compiled:
    """`template` as a pattern; `style` is "printf" (C, show_help) or "python".

    The pattern also matches a line cut short after a value (a title, a terminal's width,
    a paste): the template's text up to and including that value, then the line's end,
    where that text is long enough to name the message (`_cuts`) and `keep_cut` (given
    the flat text before the value) allows it: the loader refuses a prefix that a template
    of another meaning shares. One regex: each cut is an alternative at its value."""
    pieces = _trimmed(template, style)
    cuts = {i: p for i, p in _cuts(pieces).items() if keep_cut is None or keep_cut(p)}
    regex: list[str] = []
    literals: list[str] = []
    sure = len(pieces)  # the pieces before this one are in every match
    for i, (is_lit, text) in enumerate(pieces):
        if i in cuts:
            regex.append(f"(?:{_token(text)}\\s*$|")  # the line may end after the value
            sure = min(sure, i)
        if is_lit:
            if i and _vanishing(pieces, i - 1):
                text = text[1:]  # its leading space went into the optional gap
            regex.append(_literal_regex(text))
            literals.append(text)
        elif _vanishing(pieces, i):
            # " %s " may print nothing (an empty string; a `<host>` a forum's Markdown
            # ate): the two spaces then stand as one
            regex.append(f"(?:{GAP} )?")
        else:
            regex.append(_gap(text[0], text.endswith("w")))
    regex.append(")" * len(cuts))
    total = sum(len(t.strip()) for t in literals)
    # the prefilter text must occur verbatim in every match, a cut one too: no run of
    # white space (those match `\s+`), nothing after the first cut
    sure_literals = [t for lit, t in pieces[:sure] if lit]
    runs = [r.strip() for t in sure_literals for r in re.split(r"\s{2,}|\t", t)]
    longest = max(runs, key=len, default="")
    flat = _flat(pieces)
    specific = any(w.lower() not in NAMELESS_WORDS for t in literals for w in _WORD.findall(t))
    usable = total >= MIN_LITERAL and specific
    return Compiled("".join(regex), longest, usable, flat, tuple(cuts.values()))
