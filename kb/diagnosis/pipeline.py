"""Running every signature and analyzer over a set of logs: the fast path and the
reference path, which must give the same results.

The fast path asks the scanner (`kb.diagnosis.scanner`) for the few candidate lines of
each 1 MB block and feeds each only to the signatures and analyzer taps whose patterns
matched it; a signature that already holds its maximum of hits stops asking. A
signature whose line veto keeps rejecting its lines (`VETO_FLOOD` of them in one log)
stops seeing the lines the veto index (`kb.diagnosis.plan.VetoIndex`) says it would
reject. The reference path feeds every line to everything. Both use the same reader,
the same `kb.diagnosis.matching.SignatureMatcher` and the same analyzers, so they can differ
only if the prefilter misses a line, which the tests check on the corpus.

Around the lines themselves, both paths also give: the logical lines rebuilt from
physical ones (messages wrapped over several lines, joined; URL-encoded lines, decoded:
`kb.diagnosis.unwrap`) to the signatures; each log's last lines to the analyzers
(`Analyzer.end_file`: what the log ends with); and its last lines, with the numbers of
the last meaningful ones, to the signatures that hold only there (`at_end`), which may
have stopped taking lines at their maximum of hits long before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kb.diagnosis import heap, rawbytes, reader
from kb.diagnosis.analyzers.base import Analyzer
from kb.diagnosis.compiled import CompiledRules
from kb.diagnosis.decorations import content_start
from kb.diagnosis.lines import end_lines
from kb.diagnosis.logical import Logical
from kb.diagnosis.matching import SignatureMatcher, SignatureResult
from kb.diagnosis.plan import LogVeto, MatcherLine, PlannedTap, TapLine, plan_for
from kb.diagnosis.scanner import line_at
from kb.diagnosis.unwrap import Unwrapper

if TYPE_CHECKING:  # only the two-core path starts threads: a pasted log never imports it
    import threading

Progress = Callable[[int, "int | None", str], None]  # (bytes done, bytes total, file)
TAIL_LINES = 40  # the last lines of each log given to the analyzers
VETO_FLOOD = 256  # vetoed lines after which the veto index drops a signature's lines


class Follow:
    """An analyzer that still wants `left` lines after its tap line (their content
    only, with `strip`: the tap is anchored at a line start). This and `Outcome` are
    plain classes: a dataclass costs a millisecond to make at every start, and neither
    is ever compared."""

    __slots__ = ("analyzer", "left", "strip", "tap")

    def __init__(self, analyzer: Analyzer, tap: str, left: int, strip: bool) -> None:
        self.analyzer = analyzer
        self.tap = tap
        self.left = left
        self.strip = strip


class Outcome:
    """What the scan of all inputs produced, before ranking."""

    def __init__(self, analyzers: list[Analyzer] | None = None) -> None:
        self.results: dict[tuple[str, str], SignatureResult] = {}
        self.analyzers: list[Analyzer] = analyzers if analyzers is not None else []
        self.files = 0
        self.lines = 0
        self.bytes = 0
        self.errors: list[dict[str, str]] = []
        self.cancelled = False


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
        self.analyzers = plan.new_analyzers()
        self.scanner = plan.scanner if fast else None
        self._follow: list[Follow] = []
        self._tail: list[tuple[int, str]] = []
        self._unwrap = Unwrapper()

    def matcher(self, si: int) -> SignatureMatcher:
        sm = self._matchers.get(si)
        if sm is None:
            sm = self._matchers[si] = SignatureMatcher(self.specs[si][1])
        return sm

    def wanted(self, pid: int) -> bool:
        """Whether some consumer of pattern `pid` still needs the lines it matches."""
        for c in self.consumers[pid]:
            if isinstance(c, TapLine):
                if self.analyzers[c.planned.analyzer].wants(c.planned.tap.id):
                    return True
            elif self._needs(c):
                return True
        return False

    def _needs(self, c: MatcherLine | LogVeto) -> bool:
        """Whether the signature needs lines of this matcher (or of its log vetoes): not
        once the matcher holds its maximum of hits or the signature is vetoed."""
        sm = self._matchers.get(c.sig)
        if sm is None:
            return True
        if sm.vetoed:
            return False
        return isinstance(c, LogVeto) or sm.needs(c.matcher)

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
        if total is not None and total >= heap.BIG_INPUT:
            heap.release_big_buffers()  # before the first block (standard input: below)
        done = 0  # input bytes (compressed ones, for .gz) of the files before this one
        for name, opener in inputs:
            if cancel is not None and cancel.is_set():
                out.cancelled = True
                break
            for sm in self._matchers.values():
                sm.reset()
            for a in self.analyzers:
                a.start_file(name)
            self._follow, self._tail = [], []
            read = 0
            try:
                stream: Any = opener()
                try:
                    for block in reader.blocks(stream, name):
                        out.lines += block.lines
                        out.bytes += block.raw_bytes
                        read += block.raw_bytes
                        if read >= heap.BIG_INPUT:
                            heap.release_big_buffers()  # a long input of unknown size
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
            except rawbytes.InputError as exc:
                out.errors.append({"file": name, "error": str(exc)})
            else:
                out.files += 1
            ends = self._end_file()
            self._collect(name, out, ends)
            if out.cancelled:
                break
        return out

    def _end_file(self) -> set[int]:
        """What only the whole log shows: its logical lines and how it ends (the numbers
        of its last meaningful lines)."""
        messages = self._unwrap.messages()
        if messages:
            self._feed_messages(messages)
        for a in self.analyzers:
            a.end_file(self._tail)
        ends = end_lines(self._tail)
        last = [(n, t) for n, t in self._tail if n in ends]
        for sm in self._matchers.values():
            sm.feed_end(last)
        return ends

    def _collect(self, name: str, out: Outcome, ends: set[int]) -> None:
        for si, sm in sorted(self._matchers.items()):
            r = sm.result(ends)
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
        if not block.lines:
            return
        self._unwrap.add(block)
        tail = reader.tail(block, TAIL_LINES)
        self._tail = (self._tail + tail)[-TAIL_LINES:] if len(tail) < TAIL_LINES else tail
        if self._follow:
            carried, self._follow = self._follow, []
            self._deliver_follow(carried, block, block.lo, block.first_line)
        if self.scanner is None:
            for n, start, text in reader.iter_lines(block):
                self._reference_line(n, start, text, block)
            return
        flooded = self._flooded()
        if not flooded:
            self._scan(block, self.wanted)
            return
        # a pattern only flooded signatures consume is scanned in a copy of the block
        # whose lines their vetoes reject are blanked: nothing left, nothing to do
        diverted: dict[int, tuple[int, ...]] = {}
        for si, key in flooded.items():
            for pid in self.plan.pids_of[si]:
                if all(
                    isinstance(c, MatcherLine) and flooded.get(c.sig) == key
                    for c in self.consumers[pid]
                ):
                    diverted[pid] = key
        self._scan(block, lambda pid: pid not in diverted and self.wanted(pid))
        for key in sorted(set(diverted.values())):
            mine = {pid for pid, k in diverted.items() if k == key}
            masked = self.plan.vetoes.masked(key, block)
            self._scan(masked, _only(mine, self.wanted))

    def _scan(self, block: reader.Block, wanted: Callable[[int], bool]) -> None:
        """Feed the block's candidate lines (those of the `wanted` patterns) onwards."""
        data = block.data
        route, matcher, deliver, decode = self._route, self.matcher, self._tap, reader.decode_line
        for line_no, start, pids in self.scanner.candidates(block, wanted):  # type: ignore[union-attr]
            sigs, vetoes, taps = route(pids)
            if not sigs and not taps:
                continue
            text = decode(line_at(data, start))
            for si in sorted(sigs) if len(sigs) > 1 else sigs:
                mis = sigs[si]
                only = sorted(set(mis)) if len(mis) > 1 else mis
                matcher(si).feed(line_no, text, only=only, log_vetoes=si in vetoes)
            if len(taps) > 1:
                taps.sort(key=_tap_order)
            for planned in taps:
                deliver(planned, line_no, start, text, block)

    def _route(
        self, pids: Iterable[int]
    ) -> tuple[dict[int, list[int]], set[int], list[PlannedTap]]:
        """Who takes a candidate line, from the patterns it matched: each signature that
        still wants it (with the matchers it may fire), the signatures whose log vetoes
        it may fire, and the analyzers' taps."""
        sigs: dict[int, list[int]] = {}
        vetoes: set[int] = set()
        taps: list[PlannedTap] = []
        for pid in pids:
            for c in self.consumers[pid]:
                if isinstance(c, TapLine):
                    taps.append(c.planned)
                elif not self._needs(c):
                    continue
                elif isinstance(c, LogVeto):
                    vetoes.add(c.sig)
                    sigs.setdefault(c.sig, [])
                else:
                    sigs.setdefault(c.sig, []).append(c.matcher)
        return sigs, vetoes, taps

    def _flooded(self) -> dict[int, tuple[int, ...]]:
        """Signatures whose line vetoes keep rejecting their lines, with those vetoes
        (as veto index patterns)."""
        by_sig = self.plan.vetoes.by_sig
        return {
            si: by_sig[si]
            for si, sm in self._matchers.items()
            if sm.line_vetoed >= VETO_FLOOD and not sm.vetoed and si in by_sig
        }

    def _feed_messages(self, messages: list[Logical]) -> None:
        """Give the logical lines (wrapped messages joined, encoded lines decoded) to the
        signatures."""
        if self.scanner is None:
            for logical in messages:
                for si in range(len(self.specs)):
                    self.matcher(si).feed_logical(logical)
            return
        data = b"".join(
            m.text.replace("\n", " ").encode("utf-8", "surrogatepass") + b"\n" for m in messages
        )
        block = reader.Block(data, 0, len(data), 1, len(messages), 0)
        for index, _start, pids in self.scanner.candidates(block, self.wanted):
            sigs, vetoes, _taps = self._route(pids)  # analyzers read physical lines only
            logical = messages[index - 1]
            for si in sorted(sigs):
                only = sorted(set(sigs[si]))
                self.matcher(si).feed_logical(logical, only=only, log_vetoes=si in vetoes)

    def _reference_line(self, n: int, start: int, text: str, block: reader.Block) -> None:
        for si in range(len(self.specs)):
            self.matcher(si).feed(n, text)
        for planned in self.plan.taps:
            if planned.rx is None:
                continue
            if planned.line_anchored or planned.rx.search(text):
                self._tap(planned, n, start, text, block)

    def _tap_text(self, planned: PlannedTap, text: str) -> str | None:
        """The text an analyzer gets for a tapped line: the line, or for a tap anchored
        at a line start that matches only past the line's decorations, its content."""
        rx = planned.anchored
        if rx is None or rx.search(text):
            return text
        at = content_start(text)
        return text[at:] if at and rx.search(text[at:]) else None

    def _tap(
        self, planned: PlannedTap, line_no: int, start: int, text: str, block: reader.Block
    ) -> None:
        a, tap = self.analyzers[planned.analyzer], planned.tap
        if not a.wants(tap.id):
            return
        shown = self._tap_text(planned, text)
        if shown is None:
            return
        a.deliver(tap.id, line_no, shown)
        if tap.follow:
            strip = planned.line_anchored
            end = block.data.find(b"\n", start, block.hi)
            self._deliver_follow(
                [Follow(a, tap.id, tap.follow, strip)], block, end + 1, line_no + 1
            )

    def _deliver_follow(
        self, pending: list[Follow], block: reader.Block, pos: int, first: int
    ) -> None:
        """Give analyzers the lines from offset `pos` on (those that follow their tap
        line; their content when the tap is anchored); what the block cannot give yet is
        carried to the next block."""
        need = max(f.left for f in pending)
        lines: list[str] = []
        data, hi = block.data, block.hi
        while len(lines) < need and pos < hi:
            end = data.find(b"\n", pos, hi)
            lines.append(reader.decode_line(data[pos:end]))
            pos = end + 1
        for f in pending:
            for i, text in enumerate(lines[: f.left]):
                f.analyzer.deliver(
                    f.tap + ":follow", first + i, text[content_start(text) :] if f.strip else text
                )
            if f.left > len(lines):
                self._follow.append(Follow(f.analyzer, f.tap, f.left - len(lines), f.strip))


def _tap_order(t: PlannedTap) -> tuple[int, str]:
    return t.analyzer, t.tap.id


def _only(pids: set[int], wanted: Callable[[int], bool]) -> Callable[[int], bool]:
    return lambda pid: pid in pids and wanted(pid)


def _position(stream: Any, fallback: int) -> int:
    """How far into the input file the stream is (the compressed file, for gzip)."""
    raw = getattr(stream, "fileobj", None) or stream
    try:
        return int(raw.tell())
    except (OSError, ValueError, AttributeError):
        return fallback
