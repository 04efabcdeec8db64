"""Fuzzy and partial input: a line typed from memory or pasted cut, re-wrapped, reworded.

Signatures are exact on purpose (a 1 GB log must not light up on near-misses), so
`NCCL WARN Connect to fe80` typed from memory fires none of them. When a *short* input
(`SHORT_LINES` meaningful lines or fewer) gives no cause and no failure, each of its
lines (of a longer excerpt read whole, only its error lines: `error_lines`) is compared
with every message the project knows: the rules' `match` examples (and their substring
and fuzzy texts) and the message catalogue's templates, numbers,
addresses and paths masked on both sides, case and punctuation ignored. A known message
is close when rapidfuzz scores it at least `THRESHOLD` and it holds most of the line's
specific words (random prose holds none of them). The causes of the closest messages
are answered, marked `basis: approximate`, each with the known message beside the
user's text and the score, below the "likely" threshold; a close message of a symptom
gives that symptom's probable causes (`kb.diagnosis.candidates`). The known messages
are `approx_corpus.py`'s; `wordindex.py` hands each line only those that can be close.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kb.diagnosis.approx_corpus import (
    MIN_CHARS,
    WORD,
    Known,
    evidence_lines,
    known_messages,
    shape,
    words_of,
)
from kb.diagnosis.candidates import symptom_candidates
from kb.diagnosis.lines import level_of
from kb.diagnosis.model import BASIS_APPROXIMATE, Approximate, CauseResult, Evidence
from kb.diagnosis.wordindex import WORD_SHARE, word_index
from kb.util.lazyre import LazyPattern

__all__ = [  # this module's names, and the corpus's and the index's that callers take from here
    "SHORT_LINES", "Known", "approximate_causes", "closest", "compared_lines", "cut_ends",
    "error_lines", "evidence_lines", "known_messages", "score", "shape", "word_index",
    "words_of",
]  # fmt: skip

SHORT_LINES = 5
THRESHOLD = 72.0
APPROXIMATE_MAX = 0.45  # confidence of a perfect approximate match (below LIKELY)
TOP = 3
MIN_WORDS = 3  # a line needs this many words (one of them specific) to be compared at all


def cut_ends(shaped: str) -> tuple[str, str]:
    """The first and last words of a shaped line: a paste cut mid-word leaves a piece of
    a word there (`annot open shared object file`, `... Process wil`)."""
    found = WORD.findall(shaped)
    return (found[0], found[-1]) if found else ("", "")


def _shared(line_words: frozenset[str], k: Known, ends: tuple[str, str]) -> frozenset[str]:
    """The line's specific words the known message holds; a first word that ends one of
    the message's words, or a last word that starts one, is that word cut by the paste."""
    common = line_words & k.words
    first, last = ends
    if first in line_words and first not in common and any(w.endswith(first) for w in k.words):
        common = common | {first}
    if last in line_words and last not in common and any(w.startswith(last) for w in k.words):
        common = common | {last}
    return common


def score(
    line_shape: str, line_words: frozenset[str], k: Known, ends: tuple[str, str] = ("", "")
) -> float:
    """How close a line is to a known message (0-100); 0 when the known message lacks
    most of the line's specific words. A first word that ends one of the message's words,
    or a last word that starts one, is that word cut by the paste."""
    if not line_words:
        return 0.0
    held = len(_shared(line_words, k, ends)) / len(line_words)
    if held < WORD_SHARE:
        return 0.0
    from rapidfuzz import fuzz

    partial = fuzz.partial_ratio(line_shape, k.shape)  # a line cut short, a fragment
    tokens = fuzz.token_sort_ratio(line_shape, k.shape)  # words reordered
    words = fuzz.partial_token_sort_ratio(line_shape, k.shape)  # words dropped
    best = max(partial, tokens, 0.95 * words)
    return float(best * (0.85 + 0.15 * held))


KNOWN_SHARE = 0.35  # of a known message's specific words, the share a line with words of
# its own must hold


def _other_message(line_words: frozenset[str], k: Known, ends: tuple[str, str]) -> bool:
    """True when the line and the known message only share a frame: each has specific words
    the other lacks, and the line holds less than `KNOWN_SHARE` of the message's (`NCCL
    error in: ProcessGroupNCCL.cpp:N, unhandled cuda error` against a known `NCCL error in:
    ProcessGroupNCCL.cpp:N, internal error ... Call to bind failed : Address already in
    use`). A line typed short or cut holds nothing the message lacks, and is kept."""
    own = line_words - _shared(line_words, k, ends)
    if not own or not k.words:
        return False
    return len(line_words & k.words) / len(k.words) < KNOWN_SHARE


def closest(
    rules: Any, lines: list[tuple[str, int, str]], catalogue: Any = None
) -> list[tuple[float, Known, tuple[str, int, str]]]:
    """(score, known message, the user's line) of the closest messages, best first, one
    per cause or symptom. An INFO line is left out (setup, not a failure); a meaning is
    left out when the line is as close to one of its rule's `no_match` examples (or to a
    benign catalogue message)."""
    corpus = known_messages(rules, catalogue)
    best: dict[str, tuple[float, Known, tuple[str, int, str]]] = {}
    for item in lines:
        if level_of(item[2]) == "info":
            continue
        for line_shape in _spans(item[2]):
            _closest_to(corpus, line_shape, item, best)
    return sorted(best.values(), key=lambda t: (-t[0], t[1].meaning))


_AFTER = LazyPattern(r"[:：]\s*|\s+-\s+")  # where a title or a sentence hands over to the message
_PROSE = LazyPattern(r"[^\W\d_]+(?:\s+[^\W\d_]+)+")  # two words or more, letters only


def _spans(text: str) -> list[str]:
    """The shapes to compare of one line: the whole line, and, when it opens with the
    user's own words and a colon (`Distributed model training with nccl error：NCCL WARN
    NET/IB Got completion error 12`), what follows them: those words would hide it."""
    out = [shape(text)]
    m = _AFTER.search(text)
    if m is not None and _PROSE.fullmatch(text[: m.start()].strip()):
        out.append(shape(text[m.end() :]))
    return [
        p for p in dict.fromkeys(out) if len(p) >= MIN_CHARS and len(WORD.findall(p)) >= MIN_WORDS
    ]


def _closest_to(
    corpus: Sequence[Known],
    line_shape: str,
    item: tuple[str, int, str],
    best: dict[str, tuple[float, Known, tuple[str, int, str]]],
) -> None:
    """Fold the known messages close to one shape of a line into `best` (per meaning)."""
    line_words = words_of(line_shape)
    ends = cut_ends(line_shape)
    near: dict[str, tuple[float, Known]] = {}
    negated: dict[str, float] = {}  # meaning -> how close a message known not to be it
    for i in word_index(corpus).candidates(line_words, ends):
        k = corpus[i]
        s = score(line_shape, line_words, k, ends)
        if s < THRESHOLD or _other_message(line_words, k, ends):
            continue
        if not k.negates and k.source.startswith("rules/") and k.shape == line_shape:
            # the same shape as a rule's own example, and yet no signature fired: the
            # rule tells them apart by the values the shape masks (a dataset's path, not
            # any missing file), so its example says nothing about this line
            continue
        if k.negates:
            negated[k.negates] = max(s, negated.get(k.negates, 0.0))
        elif s > near.get(k.meaning, (0.0,))[0]:
            near[k.meaning] = (s, k)
    for meaning, (s, k) in near.items():
        if s <= max(negated.get(meaning, 0.0), negated.get("*", 0.0)):
            continue  # as close to what this rule says it is not (or to a benign one)
        if s > best.get(meaning, (0.0,))[0]:
            best[meaning] = (s, k, item)


ERROR_LINES = 40  # of a longer excerpt, the error lines compared at most


def error_lines(lines: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """The lines of a longer excerpt worth comparing: its exceptions, errors and warnings
    (the first `ERROR_LINES`). Its other lines are prose, commands and settings, which a
    known message's words match by chance (`# out-of-place` holds `place`)."""
    wanted = ("exception", "error", "warning")
    return [item for item in lines if level_of(item[2]) in wanted][:ERROR_LINES]


def compared_lines(lines: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """The lines of an input read whole that are compared: all of a short paste
    (`SHORT_LINES` or fewer), else its error lines."""
    return lines if len(lines) <= SHORT_LINES else error_lines(lines)


def approximate_causes(
    rules: Any,
    lines: list[tuple[str, int, str]],
    facts: dict[str, Any],
    catalogue: Any = None,
    causes_only: bool = False,
) -> list[CauseResult]:
    """The causes of the known messages closest to `lines`, ranked, `basis: approximate`;
    with `causes_only`, only of messages that name a cause (where the symptom is already
    known, a message close to one of its own says nothing more)."""
    out: list[CauseResult] = []
    for s, k, (file, line_no, text) in closest(rules, lines, catalogue):
        if causes_only and not k.cause:
            continue
        ev = Evidence(file, line_no, text, 0, len(text), f"approximate/{k.source}")
        near = Approximate(text.strip(), k.text, s, k.source)
        if k.cause:
            found = [(k.cause, k.symptom or "", s / 100 * APPROXIMATE_MAX)]
        else:  # a symptom's message: its probable causes, weighed as candidates are
            found = [
                (c.id, k.symptom, c.confidence * s / 100)
                for c in symptom_candidates(rules, {k.symptom: [ev]}, {}, facts)
            ]
        for cid, sid, conf in found:
            if cid in rules.causes and all(c.id != cid for c in out):
                cause = rules.causes[cid]
                why = f"no signature fired; the line is {s:.0f}% like {k.source}: {k.text!r}"
                out.append(
                    CauseResult(
                        cid,
                        cause.title,
                        min(conf, APPROXIMATE_MAX),
                        [ev],
                        {},
                        list(cause.fixes),
                        why,
                        basis=BASIS_APPROXIMATE,
                        symptom=sid or (cause.symptoms[0] if cause.symptoms else ""),
                        approximate=near,
                    )
                )
    out.sort(key=lambda c: -c.confidence)
    return out[:TOP]
