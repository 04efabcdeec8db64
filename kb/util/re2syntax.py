"""RE2 syntax validation, the one regex dialect rules may use.

RE2 (and hyperscan) match in linear time, so a rule can never hang the scanner with
catastrophic backtracking; lint rejects lookaround, backreferences and the like here,
with the position of the offending construct.
"""

from __future__ import annotations

import sys
from functools import lru_cache

import re2


class RegexProblem:
    """What is wrong with a pattern, and where (`position`: a 0-based offset in it, -1
    when unknown). A plain class: `diagnose` imports this module (for `compile_re2`) at
    every start, where a dataclass costs a millisecond to make."""

    __slots__ = ("message", "position")

    def __init__(self, message: str, position: int) -> None:
        self.message = message
        self.position = position

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RegexProblem):
            return NotImplemented
        return (self.message, self.position) == (other.message, other.position)

    def __hash__(self) -> int:
        return hash((self.message, self.position))

    def __repr__(self) -> str:
        return f"RegexProblem(message={self.message!r}, position={self.position!r})"


def _options(ignore_case: bool = False) -> re2.Options:
    opts = re2.Options()
    opts.log_errors = False
    opts.case_sensitive = not ignore_case
    return opts


@lru_cache(maxsize=4096)
def compile_re2(pattern: str, ignore_case: bool = False) -> re2._Regexp:
    """Compile with RE2; raises re2.error for patterns outside the dialect."""
    return re2.compile(pattern, _options(ignore_case))


def check(pattern: str) -> RegexProblem | None:
    """None when `pattern` is valid RE2 syntax, else what is wrong and where."""
    try:
        compile_re2(pattern)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else str(exc)
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        what, _, fragment = text.partition(": ")
        pos = pattern.find(fragment) if fragment else -1
        hint = _HINTS.get(fragment[:3], "")
        return RegexProblem(f"{what} `{fragment}`{hint}", pos)
    return None


_HINTS = {
    "(?=": " (lookahead is not RE2: match the text itself or use an `unless` matcher)",
    "(?!": " (negative lookahead is not RE2: use an `unless` matcher with scope: line)",
    "(?<": " (lookbehind is not RE2: include the preceding text in the match)",
    "(?P": " (backreferences are not RE2)",
    "(?>": " (atomic groups are not RE2)",
}


def required_literal(pattern: str) -> int | None:
    """The longest run of literal characters every match of `pattern` must contain (a
    branch counts its weakest alternative), or None when Python's parser cannot read the
    pattern. The scanner finds candidate lines by such text: a pattern with none (`^\\s*
    [0-9a-f]{1,4}\\s*$`, anchors dropped) makes most lines of a log candidates."""
    if sys.version_info >= (3, 11):
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as sre  # type: ignore[attr-defined]
    else:  # Python 3.10
        import sre_constants as c
        import sre_parse as sre
    try:
        parsed = sre.parse(pattern)
    except Exception:  # RE2-only syntax (\pL, ...): lint's RE2 check judges it
        return None
    repeats = (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT))

    def longest(items: object) -> int:
        best = run = 0
        for op, av in items:  # type: ignore[attr-defined]
            if op is c.LITERAL:
                run += 1
                best = max(best, run)
                continue
            run = 0
            if op is c.SUBPATTERN:
                best = max(best, longest(av[-1]))
            elif op is c.BRANCH:
                best = max(best, min(longest(b) for b in av[1]))
            elif op in repeats and av[0] >= 1:
                best = max(best, longest(av[2]))
        return best

    return longest(parsed)
