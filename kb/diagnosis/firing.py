"""When a rule fires: the one definition that ranking, `rules test` and lint share.

A rule (a cause or a symptom) fires on a log when one of its stand-alone pieces of
evidence fired, or two or more pieces fired together (supporting evidence adds up);
pieces are its signatures that fired and the analyzer findings that name it.

A signature resting only on *generic* text never stands alone, whatever the rule says,
and weighs at most `GENERIC_WEIGHT`: every one of its matchers is a generic word
(`error`, `timeout`: `kb.diagnosis.shapes.GENERIC_WORDS`) or fewer than
`MIN_SPECIFIC_CHARS` characters of plain text. Lint warns about such a signature, so
that what the author wrote and what the diagnosis does agree.

Signatures and matchers may be the pydantic models of `kb.rules.schema` or the plain
specs of `kb.diagnosis.specs`: only their attributes are read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.diagnosis.shapes import GENERIC_WORDS
from kb.util import recache

MIN_SPECIFIC_CHARS = 6
GENERIC_WEIGHT = 0.3

# what is not plain text in a regex, roughly: escapes, classes, group openers, operators,
# repetition counts
_NOT_LITERAL = recache.compile(r"\\.|\[[^\]]*\]|\(\?P?<\w+>|\(\?[a-z]*:?|[()?*+{}|^$.]|\d+,?\d*")


def literal_text(matcher: Any) -> str:
    """The plain text a matcher rests on, lower-cased: a substring's or fuzzy matcher's
    text, a regex's literal characters."""
    text = _NOT_LITERAL.sub("", matcher.pattern) if matcher.type == "regex" else matcher.text
    return str(text).strip().lower()


def is_generic(matcher: Any) -> bool:
    """A matcher whose text could be any failing line's: a generic word, or short."""
    text = literal_text(matcher)
    return text in GENERIC_WORDS or len(text) < MIN_SPECIFIC_CHARS


def generic_only(signature: Any) -> bool:
    """Every matcher of the signature is generic."""
    return all(is_generic(m) for m in signature.matchers)


def stands_alone(signature: Any) -> bool:
    """Whether the signature, once it fired, fires its rule by itself."""
    return bool(signature.alone) and not generic_only(signature)


def weight_of(signature: Any) -> float:
    """The signature's weight as evidence (capped for a generic-only signature)."""
    weight = float(signature.weight)
    return min(weight, GENERIC_WEIGHT) if generic_only(signature) else weight


def fires(alone: Iterable[bool]) -> bool:
    """Whether pieces of evidence that fired (each: whether it stands alone) fire the rule."""
    flags = list(alone)
    return any(flags) or len(flags) >= 2
