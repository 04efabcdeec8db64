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
gives that symptom's probable causes (`kb.diagnosis.candidates`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kb.diagnosis.candidates import symptom_candidates
from kb.diagnosis.failure import catalogue_symptoms, message_class, pasted_only
from kb.diagnosis.lines import level_of
from kb.diagnosis.model import BASIS_APPROXIMATE, Approximate, CauseResult, Evidence
from kb.diagnosis.shapes import mask
from kb.util.record import record

SHORT_LINES = 5
THRESHOLD = 72.0
WORD_SHARE = 0.6  # of the line's specific words, the share the known message must hold
APPROXIMATE_MAX = 0.45  # confidence of a perfect approximate match (below LIKELY)
TOP = 3
MIN_CHARS = 8

_PUNCT = re.compile(r"[^a-z0-9<>]+")
# a catalogue template's printf and format placeholders, as the masks write a value
_PLACEHOLDER = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspn]|\{[\w.:]*\}")
MIN_WORDS = 3  # a line needs this many words (one of them specific) to be compared at all
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
# words that say nothing about which message it is
_COMMON = frozenset(
    """the and for with from that this was were are not has have had but can cannot
    into when then than there their its your our you any all some one two out get got
    info warn warning error errors failed fail failure fails exception traceback line
    file rank node process thread call called using used use run running ran job log
    nccl cuda torch python see above below please while after before during""".split()
)


@record(hashable=True)  # frozen: never changed after __init__
class Known:
    """One known message: its text, its shape, and what it means."""

    text: str
    shape: str
    words: frozenset[str]
    cause: str = ""
    symptom: str = ""
    source: str = ""
    negates: str = ""  # a rule's `no_match` example: "not <meaning>"; "*": benign message

    def __init__(
        self,
        text: str,
        shape: str,
        words: frozenset[str],
        cause: str = "",
        symptom: str = "",
        source: str = "",
        negates: str = "",
    ) -> None:
        self.text = text
        self.shape = shape
        self.words = words
        self.cause = cause
        self.symptom = symptom
        self.source = source
        self.negates = negates

    @property
    def meaning(self) -> str:
        return self.cause or f"symptom:{self.symptom}"


def shape(text: str) -> str:
    """The comparable form: masked, lower-cased, punctuation as spaces."""
    text = _PLACEHOLDER.sub("<N>", text)
    return " ".join(_PUNCT.sub(" ", mask(text).lower()).split())


def words_of(shaped: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(shaped) if w not in _COMMON)


_CORPORA: dict[tuple[str, int], list[Known]] = {}
_INDEXES: dict[int, WordIndex] = {}


class WordIndex:
    """Which known messages hold which specific words: a line is scored only against the
    messages that could hold `WORD_SHARE` of its words (the rest score 0 anyway), so a
    line costs a few set lookups instead of thousands of comparisons."""

    def __init__(self, corpus: list[Known]) -> None:
        self.postings: dict[str, list[int]] = {}
        for i, k in enumerate(corpus):
            for w in k.words:
                self.postings.setdefault(w, []).append(i)
        self._words = sorted(self.postings)  # for the words a cut word starts
        self._reversed = sorted(w[::-1] for w in self.postings)  # ... and ends

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
        return [w for w in _prefixed(self._words, cut) if w != cut]

    def _ending(self, cut: str) -> list[str]:
        """The known words that end with `cut` (itself aside)."""
        return [w[::-1] for w in _prefixed(self._reversed, cut[::-1]) if w != cut[::-1]]

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


def word_index(corpus: list[Known]) -> WordIndex:
    """The index of `corpus` (kept while the corpus is)."""
    index = _INDEXES.get(id(corpus))
    if index is None:
        _INDEXES.clear()
        index = _INDEXES[id(corpus)] = WordIndex(corpus)
    return index


CACHE_FORMAT = "dlperf-approximate/4"  # 4: of a multi-line example, only its evidence lines


def known_messages(rules: Any, catalogue: Any = None) -> list[Known]:
    """Every message the rules (and the catalogue) know, shaped: kept in memory per rules
    and catalogue, and on disk beside the compiled rules (shaping thousands of catalogue
    templates costs more than a pasted line may wait)."""
    key = (str(getattr(rules, "key", id(rules))), id(catalogue))
    if key not in _CORPORA:
        _CORPORA.clear()
        _CORPORA[key] = _cached(rules, catalogue)
    return _CORPORA[key]


def _cached(rules: Any, catalogue: Any) -> list[Known]:
    import contextlib
    import json

    from kb.util.atomicfile import write_atomic
    from kb.util.digest import blake2b
    from kb.util.paths import cache_dir

    rules_key = str(getattr(rules, "key", "") or "")
    if not rules_key:  # rules compiled in memory (a KnowledgeBase): nothing to key on
        return list(_collect(rules, catalogue))
    h = blake2b(f"{CACHE_FORMAT}\0{rules_key}".encode(), digest_size=16)
    h.update(Path(__file__).read_bytes())
    for m in getattr(catalogue, "messages", ()):
        h.update(f"\0{m.library}\0{m.template}\0{message_class(m)}\0{m.cause}".encode())
        h.update(f"\0{m.symptom}\0{m.level}".encode())
    path = cache_dir() / f"approximate-{h.hexdigest()}.json"
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        return [
            Known(**{**k, "words": frozenset(k["words"])})
            for k in json.loads(path.read_text(encoding="utf-8"))
        ]
    corpus = list(_collect(rules, catalogue))
    with contextlib.suppress(OSError):
        rows = [{**vars(k), "words": sorted(k.words)} for k in corpus]
        write_atomic(path, json.dumps(rows, ensure_ascii=False).encode("utf-8"))
    return corpus


def _collect(rules: Any, catalogue: Any) -> Iterable[Known]:
    seen: set[tuple[str, str, str, str]] = set()

    def known(
        text: str, cause: str = "", symptom: str = "", source: str = "", negates: str = ""
    ) -> Known | None:
        text = " ".join(text.split())
        shaped = shape(text)
        key = (shaped, cause, symptom, negates)
        if len(shaped) < MIN_CHARS or key in seen:
            return None
        seen.add(key)
        if negates:
            return Known(text, shaped, words_of(shaped), source=source, negates=negates)
        return Known(text, shaped, words_of(shaped), cause, symptom, source)

    def slow_only(cause: Any) -> bool:  # its examples are measurements, not messages
        groups = {getattr(rules.symptoms.get(s), "group", "") for s in cause.symptoms}
        return groups == {"slow"}

    nodes = [(c, "cause") for c in rules.causes.values() if not slow_only(c)]
    nodes += [(s, "symptom") for s in rules.symptoms.values() if s.group != "slow"]
    for node, kind in nodes:
        texts = [
            line
            for t in getattr(node, "examples", []) or []
            for line in evidence_lines(t, node)
            if level_of(line) != "info"
        ]
        for sig in node.signatures:
            texts.extend(m.text for m in sig.matchers if m.type in ("substring", "fuzzy"))
        for text in texts:
            k = known(
                text,
                cause=node.id if kind == "cause" else "",
                symptom=node.id if kind == "symptom" else "",
                source=f"rules/{node.id}",
            )
            if k is not None:
                yield k
        meaning = node.id if kind == "cause" else f"symptom:{node.id}"
        for text in getattr(node, "no_match", []) or []:  # what the rule says it is not
            k = known(text, source=f"rules/{node.id}", negates=meaning)
            if k is not None:
                yield k
    if catalogue is None:
        return
    words = catalogue_symptoms(rules)
    # a message of a failure that counts only when pasted says what failed, not why: a
    # typed line close to it names nothing (its exact paste is that failure, engine.py)
    words = {w: sid for w, sid in words.items() if not pasted_only(rules, sid)}
    for m in getattr(catalogue, "messages", ()):
        cls = message_class(m)
        cause = str(getattr(m, "cause", "") or "") if cls == "cause" else ""
        symptom = words.get(str(getattr(m, "symptom", "") or ""), "") if cls == "symptom" else ""
        if cause not in rules.causes:
            cause = ""
        benign = cls == "benign"
        if (not cause and not symptom and not benign) or getattr(m, "level", "") == "info":
            continue  # an INFO line, or a meaning the rules cannot answer
        k = known(str(m.template), cause, symptom, f"catalogue/{m.library}", "*" if benign else "")
        if k is not None:
            yield k


def evidence_lines(example: str, node: Any) -> list[str]:
    """The lines of a rule's `match` example that are its evidence: a one-line example is
    the message itself; of a log, only the lines one of the rule's matchers fires on (its
    other lines are context: a port-in-use example's generic `NCCL error in: ...` line,
    whose meaning comes from the `Address already in use` below it, means nothing alone)."""
    lines = [line for line in example.splitlines() if line.strip()]
    if len(lines) <= 1:
        return [example]
    return [line for line in lines if _fires(node, line)]


def _fires(node: Any, line: str) -> bool:
    """Whether a regex or substring matcher of one of `node`'s signatures matches `line`,
    as the diagnosis matches it (past a launcher's or logger's prefix)."""
    from kb.diagnosis.decorations import content_start
    from kb.diagnosis.matching import CompiledMatcher

    content = content_start(line)
    for sig in getattr(node, "signatures", ()):
        for m in sig.matchers:
            if m.type in ("regex", "substring"):
                try:
                    matcher = CompiledMatcher(m)
                except Exception:  # an RE2 error is lint's to report
                    continue
                if matcher.search_line(line, content) is not None:
                    return True
    return False


def cut_ends(shaped: str) -> tuple[str, str]:
    """The first and last words of a shaped line: a paste cut mid-word leaves a piece of
    a word there (`annot open shared object file`, `... Process wil`)."""
    found = _WORD.findall(shaped)
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


_AFTER = re.compile(r"[:：]\s*|\s+-\s+")  # where a title or a sentence hands over to the message
_PROSE = re.compile(r"[^\W\d_]+(?:\s+[^\W\d_]+)+")  # two words or more, letters only


def _spans(text: str) -> list[str]:
    """The shapes to compare of one line: the whole line, and, when it opens with the
    user's own words and a colon (`Distributed model training with nccl error：NCCL WARN
    NET/IB Got completion error 12`), what follows them: those words would hide it."""
    out = [shape(text)]
    m = _AFTER.search(text)
    if m is not None and _PROSE.fullmatch(text[: m.start()].strip()):
        out.append(shape(text[m.end() :]))
    return [
        p for p in dict.fromkeys(out) if len(p) >= MIN_CHARS and len(_WORD.findall(p)) >= MIN_WORDS
    ]


def _closest_to(
    corpus: list[Known],
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
