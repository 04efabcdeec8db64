"""A logical line: one rebuilt from physical lines of a log, and where its parts came from.

A message a terminal or an editor wrapped over several lines is joined into one
logical line (`joins` says where each physical line starts in it); a URL-encoded line
is decoded (`original` keeps the line as the log has it, `offsets` maps each decoded
character back to it). `kb.diagnosis.unwrap` builds them; `kb.diagnosis.matching` matches them
and counts a match only where the rebuilding was needed, with its evidence in the
log's own terms (`line_at`, `original_span`).
"""

from __future__ import annotations

from kb.util.record import record


@record(hashable=True)  # a frozen dataclass, without compiling one at every start
class Logical:
    """A line rebuilt from physical lines: a wrapped message joined (`joins` holds where
    each physical line after the first starts in `text`), or a URL-encoded line decoded
    (`original` is the line as the log has it; `offsets[i]` is where `text[i]` starts in
    it, and `offsets[len(text)]` where the text ends)."""

    line_no: int  # its first physical line
    last: int  # its last physical line
    text: str
    joins: tuple[int, ...] = ()
    original: str | None = None
    offsets: tuple[int, ...] = ()

    def __init__(
        self,
        line_no: int,
        last: int,
        text: str,
        joins: tuple[int, ...] = (),
        original: str | None = None,
        offsets: tuple[int, ...] = (),
    ) -> None:
        self.line_no = line_no
        self.last = last
        self.text = text
        self.joins = joins
        self.original = original
        self.offsets = offsets

    def line_at(self, pos: int) -> int:
        """The physical line that character `pos` of `text` comes from."""
        return self.line_no + sum(1 for j in self.joins if j <= pos)

    def needs_rebuilding(self, start: int, end: int, kind: str) -> bool:
        """Whether a match needs this line rebuilt: it spans a join (a fuzzy match is
        judged on the whole text), or it is in decoded text."""
        if self.original is not None:
            return True
        if kind == "fuzzy":
            return bool(self.joins)
        return any(start < j < end for j in self.joins)

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of a match in a decoded line, in the line as the log has it."""
        original = self.original or ""
        if len(self.offsets) != len(self.text) + 1:
            return 0, len(original)
        return self.offsets[start], self.offsets[end]
