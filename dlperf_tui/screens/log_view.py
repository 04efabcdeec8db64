"""The whole log, opened at an evidence line with the matching span selected."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static, TextArea
from textual.widgets.text_area import Selection

from dlperf_tui.screens.base import AppFooter, SessionScreen, TitleBar
from kb.diagnosis.model import Evidence
from kb.util.textsafe import safe

if TYPE_CHECKING:
    from kb.walk.session import Session

RADIUS = 2_000  # lines loaded each side of the evidence: a big log is shown in windows
# (a text area takes about 16 µs a line to load: 4,000 lines stay well under 0.1 s)


class LogScreen(SessionScreen):
    CSS_PATH = "log_view.tcss"
    HELP = (
        "The log, read-only, at the evidence line with its matching text selected. `n` and "
        "`p` move to the next and previous evidence line; select text with the mouse or "
        "shift+arrows and copy it with ctrl+c."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_evidence", "Next evidence"),
        Binding("p", "prev_evidence", "Previous"),
    ]

    def __init__(self, session: Session, evidence: list[Evidence], start: int = 0) -> None:
        super().__init__(session)
        self.evidence = evidence
        self.index = start
        self.first = 0  # line number of the first loaded line; 0 while nothing is loaded
        self.count = 0
        self.total = 0

    def compose(self) -> ComposeResult:
        yield TitleBar(self.session.log_name or "the log")
        yield Static("Loading…", id="log-status")
        yield TextArea(id="log-text", read_only=True, soft_wrap=False, show_line_numbers=True)
        yield AppFooter()

    def on_mount(self) -> None:
        self._go()

    def _go(self) -> None:
        line = self.evidence[self.index].line if self.evidence else 1
        if self.first and self.first <= line < self.first + self.count:
            self._select()
        else:
            self._load(line)

    @work(thread=True, exclusive=True)
    def _load(self, line: int) -> None:
        first, lines, total = self.session.window(line, RADIUS)
        self.app.call_from_thread(self._loaded, first, lines, total)

    def _loaded(self, first: int, lines: list[str], total: int) -> None:
        self.first, self.count, self.total = first, len(lines), total
        area = self.query_one("#log-text", TextArea)
        area.line_number_start = first
        area.load_text("\n".join(map(safe, lines)))  # the log's controls shown, not obeyed
        self._select()
        area.focus()

    def _select(self) -> None:
        if not self.evidence:
            self.query_one("#log-status", Static).update(f"{self.total:,} lines")
            return
        e = self.evidence[self.index]
        area = self.query_one("#log-text", TextArea)
        row = e.line - self.first
        text = area.document.get_line(row) if row < area.document.line_count else ""
        start, end = (
            (e.start, e.end)
            if text[e.start : e.end] == e.text[e.start : e.end] and e.end > e.start
            else (0, len(text))
        )
        # selected backwards: the cursor sits at the span's start, so following it keeps the
        # line's beginning in view; then centre the line vertically
        area.selection = Selection((row, end), (row, start))
        visible = area.scrollable_content_region.width - area.gutter_width - 2
        x = max(0, min(start, end - visible + 1))  # the whole span, and as much before it
        area.scroll_to(
            x=x, y=max(0, row - area.scrollable_content_region.height // 2), animate=False
        )
        self.query_one("#log-status", Static).update(
            f"Evidence {self.index + 1} of {len(self.evidence)}: line {e.line:,} of "
            f"{self.total:,} (n: next, p: previous)"
        )

    def action_next_evidence(self) -> None:
        if self.evidence:
            self.index = (self.index + 1) % len(self.evidence)
            self._go()

    def action_prev_evidence(self) -> None:
        if self.evidence:
            self.index = (self.index - 1) % len(self.evidence)
            self._go()
