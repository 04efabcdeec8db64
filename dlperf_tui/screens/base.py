"""What every screen of the assistant shares: Escape to go back, and the session handed down.

Screens never reach into the app: what they show is given to them when they are made
(the session, the hosts), and what they want done they post (`dlperf_tui.messages`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from kb.util.textsafe import safe_line

if TYPE_CHECKING:
    from kb.rules.knowledge import KnowledgeBase
    from kb.walk.session import Session


class TitleBar(Static):
    """One line at the top: the product and where you are. (Textual's Header watches titles
    with a callback that can run before its own children exist; this has no children.)"""

    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        height: 1;
        background: $panel;
        color: $foreground;
        text-style: bold;
        content-align: center middle;
    }
    """

    def __init__(self, where: str = "") -> None:
        text = "dlperf-help" + (f" — {where}" if where else " — troubleshoot distributed training")
        self.full = safe_line(text)  # a log's path is in it: plain, never markup
        super().__init__(self.full, markup=False)

    def on_resize(self, event: events.Resize) -> None:
        self.update(fit(self.full, event.size.width))


def fit(text: str, width: int) -> str:
    """`text` in `width` cells: its middle cut out (a path keeps its file name at the end)."""
    if len(text) <= width or width < 5:
        return text[: max(width, 0)]
    keep = width - 1
    head = keep // 2
    return f"{text[:head]}…{text[len(text) - (keep - head) :]}"


class AppFooter(Footer):
    """The footer of every screen: its few main keys, `?` and ctrl+q. At 80 columns the
    command palette's key would push keys off the right edge: help names it instead."""

    def __init__(self) -> None:
        super().__init__(show_command_palette=False)


class BaseScreen(Screen[None]):
    """A full screen of the assistant; `HELP` is its paragraph in the `?` help."""

    HELP = ""
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return self._depth() > 0
        return True

    def _depth(self) -> int:
        """Where this screen sits: 0 is the start screen (the app's default screen), -1 is
        not on the stack."""
        stack = self.app.screen_stack
        return stack.index(self) if self in stack else -1

    def action_back(self) -> None:
        if self._depth() > 0 and self.app.screen is self:
            self.app.pop_screen()


class SessionScreen(BaseScreen):
    """A screen of one session: the session (and through it the rules) handed down."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    @property
    def kb(self) -> KnowledgeBase:
        return self.session.kb
