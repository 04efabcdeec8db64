"""What it means for a signature to fire: the one definition of matching semantics.

The fast scanner (which finds candidate lines in gigabytes of log) and the rule tests
(which run each rule's inline examples) both feed lines into `SignatureMatcher`, so a
rule behaves the same in a pasted snippet and in a 1 GB log.

Signatures arrive either as the pydantic models of `kb.schema` or as the plain
`SignatureSpec` of the compiled-rules cache; this module converts the first into the
second and never imports pydantic itself, so `dlperf-help diagnose` starts fast.

Semantics, in one place:
- a regex matcher fires on a line where its RE2 pattern is found; named groups are values;
- a substring matcher fires where its text occurs (optionally ignoring case);
- a fuzzy matcher fires where the line's *shape* (numbers, hex, addresses, paths
  masked) reaches `threshold` against the text's shape with rapidfuzz `partial_ratio`,
  provided the line holds at least one of the text's anchor words (its longer words,
  common log words aside) as a word (not inside a longer one: `connect` is not in
  `connection`) and is not much shorter than the text; in a line more than six times
  the text's length only the stretches around anchor words are compared;
- a regex anchored at a line start (`^`) also fires on a line's *content*: the line
  after quoting and launcher prefixes (`> `, `[rank3]:`, `(pid=12)`, ...; see
  `kb.diagnosis.decorations`), its span counted in the whole line;
- `condition: or` fires when any matcher fires on some line, `and` when every matcher
  fires somewhere in the same log; `unless` matchers veto the line (`scope: line`) or
  the whole log (`scope: log`);
- `extract` regexes pull more values from the lines that fired;
- a line fed twice (a physical line, then the logical line that a terminal wrapped
  into several) gives each matcher at most one hit.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kb.diagnosis.decorations import content_start, has_line_anchor

# a line's shape and a fuzzy text's anchor words, re-exported: kb.matching is the API
from kb.diagnosis.shapes import ANSI, anchor_regex, anchors_of, clean, mask  # noqa: F401
from kb.re2syntax import compile_re2

# ---------------------------------------------------------------- plain specs


@dataclass(frozen=True)
class MatcherSpec:
    """One matcher, as plain data (see the module docstring for what each type means)."""

    type: str  # "regex", "substring" or "fuzzy"
    pattern: str = ""  # regex
    text: str = ""  # substring, fuzzy
    ignore_case: bool = False
    scope: str = "log"  # for `unless` matchers
    threshold: float = 85.0  # fuzzy

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if v not in ("", None)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatcherSpec:
        return cls(**data)


@dataclass(frozen=True)
class SignatureSpec:
    """One signature, as plain data with the attribute names of `kb.schema.Signature`."""

    id: str
    matchers: tuple[MatcherSpec, ...]
    condition: str = "or"
    unless: tuple[MatcherSpec, ...] = ()
    weight: float = 0.8
    alone: bool = True
    note: str | None = None  # English text
    extract: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "matchers": [m.to_json() for m in self.matchers],
            "condition": self.condition,
            "unless": [m.to_json() for m in self.unless],
            "weight": self.weight,
            "alone": self.alone,
            "note": self.note,
            "extract": dict(self.extract),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SignatureSpec:
        return cls(
            id=data["id"],
            matchers=tuple(MatcherSpec.from_json(m) for m in data["matchers"]),
            condition=data.get("condition", "or"),
            unless=tuple(MatcherSpec.from_json(m) for m in data.get("unless", ())),
            weight=float(data.get("weight", 0.8)),
            alone=bool(data.get("alone", True)),
            note=data.get("note"),
            extract=dict(data.get("extract", {})),
        )


def _english(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return str(getattr(value, "en", value))


def matcher_spec(m: Any) -> MatcherSpec:
    """A pydantic matcher (or a spec) as a `MatcherSpec`."""
    if isinstance(m, MatcherSpec):
        return m
    return MatcherSpec(
        type=m.type,
        pattern=getattr(m, "pattern", "") or "",
        text=getattr(m, "text", "") or "",
        ignore_case=bool(m.ignore_case),
        scope=m.scope,
        threshold=float(getattr(m, "threshold", 85.0)),
    )


def signature_spec(sig: Any) -> SignatureSpec:
    """A pydantic `Signature` (or a spec) as a `SignatureSpec`."""
    if isinstance(sig, SignatureSpec):
        return sig
    return SignatureSpec(
        id=sig.id,
        matchers=tuple(matcher_spec(m) for m in sig.matchers),
        condition=sig.condition,
        unless=tuple(matcher_spec(m) for m in sig.unless),
        weight=float(sig.weight),
        alone=bool(sig.alone),
        note=_english(sig.note),
        extract=dict(sig.extract),
    )


# ---------------------------------------------------------------- one matcher


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    params: dict[str, str]


# digits 1-9 -> "1": lines that differ only in their numbers share one fuzzy verdict
_DIGITS = str.maketrans("23456789", "11111111")
_FUZZY_CACHE_MAX = 8192
FUZZY_WINDOWS = 8  # stretches of a long line compared with a fuzzy text, at most


class CompiledMatcher:
    """One matcher, ready to test lines."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec = matcher_spec(spec)
        self.kind = spec.type
        self.anchored = False  # a regex anchored at a line start: also tried on the content
        if spec.type == "regex":
            self._rx = compile_re2(spec.pattern, spec.ignore_case)
            self.anchored = has_line_anchor(spec.pattern)
        elif spec.type == "substring":
            self._needle = spec.text.lower() if spec.ignore_case else spec.text
        elif spec.type == "fuzzy":
            self._template = mask(spec.text).lower()
            self._threshold = spec.threshold
            self.anchors = anchors_of(spec.text)
            self._anchor_rx = re.compile(anchor_regex(self.anchors)) if self.anchors else None
            self._by_key: dict[str, bool] = {}
            self._by_shape: dict[str, bool] = {}
        else:
            raise ValueError(f"unknown matcher type {spec.type!r}")

    def search(self, line: str) -> Span | None:
        kind = self.kind
        if kind == "regex":
            m = self._rx.search(line)
            if m is None:
                return None
            params = {k: v for k, v in m.groupdict().items() if v is not None}
            return Span(m.start(), m.end(), params)
        if kind == "substring":
            hay = line.lower() if self.spec.ignore_case else line
            i = hay.find(self._needle)
            return None if i < 0 else Span(i, i + len(self._needle), {})
        return Span(0, len(line), {}) if self._fuzzy(line) else None

    def search_line(self, line: str, content: int) -> Span | None:
        """`search` on the line, and for an anchored regex also on its content (the
        line from offset `content` on, past its decorations)."""
        span = self.search(line)
        if span is None and self.anchored and content > 0:
            inner = self.search(line[content:])
            if inner is not None:
                span = Span(inner.start + content, inner.end + content, inner.params)
        return span

    def _fuzzy(self, line: str) -> bool:
        low = line.lower()
        if self._anchor_rx is not None and self._anchor_rx.search(low) is None:
            return False
        key = line.translate(_DIGITS)
        hit = self._by_key.get(key)
        if hit is None:
            hit = any(self._shape_hit(mask(part).lower()) for part in self._parts(low))
            if len(self._by_key) >= _FUZZY_CACHE_MAX:
                self._by_key.clear()
            self._by_key[key] = hit
        return hit

    def _parts(self, low: str) -> list[str]:
        """The line, or for a long line the stretches around its anchor words (the part
        aligned with the text must hold one), so a 64 KB line costs what a short one does."""
        reach = 2 * len(self.spec.text)
        if len(low) <= 3 * reach or self._anchor_rx is None:
            return [low]
        parts: list[str] = []
        for m in self._anchor_rx.finditer(low):
            parts.append(low[max(0, m.start() - reach) : m.end() + reach])
            if len(parts) >= FUZZY_WINDOWS:
                break
        return parts

    def _shape_hit(self, shape: str) -> bool:
        hit = self._by_shape.get(shape)
        if hit is None:
            hit = self._score(shape)
            if len(self._by_shape) >= _FUZZY_CACHE_MAX:
                self._by_shape.clear()
            self._by_shape[shape] = hit
        return hit

    def _score(self, shape: str) -> bool:
        # a fragment much shorter than the template is not evidence of it
        if len(shape) < 0.6 * len(self._template):
            return False
        from rapidfuzz import fuzz

        score = fuzz.partial_ratio(self._template, shape, score_cutoff=self._threshold)
        return bool(score)


# ---------------------------------------------------------------- one signature


@dataclass
class Hit:
    """A line that fired a signature's matcher."""

    line_no: int  # 1-based
    text: str
    start: int
    end: int
    params: dict[str, str] = field(default_factory=dict)
    file: str = ""  # the log it came from, set by the diagnosis


@dataclass
class SignatureResult:
    signature: SignatureSpec
    hits: list[Hit]
    params: dict[str, str]


class SignatureMatcher:
    """Accumulates the lines of one log and says whether a signature fired on it."""

    MAX_HITS = 20

    def __init__(self, signature: Any) -> None:
        self.signature = spec = signature_spec(signature)
        self.matchers = [CompiledMatcher(m) for m in spec.matchers]
        self.line_vetoes = [CompiledMatcher(m) for m in spec.unless if m.scope == "line"]
        self.log_vetoes = [CompiledMatcher(m) for m in spec.unless if m.scope == "log"]
        self.extractors = {name: compile_re2(rx) for name, rx in spec.extract.items()}
        self.reset()

    def reset(self) -> None:
        """Forget the log fed so far (the compiled matchers are kept)."""
        self.hits: list[list[Hit]] = [[] for _ in self.matchers]
        self.vetoed = False
        self.line_vetoed = 0  # lines a matcher fired on that a line-scope `unless` rejected

    @property
    def saturated(self) -> bool:
        """True when more lines cannot change the result (vetoes aside)."""
        return self.vetoed or all(len(h) >= self.MAX_HITS for h in self.hits)

    def feed(
        self,
        line_no: int,
        line: str,
        again: bool = False,
        only: Collection[int] | None = None,
        log_vetoes: bool = True,
    ) -> None:
        """Test one line (already cleaned of ANSI codes and line ends); `again` when the
        line (by number) may have been fed before, as part of a wrapped logical line.
        A caller that knows which matchers could fire (a prefilter) passes their indices
        as `only`, and `log_vetoes=False` when no log veto can fire on the line."""
        if self.vetoed:
            return
        content = content_start(line)
        if log_vetoes:
            for veto in self.log_vetoes:
                if veto.search_line(line, content):
                    self.vetoed = True
                    return
        matchers = self.matchers
        spans = [
            (i, s)
            for i in (range(len(matchers)) if only is None else only)
            if (s := matchers[i].search_line(line, content))
        ]
        if not spans:
            return
        if any(v.search_line(line, content) for v in self.line_vetoes):
            self.line_vetoed += 1
            return
        for i, span in spans:
            hits = self.hits[i]
            if again and any(h.line_no == line_no for h in hits):
                continue
            if len(hits) < self.MAX_HITS:
                hits.append(Hit(line_no, line, span.start, span.end, dict(span.params)))

    def result(self) -> SignatureResult | None:
        if self.vetoed:
            return None
        fired = [h for h in self.hits if h]
        if self.signature.condition == "and":
            if len(fired) != len(self.matchers):
                return None
        elif not fired:
            return None
        hits = sorted((h for hs in fired for h in hs), key=lambda h: h.line_no)
        params: dict[str, str] = {}
        for hit in hits:
            for k, v in hit.params.items():
                params.setdefault(k, v)
            for name, rx in self.extractors.items():
                if name in params:
                    continue
                m = rx.search(hit.text)
                if m is not None:
                    value = m.group(name) if name in rx.groupindex else m.group(1)
                    if value is not None:
                        params[name] = value
                        hit.params.setdefault(name, value)
        return SignatureResult(self.signature, hits, params)


def run_signatures(signatures: Iterable[Any], lines: Iterable[str]) -> list[SignatureResult]:
    """Evaluate signatures on a small log the simple way (every line, every matcher)."""
    matchers = [SignatureMatcher(s) for s in signatures]
    for n, raw in enumerate(lines, start=1):
        line = clean(raw)
        for m in matchers:
            m.feed(n, line)
    return [r for m in matchers if (r := m.result()) is not None]
