"""What a line looks like to a fuzzy matcher: its shape, and the words that anchor it.

`kb.diagnosis.matching` compares a line's *shape* (numbers, hex, addresses and paths masked) with
a fuzzy text's shape, and only on lines that hold one of the text's *anchor words* (as
a word); the scanner looks for those words to find the candidate lines. Here are the
three definitions, kept apart so that lint (a fuzzy text with no anchor word) and the
scanner use exactly what matching uses. `clean` is a line as shown to users.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kb.util import recache  # compiled once per user, not per process
from kb.util.textsafe import ESCAPES

# words that appear in healthy logs all the time: a signature resting on one is noise
# (lint warns of it; ranking gives it no weight as evidence)
GENERIC_WORDS = frozenset(
    "error errors failed failure fail warning warn timeout exception traceback killed abort "
    "aborted nccl cuda mpi ssh denied refused hang slow".split()
) | {"timed out", "not found"}

_MASKS = [
    (recache.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]"), ""),  # ANSI colour codes
    (recache.compile(r"(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?:%\w+)?"), "<A>"),  # IPv6
    (recache.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b"), "<A>"),  # IPv4
    (recache.compile(r"\b0x[0-9a-fA-F]+\b"), "<H>"),
    (recache.compile(r"(?:~|\.{1,2})?/[\w.\-+@/]+"), "<P>"),  # paths
    (recache.compile(r"\b[0-9a-f]{8,}\b"), "<H>"),
    (recache.compile(r"\d+"), "<N>"),
    (recache.compile(r"\s+"), " "),
]


def mask(line: str) -> str:
    """A line's shape: numbers, hex, addresses and paths replaced by tokens."""
    for rx, repl in _MASKS:
        line = rx.sub(repl, line)
    return line.strip()


ANSI = ESCAPES  # the sequences the reader removes from a log, removed the same way (linear)


def clean(line: str) -> str:
    """A line as shown to users: no ANSI codes, no trailing newline or carriage return."""
    return ANSI.sub("", line).rstrip("\r\n")


# words so common in logs that they cannot anchor a fuzzy match on their own
_COMMON = """info warn warning error errors failed fail failure nccl with from that this have
than then when what were will into your line file rank node process thread using used call
called debug trace note none true false null"""
_COMMON_WORDS = frozenset(_COMMON.split())
_WORD = recache.compile(r"[A-Za-z][A-Za-z_]{3,}")
_TOKENS = recache.compile(r"<[NAHP]>")


def anchors_of(text: str) -> tuple[str, ...]:
    """The words a line must hold (one of them) before a fuzzy comparison is tried."""
    words = {w.lower() for w in _WORD.findall(_TOKENS.sub(" ", mask(text)))}
    specific = sorted(w for w in words if w not in _COMMON_WORDS)
    return tuple(specific or sorted(words))


def anchor_regex(anchors: Iterable[str]) -> str:
    """A regex (RE2, hyperscan and `re` alike; use it ignoring case) that finds any of
    the anchor words as a word: not inside a longer run of letters and underscores."""
    words = "|".join(re.escape(a) for a in anchors)
    return f"(?:^|[^A-Za-z_])(?:{words})(?:[^A-Za-z_]|$)"
