"""The known messages approximate matching compares a line with, shaped once.

Why its own module: the corpus (the rules' `match` examples, their substring and fuzzy
texts and `no_match` examples, the message catalogue's templates) is built and cached
apart from how a line is scored against it (`approximate.py`); both shape text the same
way (`shape`, `words_of`), numbers, addresses and paths masked, case and punctuation
ignored.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from kb.diagnosis.failure import catalogue_symptoms, message_class, pasted_only
from kb.diagnosis.lines import level_of
from kb.diagnosis.shapes import mask
from kb.util.lazyre import LazyPattern
from kb.util.record import record

MIN_CHARS = 8  # a shaped text shorter than this is no message to compare

_PUNCT = LazyPattern(r"[^a-z0-9<>]+")
# a catalogue template's printf and format placeholders, as the masks write a value
_PLACEHOLDER = LazyPattern(r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspn]|\{[\w.:]*\}")
WORD = LazyPattern(r"[a-z][a-z0-9_]{2,}")  # a word of a shaped text
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
    """The specific words of a shaped text: those that say which message it is."""
    return frozenset(w for w in WORD.findall(shaped) if w not in _COMMON)


class KnownCorpus(Sequence[Known]):
    """The known messages as the cache holds them, each `Known` made when first asked for
    (a line meets only the few its words index, `kb.diagnosis.wordindex`), with the word
    index's postings (each word -> the messages holding it) read back beside them.

    Each row is one text, its fields joined by tabs (text, shape, words joined by spaces,
    cause, symptom, source, negates: shaped and joined texts hold no tab), and each
    posting an array of unsigned ints: a pickle of these loads in a third of the time of
    tuples and lists."""

    def __init__(self, rows: list[str], postings: dict[str, bytes]) -> None:
        self.rows = rows
        self.packed_postings = postings
        self.postings = _Postings(postings)
        self._made: dict[int, Known] = {}

    @classmethod
    def of(cls, corpus: list[Known]) -> KnownCorpus:
        from array import array

        rows = [
            "\t".join(
                (
                    k.text,
                    k.shape,
                    " ".join(sorted(k.words)),
                    k.cause,
                    k.symptom,
                    k.source,
                    k.negates,
                )
            )
            for k in corpus
        ]
        postings: dict[str, array[int]] = {}
        for i, k in enumerate(corpus):
            for w in sorted(k.words):
                postings.setdefault(w, array("I")).append(i)
        made = cls(rows, {w: ids.tobytes() for w, ids in postings.items()})
        made._made = dict(enumerate(corpus))
        return made

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> Known: ...
    @overload
    def __getitem__(self, i: slice) -> list[Known]: ...
    def __getitem__(self, i: int | slice) -> Known | list[Known]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self.rows)))]
        k = self._made.get(i)
        if k is None:
            text, shaped, words, cause, symptom, source, negates = self.rows[i].split("\t")
            k = Known(text, shaped, frozenset(words.split()), cause, symptom, source, negates)
            self._made[i] = k
        return k


class _Postings(Mapping[str, Sequence[int]]):
    """Word -> the indices of the messages holding it, each array read when looked up."""

    def __init__(self, packed: dict[str, bytes]) -> None:
        self._packed = packed

    def __getitem__(self, word: str) -> Sequence[int]:
        return memoryview(self._packed[word]).cast("I")

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)


_CORPORA: dict[tuple[str, int], KnownCorpus] = {}

CACHE_FORMAT = "dlperf-approximate/5"  # 4: of a multi-line example, only its evidence lines; 5: a packed pickle, by the catalogue's key
# the modules whose code decides what the corpus holds (shapes, classes, levels, evidence)
_SOURCES = ("approx_corpus.py", "shapes.py", "failure.py", "lines.py", "decorations.py")


def known_messages(rules: Any, catalogue: Any = None) -> KnownCorpus:
    """Every message the rules (and the catalogue) know, shaped: kept in memory per rules
    and catalogue, and on disk beside the compiled rules (shaping thousands of catalogue
    templates costs more than a pasted line may wait)."""
    key = (str(getattr(rules, "key", id(rules))), id(catalogue))
    if key not in _CORPORA:
        _CORPORA.clear()
        _CORPORA[key] = _cached(rules, catalogue)
    return _CORPORA[key]


def _cached(rules: Any, catalogue: Any) -> KnownCorpus:
    """The corpus from the cache named by the rules' key and the catalogue's content key
    (`kb.rules.catalogue.loader.content_key`: neither the catalogue's messages nor the
    corpus are built when it is there), else built and kept."""
    rules_key = str(getattr(rules, "key", "") or "")
    if not rules_key:  # rules compiled in memory (a KnowledgeBase): nothing to key on
        return KnownCorpus.of(list(_collect(rules, catalogue)))
    from kb.util import cachepickle
    from kb.util.paths import cache_file

    name = _cache_name(rules_key, catalogue)
    path = cache_file(f"approximate-{name}.pickle")
    data = cachepickle.load(path, {})
    if isinstance(data, dict) and data.get("name") == name:
        return KnownCorpus(data["rows"], data["postings"])
    corpus = KnownCorpus.of(list(_collect(rules, catalogue)))
    saved = {"name": name, "rows": corpus.rows, "postings": corpus.packed_postings}
    cachepickle.save(path, saved)
    return corpus


def _cache_name(rules_key: str, catalogue: Any) -> str:
    """What the corpus is made of: the rules (their key), the catalogue (its content key;
    a catalogue built in memory has none, and its messages are hashed) and this code."""
    from kb.util.digest import blake2b

    h = blake2b(f"{CACHE_FORMAT}\0{rules_key}".encode(), digest_size=16)
    here = os.path.dirname(os.path.abspath(__file__))
    for name in _SOURCES:
        with contextlib.suppress(OSError), open(os.path.join(here, name), "rb") as fh:
            h.update(fh.read())
    catalogue_key = str(getattr(catalogue, "key", "") or "")
    if catalogue is None or catalogue_key:
        h.update(f"\0catalogue {catalogue_key}".encode())
    else:
        for m in getattr(catalogue, "messages", ()):
            h.update(f"\0{m.library}\0{m.template}\0{message_class(m)}\0{m.cause}".encode())
            h.update(f"\0{m.symptom}\0{m.level}".encode())
    return h.hexdigest()


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
