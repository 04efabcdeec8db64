"""What it means for a signature to fire: the one definition of matching semantics.

The fast scanner (which finds candidate lines in gigabytes of log) and the rule tests
(which run each rule's inline examples) both feed lines into `SignatureMatcher`, so a
rule behaves the same in a pasted snippet and in a 1 GB log.

Signatures arrive either as the pydantic models of `kb.rules.schema` or as the plain
`SignatureSpec` of the compiled-rules cache; this module converts the first into the
second and never imports pydantic itself, so `dlperf-help diagnose` starts fast.

Semantics, in one place:
- a regex matcher fires on a line where its RE2 pattern is found; named groups are values;
  with `where` (bounds on the numbers its groups captured, `kb.rules.numeric`), only on a
  match whose values satisfy every bound: the first such match of the line, left to right
  (a group that did not take part or does not read as a number satisfies none);
- a substring matcher fires where its text occurs (optionally ignoring case);
- a fuzzy matcher fires where the line's *shape* (numbers, hex, addresses, paths
  masked) reaches `threshold` against the text's shape with rapidfuzz `partial_ratio`,
  provided the line holds at least one of the text's anchor words (its longer words,
  common log words aside) as a word (not inside a longer one: `connect` is not in
  `connection`) and is not much shorter than the text; in a line more than six times
  the text's length only the stretches around anchor words are compared;
- a regex anchored at a line's start or end (`^`, `$`) also fires on a line's
  *content*: the line after quoting and launcher prefixes (`> `, `[rank3]:`,
  `(pid=12)`, ...; see `kb.diagnosis.decorations`), and on a stretch of it quoted in
  backticks or double quotes (a message quoted in prose), its span counted in the line;
- an optional part looked for and not found at INFO level (NCCL's `NET/Plugin :
  ... libnccl-net.so: cannot open shared object file`: `kb.diagnosis.lines.is_probe`)
  is never evidence: no matcher fires on it (vetoes still see it);
- `condition: or` fires when any matcher fires on some line, `and` when every matcher
  fires somewhere in the same log; `unless` matchers veto the line (`scope: line`) or
  the whole log (`scope: log`);
- `min_hits: N` fires only when the matchers hit N different lines or more;
  `at_end: true` only when one of the lines hit is among the last meaningful lines of
  the log (`kb.diagnosis.lines.end_lines`): the run stopped there;
- `extract` regexes pull more values from the lines that fired;
- a *logical* line rebuilt from physical ones (`Logical`: a message a terminal or an
  editor wrapped over several lines, joined; a URL-encoded line, decoded) is matched
  too, but a matcher counts it only when its match needs the rebuilding (it spans a
  join, or is found only in the decoded text) and it holds no hit on those physical
  lines yet: one message never counts twice.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

from kb.diagnosis.decorations import content_start, has_any_anchor, quoted
from kb.diagnosis.lines import end_lines, is_probe
from kb.diagnosis.logical import Logical

# a line's shape and a fuzzy text's anchor words, the plain specs and the logical lines,
# re-exported: kb.diagnosis.matching is the API
from kb.diagnosis.shapes import ANSI, anchor_regex, anchors_of, clean, mask
from kb.diagnosis.specs import MatcherSpec, SignatureSpec, matcher_spec, signature_spec
from kb.util.re2syntax import compile_re2
from kb.util.record import field, record

__all__ = [
    "ANSI",
    "CompiledMatcher",
    "Hit",
    "Logical",
    "MatcherSpec",
    "SignatureMatcher",
    "SignatureResult",
    "SignatureSpec",
    "Span",
    "anchor_regex",
    "anchors_of",
    "clean",
    "mask",
    "matcher_spec",
    "run_signatures",
    "signature_spec",
]

# ---------------------------------------------------------------- one matcher


@record(hashable=True)
class Span:
    start: int
    end: int
    params: dict[str, str]

    def __init__(self, start: int, end: int, params: dict[str, str]) -> None:
        self.start = start
        self.end = end
        self.params = params


# digits 1-9 -> "1": lines that differ only in their numbers share one fuzzy verdict
_DIGITS = str.maketrans("23456789", "11111111")
_FUZZY_CACHE_MAX = 8192
FUZZY_WINDOWS = 8  # stretches of a long line compared with a fuzzy text, at most


class CompiledMatcher:
    """One matcher, ready to test lines."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec = matcher_spec(spec)
        self.kind = spec.type
        self.anchored = False  # a regex anchored at a line's start or end: tried on parts too
        if spec.type == "regex":
            self._rx = compile_re2(spec.pattern, spec.ignore_case)
            self.anchored = has_any_anchor(spec.pattern)
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
            m = self._rx.search(line) if not self.spec.where else self._bounded(line)
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
        line from offset `content` on, past its decorations) and on its quoted stretches."""
        span = self.search(line)
        if span is not None or not self.anchored:
            return span
        parts = [(content, len(line))] if content > 0 else []
        for start, end in parts + quoted(line):
            inner = self.search(line[start:end])
            if inner is not None:
                return Span(inner.start + start, inner.end + start, inner.params)
        return None

    def _bounded(self, line: str) -> Any:
        """The first match of the regex whose groups satisfy the `where` bounds, or None."""
        for m in self._rx.finditer(line):
            values = m.groupdict()
            if all(b.holds(values) for b in self.spec.where):
                return m
        return None

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


@record()
class Hit:
    """A line that fired a signature's matcher."""

    line_no: int  # 1-based
    text: str
    start: int
    end: int
    params: dict[str, str] = field(default_factory=dict)
    file: str = ""  # the log it came from, set by the diagnosis
    matched: str | None = None  # the text the matcher saw, when not `text` (a decoded line)

    def __init__(
        self,
        line_no: int,
        text: str,
        start: int,
        end: int,
        params: dict[str, str] | None = None,
        file: str = "",
        matched: str | None = None,
    ) -> None:
        self.line_no = line_no
        self.text = text
        self.start = start
        self.end = end
        self.params = {} if params is None else params
        self.file = file
        self.matched = matched


@record()
class SignatureResult:
    signature: SignatureSpec
    hits: list[Hit]
    params: dict[str, str]

    def __init__(self, signature: SignatureSpec, hits: list[Hit], params: dict[str, str]) -> None:
        self.signature = signature
        self.hits = hits
        self.params = params


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
        self.latest: list[Hit | None] = [None for _ in self.matchers]  # for `at_end`
        self.vetoed = False
        self.line_vetoed = 0  # lines a matcher fired on that a line-scope `unless` rejected

    @property
    def saturated(self) -> bool:
        """True when more lines cannot change the result (vetoes, and for `at_end` the
        log's last lines, aside)."""
        return self.vetoed or all(len(h) >= self.MAX_HITS for h in self.hits)

    def needs(self, index: int) -> bool:
        """Whether matcher `index` still wants the lines it may fire on."""
        return len(self.hits[index]) < self.MAX_HITS

    def feed_end(self, lines: Iterable[tuple[int, str]]) -> None:
        """The log's last lines, for an `at_end` signature whose matchers stopped taking
        lines at their maximum of hits: it must know whether the log ends on one."""
        if not self.signature.at_end:
            return
        seen = {h.line_no for hits in self.hits for h in hits}
        seen.update(h.line_no for h in self.latest if h is not None)
        for line_no, text in lines:
            if line_no not in seen:
                self.feed(line_no, text)

    def feed(
        self,
        line_no: int,
        line: str,
        only: Collection[int] | None = None,
        log_vetoes: bool = True,
    ) -> None:
        """Test one line (already cleaned of ANSI codes and line ends). A caller that
        knows which matchers could fire (a prefilter) passes their indices as `only`,
        and `log_vetoes=False` when no log veto can fire on the line."""
        if self.vetoed:
            return
        content = content_start(line)
        if log_vetoes and self._log_veto(line, content):
            return
        if "Plugin" in line and is_probe(line):
            return
        spans = self._spans(line, content, only)
        if not spans or self._line_veto(line, content):
            return
        for i, span in spans:
            self._add(i, Hit(line_no, line, span.start, span.end, dict(span.params)))

    def feed_logical(
        self, logical: Logical, only: Collection[int] | None = None, log_vetoes: bool = True
    ) -> None:
        """Test a line rebuilt from physical ones (see `Logical`)."""
        if self.vetoed:
            return
        text = logical.text
        content = content_start(text)
        if log_vetoes and self._log_veto(text, content):
            return
        if "Plugin" in text and is_probe(text):
            return
        spans = [
            (i, span)
            for i, span in self._spans(text, content, only)
            if logical.needs_rebuilding(span.start, span.end, self.matchers[i].kind)
            and not any(logical.line_no <= h.line_no <= logical.last for h in self.hits[i])
        ]
        if not spans or self._line_veto(text, content):
            return
        for i, span in spans:
            if logical.original is None:
                hit = Hit(logical.line_at(span.start), text, span.start, span.end)
            else:  # the evidence is the line as the log has it
                start, end = logical.original_span(span.start, span.end)
                hit = Hit(logical.line_no, logical.original, start, end, matched=text)
            hit.params = dict(span.params)
            self._add(i, hit)

    def _log_veto(self, line: str, content: int) -> bool:
        for veto in self.log_vetoes:
            if veto.search_line(line, content):
                self.vetoed = True
                return True
        return False

    def _line_veto(self, line: str, content: int) -> bool:
        if any(v.search_line(line, content) for v in self.line_vetoes):
            self.line_vetoed += 1
            return True
        return False

    def _spans(
        self, line: str, content: int, only: Collection[int] | None
    ) -> list[tuple[int, Span]]:
        matchers = self.matchers
        return [
            (i, s)
            for i in (range(len(matchers)) if only is None else only)
            if (s := matchers[i].search_line(line, content))
        ]

    def _add(self, i: int, hit: Hit) -> None:
        hits = self.hits[i]
        if len(hits) < self.MAX_HITS:
            hits.append(hit)
        latest = self.latest[i]
        if latest is None or hit.line_no >= latest.line_no:
            self.latest[i] = hit

    def result(self, ends: Collection[int] | None = None) -> SignatureResult | None:
        """The signature's result on the log fed so far, or None when it did not fire;
        `ends`: the numbers of the log's last meaningful lines (for `at_end`)."""
        if self.vetoed:
            return None
        spec = self.signature
        fired = [h for h in self.hits if h]
        if spec.condition == "and":
            if len(fired) != len(self.matchers):
                return None
        elif not fired:
            return None
        hits = sorted((h for hs in fired for h in hs), key=lambda h: h.line_no)
        if spec.at_end:  # the line where the log ends is the evidence: it goes first
            last = [h for h in self.latest if h is not None and h.line_no in (ends or ())]
            if not last:
                return None
            last.sort(key=lambda h: -h.line_no)
            hits = last[:1] + [h for h in hits if h is not last[0]]
        if len({h.line_no for h in hits}) < spec.min_hits:
            return None
        params: dict[str, str] = {}
        for hit in hits:
            for k, v in hit.params.items():
                params.setdefault(k, v)
            for name, rx in self.extractors.items():
                if name in params:
                    continue
                m = rx.search(hit.matched or hit.text)
                if m is not None:
                    value = m.group(name) if name in rx.groupindex else m.group(1)
                    if value is not None:
                        params[name] = value
                        hit.params.setdefault(name, value)
        return SignatureResult(spec, hits, params)


def run_signatures(signatures: Iterable[Any], lines: Iterable[str]) -> list[SignatureResult]:
    """Evaluate signatures on a small log the simple way (every line, every matcher),
    with the same logical lines (wrapped messages, decoded lines) and log end as the
    diagnosis."""
    from kb.diagnosis.unwrap import logical_lines

    matchers = [SignatureMatcher(s) for s in signatures]
    cleaned = [clean(raw) for raw in lines]
    for n, line in enumerate(cleaned, start=1):
        for m in matchers:
            m.feed(n, line)
    for logical in logical_lines(1, cleaned):
        for m in matchers:
            m.feed_logical(logical)
    ends = end_lines(list(enumerate(cleaned[-40:], start=max(1, len(cleaned) - 39))))
    return [r for m in matchers if (r := m.result(ends)) is not None]
