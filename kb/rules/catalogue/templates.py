"""Format strings to matchers, mechanically: a printf/show_help/Python template becomes an
RE2 (and hyperscan) pattern whose literal parts are escaped and whose conversions are
bounded non-greedy gaps, so any value a release prints in them matches."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.util.regexlit import literal as escape_literal

MIN_LITERAL = 12  # fewer literal characters than this: too vague to be a matcher
GAP = ".*?"  # a %s: anything, bounded by the line (matchers run with never_nl; a
# counted bound such as {0,300} costs 300 program states per gap: 2,000 templates overflow RE2)

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


def compile_template(template: str, style: str = "printf") -> Compiled:
    """`template` as a pattern; `style` is "printf" (C, show_help) or "python"."""
    pieces = _pieces(_line_of(template, style), style)
    # conversions at either end match anything (the pattern is unanchored): drop them,
    # and the white space they leave
    while pieces and not pieces[0][0]:
        pieces.pop(0)
    while pieces and not pieces[-1][0]:
        pieces.pop()
    if pieces:
        pieces[0] = (True, pieces[0][1].lstrip())
        pieces[-1] = (True, pieces[-1][1].rstrip())
    regex: list[str] = []
    literals: list[str] = []
    for i, (is_lit, text) in enumerate(pieces):
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
    total = sum(len(t.strip()) for t in literals)
    # the prefilter text must occur verbatim in every match: no run of white space
    # (those match `\s+`)
    runs = [r.strip() for t in literals for r in re.split(r"\s{2,}|\t", t)]
    longest = max(runs, key=len, default="")
    return Compiled("".join(regex), longest, total >= MIN_LITERAL)
