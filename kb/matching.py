"""What it means for a signature to fire: the one definition of matching semantics.

The fast scanner (which finds candidate lines in gigabytes of log) and the rule tests
(which run each rule's inline examples) both feed lines into `SignatureMatcher`, so a
rule behaves the same in a pasted snippet and in a 1 GB log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kb.re2syntax import compile_re2
from kb.schema.models import FuzzyMatcher, Matcher, RegexMatcher, Signature, SubstringMatcher

# ---------------------------------------------------------------- masking for fuzzy matching

_MASKS = [
    (re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]"), ""),  # ANSI colour codes
    (re.compile(r"(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?:%\w+)?"), "<A>"),  # IPv6
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b"), "<A>"),  # IPv4
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<H>"),
    (re.compile(r"(?:~|\.{1,2})?/[\w.\-+@/]+"), "<P>"),  # paths
    (re.compile(r"\b[0-9a-f]{8,}\b"), "<H>"),
    (re.compile(r"\d+"), "<N>"),
    (re.compile(r"\s+"), " "),
]


def mask(line: str) -> str:
    """A line's shape: numbers, hex, addresses and paths replaced by tokens."""
    for rx, repl in _MASKS:
        line = rx.sub(repl, line)
    return line.strip()


ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def clean(line: str) -> str:
    """A line as shown to users: no ANSI codes, no trailing newline or carriage return."""
    return ANSI.sub("", line).rstrip("\r\n")


# ---------------------------------------------------------------- one matcher


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    params: dict[str, str]


class CompiledMatcher:
    """One matcher, ready to test lines."""

    def __init__(self, spec: Matcher) -> None:
        self.spec = spec
        self.kind = spec.type
        if isinstance(spec, RegexMatcher):
            self._rx = compile_re2(spec.pattern, spec.ignore_case)
        elif isinstance(spec, SubstringMatcher):
            self._needle = spec.text.lower() if spec.ignore_case else spec.text
        elif isinstance(spec, FuzzyMatcher):
            self._template = mask(spec.text).lower()
            self._threshold = spec.threshold

    def search(self, line: str) -> Span | None:
        spec = self.spec
        if isinstance(spec, RegexMatcher):
            m = self._rx.search(line)
            if m is None:
                return None
            params = {k: v for k, v in m.groupdict().items() if v is not None}
            return Span(m.start(), m.end(), params)
        if isinstance(spec, SubstringMatcher):
            hay = line.lower() if spec.ignore_case else line
            i = hay.find(self._needle)
            return None if i < 0 else Span(i, i + len(self._needle), {})
        return self._fuzzy(line)

    def _fuzzy(self, line: str) -> Span | None:
        from rapidfuzz import fuzz

        shape = mask(line).lower()
        # a fragment much shorter than the template is not evidence of it
        if len(shape) < 0.6 * len(self._template):
            return None
        score = fuzz.partial_ratio(self._template, shape, score_cutoff=self._threshold)
        if not score:
            return None
        return Span(0, len(line), {})


# ---------------------------------------------------------------- one signature


@dataclass
class Hit:
    """A line that fired a signature's matcher."""

    line_no: int  # 1-based
    text: str
    start: int
    end: int
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class SignatureResult:
    signature: Signature
    hits: list[Hit]
    params: dict[str, str]


class SignatureMatcher:
    """Accumulates the lines of one log and says whether a signature fired on it."""

    MAX_HITS = 20

    def __init__(self, signature: Signature) -> None:
        self.signature = signature
        self.matchers = [CompiledMatcher(m) for m in signature.matchers]
        self.line_vetoes = [CompiledMatcher(m) for m in signature.unless if m.scope == "line"]
        self.log_vetoes = [CompiledMatcher(m) for m in signature.unless if m.scope == "log"]
        self.extractors = {
            name: compile_re2(rx) for name, rx in signature.extract.items()
        }
        self.reset()

    def reset(self) -> None:
        self.hits: list[list[Hit]] = [[] for _ in self.matchers]
        self.counts = [0] * len(self.matchers)
        self.vetoed = False

    def feed(self, line_no: int, line: str) -> None:
        """Test one line (already cleaned of ANSI codes and line ends)."""
        if self.vetoed:
            return
        for veto in self.log_vetoes:
            if veto.search(line):
                self.vetoed = True
                return
        spans = [(i, m.search(line)) for i, m in enumerate(self.matchers)]
        spans = [(i, s) for i, s in spans if s is not None]
        if not spans:
            return
        if any(v.search(line) for v in self.line_vetoes):
            return
        for i, span in spans:
            self.counts[i] += 1
            if len(self.hits[i]) < self.MAX_HITS:
                self.hits[i].append(Hit(line_no, line, span.start, span.end, dict(span.params)))

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


def run_signatures(
    signatures: Iterable[Signature], lines: Iterable[str]
) -> list[SignatureResult]:
    """Evaluate signatures on a small log the simple way (every line, every matcher)."""
    matchers = [SignatureMatcher(s) for s in signatures]
    for n, raw in enumerate(lines, start=1):
        line = clean(raw)
        for m in matchers:
            m.feed(n, line)
    return [r for m in matchers if (r := m.result()) is not None]
