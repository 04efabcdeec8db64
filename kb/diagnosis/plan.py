"""What a diagnosis with given rules always needs, built once per rules object: the
prefilter patterns, who consumes the lines each one finds, and the scanners.

A prefilter pattern must find every line its matcher could fire on, so a regex goes in
without its start and end anchors (the matcher also fires on a line's content, after
quoting and launcher prefixes, and on a stretch quoted in prose:
`kb.diagnosis.decorations`), a fuzzy text as its anchor words.
An analyzer tap anchored at a line start is treated alike: the session checks the
anchored pattern on the line, then on its content, and delivers what matched.

Line-scope `unless` matchers get an index of their own (`VetoIndex`): when a signature's
matcher fires on thousands of lines that its line veto then rejects, the session asks
the index which lines of a block the veto rejects, at automaton speed, and never looks
at them; only vetoes whose automaton hit proves the veto (`line_exact`) take part.
"""

from __future__ import annotations

import os
from functools import cache, cached_property
from typing import Any

from kb.diagnosis.analyzers import default_analyzers
from kb.diagnosis.analyzers.base import Analyzer, Tap
from kb.diagnosis.compiled import CompiledRules
from kb.diagnosis.decorations import (
    has_line_anchor,
    line_exact,
    without_anchors,
    without_line_anchors,
)
from kb.diagnosis.matching import CompiledMatcher, MatcherSpec, SignatureSpec, anchor_regex
from kb.diagnosis.reader import MAX_LINE, Block
from kb.diagnosis.scanner import Pattern, Scanner
from kb.util import cachepickle
from kb.util.digest import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:  # a warm run names its caches by plain strings: pathlib is not imported
    from pathlib import Path


def prefilter(m: MatcherSpec) -> Pattern:
    """A pattern that matches every line the matcher could fire on (and maybe more)."""
    from kb.util.regexlit import literal  # here: a warm run reads its patterns back

    if m.type == "regex":
        return Pattern(without_anchors(m.pattern), m.ignore_case)
    if m.type == "substring":
        return Pattern(literal(m.text), m.ignore_case)
    anchors = CompiledMatcher(m).anchors
    if not anchors:
        return Pattern("[^\\n]")  # a fuzzy text without words: every non-empty line
    return Pattern(anchor_regex(anchors), True)


@cache  # the catalogue's signatures repeat their cause's own matchers as vetoes
def exact_pattern(m: MatcherSpec) -> Pattern | None:
    """A pattern whose hit on a line proves that matcher `m` fires there, or None."""
    from kb.util.regexlit import literal

    if m.type == "substring" and (m.text.isascii() or not m.ignore_case) and m.text:
        return Pattern(literal(m.text), m.ignore_case)
    if m.type == "regex" and not m.where and line_exact(m.pattern):  # bounds: not proven
        return Pattern(m.pattern, m.ignore_case)
    return None


class _Record:
    """Equality, hash and repr by the fields named in `_FIELDS`, as a frozen dataclass has
    them: the plan's records are plain classes, since a dataclass costs a millisecond to
    make at every start (the warm-start tests compare a plan read back with one built)."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS)
        return f"{type(self).__name__}({fields})"


class PlannedTap(_Record):
    """An analyzer's tap as the plan scans for it: which analyzer (its place in
    `Plan.analyzer_kinds`, and so in every session's analyzers) and, for a tap anchored
    at a line start, that anchored pattern, checked on the line and then its content."""

    __slots__ = ("__dict__", "analyzer", "anchored", "line_anchored", "tap")  # `rx` is cached
    _FIELDS = ("analyzer", "tap", "line_anchored", "anchored")

    def __init__(
        self, analyzer: int, tap: Tap, line_anchored: bool = False, anchored: Any = None
    ) -> None:
        self.analyzer = analyzer
        self.tap = tap
        self.line_anchored = line_anchored  # the tap's pattern is anchored at a line start
        self.anchored = anchored  # that anchored pattern as RE2 (None: RE2 does not take it)

    @cached_property
    def rx(self) -> Any:
        """The tap as RE2, for the reference path (None: RE2 does not take it)."""
        return _compile_tap(self.tap)


class MatcherLine(_Record):
    """Matcher `matcher` of signature `sig` (its place in `Plan.specs`) takes the lines."""

    __slots__ = ("matcher", "sig")
    _FIELDS = ("sig", "matcher")

    def __init__(self, sig: int, matcher: int) -> None:
        self.sig = sig
        self.matcher = matcher

    def __reduce__(self) -> tuple[type[MatcherLine], tuple[int, int]]:  # the cached part
        return MatcherLine, (self.sig, self.matcher)


class LogVeto(_Record):
    """The log-scope vetoes of signature `sig` take the lines."""

    __slots__ = ("sig",)
    _FIELDS = ("sig",)

    def __init__(self, sig: int) -> None:
        self.sig = sig

    def __reduce__(self) -> tuple[type[LogVeto], tuple[int]]:
        return LogVeto, (self.sig,)


class TapLine(_Record):
    """An analyzer's tap takes the lines."""

    __slots__ = ("planned",)
    _FIELDS = ("planned",)

    def __init__(self, planned: PlannedTap) -> None:
        self.planned = planned


Consumer = MatcherLine | LogVeto | TapLine


class VetoIndex:
    """The lines of a block that a signature's line vetoes reject, found by automaton."""

    def __init__(
        self, patterns: list[Pattern], by_sig: dict[int, tuple[int, ...]], hs: bool, key: str = ""
    ) -> None:
        self.patterns = patterns
        self.by_sig = by_sig  # signature index -> ids of its exact line-veto patterns
        self.use_hyperscan = hs
        self.key = key  # stands for `patterns` (`Scanner`'s key)
        self._scanner: Scanner | None = None

    @property
    def scanner(self) -> Scanner:
        if self._scanner is None:  # exact patterns only: a superset would drop real lines
            self._scanner = Scanner(self.patterns, self.use_hyperscan, key=self.key)
        return self._scanner

    def rejected(self, vetoes: tuple[int, ...], block: Block) -> list[tuple[int, int]]:
        """(start, end) offsets (in `block.data`), in order, of the lines these vetoes
        reject (a line longer than `MAX_LINE` is decoded cut, so it is left to matching)."""
        spans: set[tuple[int, int]] = set()
        for pid in vetoes:
            spans.update(
                (start, end)
                for start, end in self.scanner.line_spans(pid, block)
                if end - start <= MAX_LINE
            )
        return sorted(spans)

    def masked(self, vetoes: tuple[int, ...], block: Block) -> Block:
        """A copy of the block with the lines these vetoes reject left empty (their line
        numbers stay as they were)."""
        data, pos, parts = block.data, block.lo, []
        for start, end in self.rejected(vetoes, block):
            parts.append(data[pos:start])
            pos = end  # keep the line's newline
        parts.append(data[pos : block.hi])
        out = b"".join(parts)
        return Block(out, 0, len(out), block.first_line, block.lines, 0)


class SignaturePart:
    """The plan's part that depends on the signatures alone (most of its cost: a prefilter
    pattern for each of thousands of matchers), cached on disk beside the compiled rules
    (`_cached_part`): the prefilter patterns in order, who takes each one's lines, each
    signature's matchers' pattern ids, and the exact line-veto patterns with each
    signature's ids among them; `digest`, a content key of both pattern lists, made when
    the part is built and cached with it, names the scanners' cached hyperscan databases
    (a warm start need not digest a thousand patterns again). A plain class: a dataclass
    costs a millisecond to make at every start, and this one is never compared."""

    def __init__(
        self,
        patterns: tuple[Pattern, ...],
        consumers: tuple[tuple[Consumer, ...], ...],
        pids_of: tuple[tuple[int, ...], ...],
        veto_patterns: tuple[Pattern, ...],
        vetoes_of: dict[int, tuple[int, ...]],
    ) -> None:
        self.patterns = patterns
        self.consumers = consumers
        self.pids_of = pids_of
        self.veto_patterns = veto_patterns
        self.vetoes_of = vetoes_of
        self.digest = blake2b(repr((patterns, veto_patterns)).encode(), digest_size=16).hexdigest()


def signature_part(specs: list[tuple[str, SignatureSpec]]) -> SignaturePart:
    """Build the signatures' part of a plan (`Plan` adds the analyzers' taps after it)."""
    patterns: list[Pattern] = []
    index: dict[Pattern, int] = {}
    consumers: list[list[Consumer]] = []

    def consume(pattern: Pattern, consumer: Consumer) -> int:
        pid = index.setdefault(pattern, len(patterns))
        if pid == len(patterns):
            patterns.append(pattern)
            consumers.append([])
        consumers[pid].append(consumer)
        return pid

    veto_patterns: list[Pattern] = []
    veto_ids: dict[Pattern, int] = {}
    by_sig: dict[int, list[int]] = {}
    pids_of: list[tuple[int, ...]] = []
    for si, (_rid, spec) in enumerate(specs):
        pids_of.append(
            tuple(consume(prefilter(m), MatcherLine(si, mi)) for mi, m in enumerate(spec.matchers))
        )
        for v in spec.unless:
            if v.scope == "log":
                consume(prefilter(v), LogVeto(si))
            elif (p := exact_pattern(v)) is not None:
                vid = veto_ids.setdefault(p, len(veto_patterns))
                if vid == len(veto_patterns):
                    veto_patterns.append(p)
                by_sig.setdefault(si, []).append(vid)
    return SignaturePart(
        tuple(patterns),
        tuple(tuple(c) for c in consumers),
        tuple(pids_of),
        tuple(veto_patterns),
        {si: tuple(sorted(set(v))) for si, v in by_sig.items()},
    )


class Plan:
    """Prefilter patterns, their consumers and the scanners, for one rules object."""

    def __init__(self, rules: CompiledRules, use_hyperscan: bool) -> None:
        self.specs = rules.signatures()
        part = _cached_part(rules, self.specs)
        self.patterns: list[Pattern] = list(part.patterns)
        # a pattern's fields as its key: equal exactly when the patterns are, and hashed in C
        # (a Pattern's own hash is a Python call, a millisecond for a thousand)
        self._index: dict[tuple[str, bool, bool], int] = {
            (p.regex, p.caseless, p.lazy): i for i, p in enumerate(self.patterns)
        }
        # pattern id -> who takes its lines
        self.consumers: list[list[Consumer]] = [list(c) for c in part.consumers]
        self.pids_of = part.pids_of  # signature index -> its matchers' pattern ids
        # the framework markers are rules (rules/vocabulary): the setting analyzer's taps
        self.framework_markers = rules.vocabulary.framework_markers
        analyzers = default_analyzers(self.framework_markers)
        # the analyzers' classes in their order: a session's analyzers are made from them
        self.analyzer_kinds: tuple[type[Analyzer], ...] = tuple(type(a) for a in analyzers)
        self.taps: list[PlannedTap] = []
        tapped: set[int] = set()  # the ids of the patterns an analyzer's tap takes lines of
        for ai, a in enumerate(analyzers):
            for tap in a.taps:
                pattern = tap.pattern
                planned = PlannedTap(ai, tap)
                if has_line_anchor(pattern):
                    planned = PlannedTap(ai, tap, True, _compile_tap(tap))
                    pattern = without_line_anchors(pattern)
                self.taps.append(planned)
                tapped.add(
                    self._consume(Pattern(pattern, tap.ignore_case, tap.frequent), TapLine(planned))
                )
        # matchers confirm each candidate line; analyzer taps trust theirs
        self._approximate = frozenset(range(len(self.patterns))) - tapped
        self.use_hyperscan = use_hyperscan
        # what the part's digest does not cover: the taps' patterns and which ids they take
        taps = repr((self.patterns[len(part.patterns) :], sorted(tapped))).encode()
        self._scan_key = blake2b(part.digest.encode() + b"\0" + taps, digest_size=16).hexdigest()
        veto_key = f"{part.digest}-vetoes"
        self.vetoes = VetoIndex(list(part.veto_patterns), part.vetoes_of, use_hyperscan, veto_key)
        self._scanner: Scanner | None = None

    def new_analyzers(self) -> list[Analyzer]:
        """Fresh analyzers, in the order `PlannedTap.analyzer` indexes (checked: a plan
        made before the analyzers changed would give lines to the wrong ones)."""
        analyzers = default_analyzers(self.framework_markers)
        if tuple(type(a) for a in analyzers) != self.analyzer_kinds:
            raise RuntimeError("the analyzers changed after the scan plan was made")
        return analyzers

    def _consume(self, pattern: Pattern, consumer: Consumer) -> int:
        key = (pattern.regex, pattern.caseless, pattern.lazy)
        pid = self._index.get(key)
        if pid is None:
            pid = self._index[key] = len(self.patterns)
            self.patterns.append(pattern)
            self.consumers.append([])
        self.consumers[pid].append(consumer)
        return pid

    @property
    def scanner(self) -> Scanner:
        if self._scanner is None:
            self._scanner = Scanner(
                self.patterns, self.use_hyperscan, self._approximate, key=self._scan_key
            )
        return self._scanner


def plan_for(rules: CompiledRules, use_hyperscan: bool = True) -> Plan:
    """The plan of `rules`, cached on the rules object."""
    if use_hyperscan not in rules.plans:
        rules.plans[use_hyperscan] = Plan(rules, use_hyperscan)
    plan: Plan = rules.plans[use_hyperscan]
    return plan


PART_FORMAT = "dlperf-plan-part/4"  # 2: consumers as tuples; 3: its digest; 4: by __init__


def _part_sources() -> list[str]:
    """The modules that decide a signature's prefilter pattern: a part cached by another
    version of them is never read back."""
    here = os.path.dirname(__file__)  # absolute: imported modules have absolute paths
    util = os.path.join(os.path.dirname(here), "util")
    names = ("plan.py", "decorations.py", "matching.py", "shapes.py", "scanner.py", "specs.py")
    return [*(os.path.join(here, n) for n in names), os.path.join(util, "regexlit.py")]


def part_key(rules_key: str) -> str:
    """The cache key of the signature part of the rules whose content key is `rules_key`."""
    h = blake2b(f"{PART_FORMAT}\0{rules_key}\0".encode(), digest_size=16)
    for source in _part_sources():
        try:
            with open(source, "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(b"\0missing")
        h.update(b"\0")
    return h.hexdigest()


def part_path(key: str) -> Path:
    from pathlib import Path

    return Path(_part_file(key))


def _part_file(key: str) -> str:
    from kb.util.paths import cache_file

    return cache_file(f"plan-{key}.pickle")


def _cached_part(rules: CompiledRules, specs: list[tuple[str, SignatureSpec]]) -> SignaturePart:
    """The signature part of `rules`' plan: read back from the cache when the rules come
    from theirs (they have a content key) and it holds one made by these modules, else
    built (and then cached). Rules compiled in memory have no key: built every time."""
    if not rules.key:
        return signature_part(specs)
    key = part_key(rules.key)
    allowed = cachepickle.allow(SignaturePart, Pattern, MatcherLine, LogVeto)
    got = cachepickle.load(_part_file(key), allowed)
    ids = [(rid, spec.id, len(spec.matchers)) for rid, spec in specs]  # rules edited in memory
    if isinstance(got, tuple) and len(got) == 4 and got[:3] == (PART_FORMAT, key, ids):
        part = got[3]
        if isinstance(part, SignaturePart):
            return part
    part = signature_part(specs)
    cachepickle.save(_part_file(key), (PART_FORMAT, key, ids, part))
    return part


def _compile_tap(tap: Tap) -> object | None:
    import re2

    from kb.diagnosis.scanner import _options

    try:
        compiled: object = re2.compile(tap.pattern, _options(tap.ignore_case))
        return compiled
    except re2.error:
        return None
