"""Running every signature and analyzer over a set of logs: the fast path and the
reference path, which must give the same results.

The fast path asks the scanner (`kb.diagnosis.scanner`) for the few candidate lines of
each 1 MB block and feeds each only to the signatures and analyzer taps whose patterns
matched it; a signature that already holds its maximum of hits stops asking. The
reference path feeds every line to everything. Both use the same reader, the same
`kb.matching.SignatureMatcher` and the same analyzers, so they can differ only if the
prefilter misses a line, which the tests check on the corpus.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kb.diagnosis import reader
from kb.diagnosis.analyzers import default_analyzers
from kb.diagnosis.analyzers.base import Analyzer, Tap
from kb.diagnosis.compiled import CompiledRules
from kb.diagnosis.scanner import Pattern, Scanner, line_at, literal
from kb.matching import CompiledMatcher, MatcherSpec, SignatureMatcher, SignatureResult

Progress = Callable[[int, "int | None", str], None]  # (bytes done, bytes total, file)


def prefilter(m: MatcherSpec) -> Pattern:
    """A pattern that matches every line the matcher could fire on (and maybe more)."""
    if m.type == "regex":
        return Pattern(m.pattern, m.ignore_case)
    if m.type == "substring":
        return Pattern(literal(m.text), m.ignore_case)
    anchors = CompiledMatcher(m).anchors
    if not anchors:
        return Pattern("[^\\n]")  # a fuzzy text without words: every non-empty line
    return Pattern("(?:" + "|".join(literal(a) for a in anchors) + ")", True)


@dataclass
class Outcome:
    """What the scan of all inputs produced, before ranking."""

    results: dict[tuple[str, str], SignatureResult] = field(default_factory=dict)
    analyzers: list[Analyzer] = field(default_factory=list)
    files: int = 0
    lines: int = 0
    bytes: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    cancelled: bool = False


class Plan:
    """What a diagnosis with given rules always needs: the prefilter patterns, who
    consumes each, and the scanner. Built once per rules object and reused."""

    def __init__(self, rules: CompiledRules, use_hyperscan: bool) -> None:
        self.specs = rules.signatures()
        self.patterns: list[Pattern] = []
        self._index: dict[Pattern, int] = {}
        # pid -> consumers: ("m", sig, matcher index) | ("v", sig, -1) | ("t", analyzer, tap)
        self.consumers: list[list[tuple[str, int, Any]]] = []
        for si, (_rid, spec) in enumerate(self.specs):
            for mi, m in enumerate(spec.matchers):
                self._consume(prefilter(m), ("m", si, mi))
            for v in spec.unless:
                if v.scope == "log":
                    self._consume(prefilter(v), ("v", si, -1))
        for ai, a in enumerate(default_analyzers()):
            for tap in a.taps:
                self._consume(Pattern(tap.pattern, tap.ignore_case, tap.frequent), ("t", ai, tap))
        self.use_hyperscan = use_hyperscan
        self._scanner: Scanner | None = None
        self._tap_rx: list[list[tuple[Tap, Any]]] | None = None

    def _consume(self, pattern: Pattern, consumer: tuple[str, int, Any]) -> None:
        pid = self._index.get(pattern)
        if pid is None:
            pid = self._index[pattern] = len(self.patterns)
            self.patterns.append(pattern)
            self.consumers.append([])
        self.consumers[pid].append(consumer)

    @property
    def scanner(self) -> Scanner:
        if self._scanner is None:
            self._scanner = Scanner(self.patterns, self.use_hyperscan)
        return self._scanner

    @property
    def tap_rx(self) -> list[list[tuple[Tap, Any]]]:
        """Each analyzer's taps as RE2 regexes, for the reference path."""
        if self._tap_rx is None:
            self._tap_rx = [[(t, _compile_tap(t)) for t in a.taps] for a in default_analyzers()]
        return self._tap_rx


def plan_for(rules: CompiledRules, use_hyperscan: bool = True) -> Plan:
    """The plan of `rules`, cached on the rules object."""
    if use_hyperscan not in rules.plans:
        rules.plans[use_hyperscan] = Plan(rules, use_hyperscan)
    return rules.plans[use_hyperscan]


class Session:
    """One diagnosis: fresh signature matchers and analyzers over a shared plan."""

    def __init__(self, rules: CompiledRules, fast: bool = True, use_hyperscan: bool = True) -> None:
        self.rules = rules
        self.fast = fast
        plan = self.plan = plan_for(rules, use_hyperscan)
        self.specs = plan.specs
        self.patterns = plan.patterns
        self.consumers = plan.consumers
        self._matchers: dict[int, SignatureMatcher] = {}
        self.analyzers = default_analyzers()
        self.scanner = plan.scanner if fast else None
        self.tap_rx = plan.tap_rx if not fast else []

    def matcher(self, si: int) -> SignatureMatcher:
        sm = self._matchers.get(si)
        if sm is None:
            sm = self._matchers[si] = SignatureMatcher(self.specs[si][1])
        return sm

    def wanted(self, pid: int) -> bool:
        """Whether some consumer of pattern `pid` still needs the lines it matches."""
        for kind, idx, arg in self.consumers[pid]:
            if kind == "t":
                if self.analyzers[idx].wants(arg.id):  # type: ignore[attr-defined]
                    return True
            elif self._needs(kind, idx, arg):
                return True
        return False

    def _needs(self, kind: str, si: int, mi: Any) -> bool:
        """Whether signature `si` needs lines of its matcher `mi` (or of its log vetoes):
        not once that matcher holds its maximum of hits or the signature is vetoed."""
        sm = self._matchers.get(si)
        if sm is None:
            return True
        if sm.vetoed:
            return False
        return kind == "v" or len(sm.hits[mi]) < sm.MAX_HITS

    # ------------------------------------------------------------ running

    def run(
        self,
        inputs: Iterable[tuple[str, Callable[[], object]]],
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        total: int | None = None,
    ) -> Outcome:
        """Scan each (name, opener) in turn; `opener()` returns a binary stream."""
        out = Outcome(analyzers=self.analyzers)
        done = 0  # input bytes (compressed ones, for .gz) of the files before this one
        for name, opener in inputs:
            if cancel is not None and cancel.is_set():
                out.cancelled = True
                break
            for sm in self._matchers.values():
                sm.reset()
            for a in self.analyzers:
                a.start_file(name)
            self._follow: list[tuple[Analyzer, str, int]] = []
            read = 0
            try:
                stream: Any = opener()
                try:
                    for block in reader.blocks(stream, name):
                        out.lines += block.lines
                        out.bytes += block.raw_bytes
                        read += block.raw_bytes
                        self._block(block)
                        if progress is not None:
                            progress(done + _position(stream, read), total, name)
                        if cancel is not None and cancel.is_set():
                            out.cancelled = True
                            break
                finally:
                    done += _position(stream, read)
                    if name != "-":
                        stream.close()
            except reader.InputError as exc:
                out.errors.append({"file": name, "error": str(exc)})
            else:
                out.files += 1
            self._collect(name, out)
            if out.cancelled:
                break
        return out

    def _collect(self, name: str, out: Outcome) -> None:
        for si, sm in sorted(self._matchers.items()):
            r = sm.result()
            if r is None:
                continue
            rid = self.specs[si][0]
            for h in r.hits:
                h.file = name
            key = (rid, r.signature.id)
            prev = out.results.get(key)
            if prev is None:
                out.results[key] = r
            else:
                prev.hits.extend(r.hits)
                for k, v in r.params.items():
                    prev.params.setdefault(k, v)

    def _block(self, block: reader.Block) -> None:
        data = block.data
        if self._follow:
            carried, self._follow = self._follow, []
            self._deliver_follow(carried, block, block.lo, block.first_line)
        if self.scanner is None:
            for n, start, text in reader.iter_lines(block):
                self._reference_line(n, start, text, block)
            return
        for line_no, start, pids in self.scanner.candidates(block, self.wanted):
            text = reader.decode_line(line_at(data, start))
            sigs: set[int] = set()
            taps: list[tuple[int, Tap]] = []
            for pid in pids:
                for kind, idx, arg in self.consumers[pid]:
                    if kind == "t":
                        taps.append((idx, arg))  # type: ignore[arg-type]
                    elif idx not in sigs and self._needs(kind, idx, arg):
                        sigs.add(idx)
            for si in sorted(sigs):
                self.matcher(si).feed(line_no, text)
            for ai, tap in sorted(taps, key=lambda t: (t[0], t[1].id)):
                self._tap(ai, tap, line_no, start, text, block)

    def _reference_line(self, n: int, start: int, text: str, block: reader.Block) -> None:
        for si in range(len(self.specs)):
            self.matcher(si).feed(n, text)
        for ai, taps in enumerate(self.tap_rx):
            for tap, rx in taps:
                if rx is not None and rx.search(text):
                    self._tap(ai, tap, n, start, text, block)

    def _tap(
        self, ai: int, tap: Tap, line_no: int, start: int, text: str, block: reader.Block
    ) -> None:
        a = self.analyzers[ai]
        if not a.wants(tap.id):
            return
        a.deliver(tap.id, line_no, text)
        if tap.follow:
            end = block.data.find(b"\n", start, block.hi)
            self._deliver_follow([(a, tap.id, tap.follow)], block, end + 1, line_no + 1)

    def _deliver_follow(
        self, pending: list[tuple[Analyzer, str, int]], block: reader.Block, pos: int, first: int
    ) -> None:
        """Give analyzers the lines from offset `pos` on (those that follow their tap
        line); what the block cannot give yet is carried to the next block."""
        need = max(left for _, _, left in pending)
        lines: list[str] = []
        data, hi = block.data, block.hi
        while len(lines) < need and pos < hi:
            end = data.find(b"\n", pos, hi)
            lines.append(reader.decode_line(data[pos:end]))
            pos = end + 1
        for a, tap, left in pending:
            for i, text in enumerate(lines[:left]):
                a.deliver(tap + ":follow", first + i, text)
            if left > len(lines):
                self._follow.append((a, tap, left - len(lines)))


def _position(stream: Any, fallback: int) -> int:
    """How far into the input file the stream is (the compressed file, for gzip)."""
    raw = getattr(stream, "fileobj", None) or stream
    try:
        return int(raw.tell())
    except (OSError, ValueError, AttributeError):
        return fallback


def _compile_tap(tap: Tap) -> object | None:
    import re2

    from kb.diagnosis.scanner import _options

    try:
        return re2.compile(tap.pattern, _options(tap.ignore_case))
    except re2.error:
        return None
