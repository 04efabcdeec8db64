"""Which known messages hold which specific words, so a line meets only its candidates.

Why: a line scores 0 against a known message that lacks most of its specific words
(`approximate.score`), and the corpus holds thousands of messages; the index hands a line
only the messages that could hold `WORD_SHARE` of its words, a few set lookups instead of
thousands of comparisons.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

from kb.diagnosis.approx_corpus import Known, KnownCorpus

WORD_SHARE = 0.6  # of the line's specific words, the share the known message must hold

_INDEXES: dict[int, tuple[Sequence[Known], WordIndex]] = {}  # id -> the corpus, its index


class WordIndex:
    """Each known word -> the messages holding it (and the sorted words, for a word that a
    paste cut at the start or the end of a line)."""

    def __init__(
        self, corpus: Sequence[Known], postings: Mapping[str, Sequence[int]] | None = None
    ) -> None:
        """`postings`: the corpus's, already counted (`KnownCorpus.postings`)."""
        if postings is None:
            counted: dict[str, list[int]] = {}
            for i, k in enumerate(corpus):
                for w in k.words:
                    counted.setdefault(w, []).append(i)
            postings = dict(counted)
        self.postings = postings
        self._sorted: tuple[list[str], list[str]] | None = None  # words, reversed words

    def candidates(self, line_words: frozenset[str], ends: tuple[str, str]) -> list[int]:
        """The indices, in corpus order, of the messages `score` may find close: those
        holding enough of the line's words, counting a cut first or last word (`cut_ends`)
        as held where a word of the message ends or starts with it."""
        held: dict[int, int] = {}
        for w in line_words:
            for i in self.postings.get(w, ()):
                held[i] = held.get(i, 0) + 1
        first, last = ends
        if first == last:  # one word at both ends: held once, cut at either end
            if first in line_words:
                self._count_cut(held, first, [*self._ending(first), *self._starting(first)])
        else:
            if first in line_words:
                self._count_cut(held, first, self._ending(first))
            if last in line_words:
                self._count_cut(held, last, self._starting(last))
        n_words = len(line_words)
        return sorted(i for i, n in held.items() if n / n_words >= WORD_SHARE)

    def _starting(self, cut: str) -> list[str]:
        """The known words that start with `cut` (itself aside)."""
        return [w for w in _prefixed(self._sorted_words()[0], cut) if w != cut]

    def _ending(self, cut: str) -> list[str]:
        """The known words that end with `cut` (itself aside)."""
        backwards = self._sorted_words()[1]
        return [w[::-1] for w in _prefixed(backwards, cut[::-1]) if w != cut[::-1]]

    def _sorted_words(self) -> tuple[list[str], list[str]]:
        """The known words sorted (for the words a cut word starts), and each reversed,
        sorted (... and ends): made when a line first has a cut word to fit."""
        if self._sorted is None:
            words = list(self.postings)
            self._sorted = (sorted(words), sorted(w[::-1] for w in words))
        return self._sorted

    def _count_cut(self, held: dict[int, int], cut: str, fitting: list[str]) -> None:
        """Count `cut` as held by the messages that lack it but hold a word it fits."""
        holding = set(self.postings.get(cut, ()))
        extra: set[int] = set()
        for w in fitting:
            extra.update(self.postings[w])
        for i in extra - holding:
            held[i] = held.get(i, 0) + 1


def _prefixed(words: list[str], prefix: str) -> list[str]:
    """The words of the sorted `words` that start with `prefix`."""
    at = bisect.bisect_left(words, prefix)
    end = at
    while end < len(words) and words[end].startswith(prefix):
        end += 1
    return words[at:end]


def word_index(corpus: Sequence[Known]) -> WordIndex:
    """The index of `corpus` (kept while the corpus is; a cached corpus brings its postings)."""
    kept = _INDEXES.get(id(corpus))
    if kept is not None and kept[0] is corpus:  # the very corpus, not one given its id since
        return kept[1]
    _INDEXES.clear()
    postings = corpus.postings if isinstance(corpus, KnownCorpus) else None
    index = WordIndex(corpus, postings)
    _INDEXES[id(corpus)] = (corpus, index)
    return index
