"""RE2 syntax validation, the one regex dialect rules may use.

RE2 (and hyperscan) match in linear time, so a rule can never hang the scanner with
catastrophic backtracking; lint rejects lookaround, backreferences and the like here,
with the position of the offending construct.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import re2


@dataclass(frozen=True)
class RegexProblem:
    message: str
    position: int  # 0-based offset in the pattern, -1 when unknown


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
