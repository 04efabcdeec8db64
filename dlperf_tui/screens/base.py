"""What every screen of the assistant shares: Escape to go back, and the session handed down.

Screens never reach into the app: what they show is given to them when they are made
(the session, the hosts), and what they want done they post (`dlperf_tui.messages`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

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


@dataclass(frozen=True)
class FooterEntry:
    """One key the footer shows, and the cells it takes."""

    key: str
    display: str
    description: str
    enabled: bool
    start: int
    end: int


class AppFooter(Widget):
    """The footer of every screen: its few main keys, `?` and ctrl+q, drawn as Textual's
    `Footer` draws them but by one widget: `Footer` mounts a widget per key, restyles each
    one twice and mounts them again whenever the focus moves, which cost the first frame a
    fifth of its time. A click on a key presses it. At 80 columns the command palette's
    key would push keys off the right edge: help names it instead."""

    DEFAULT_CSS = """
    AppFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        pointer: pointer;
        & > .app-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .app-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .app-footer--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "app-footer--key",
        "app-footer--description",
        "app-footer--hover",
    }
    hovered: reactive[int] = reactive(-1)  # the entry under the mouse, -1 for none

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def _bindings_changed(self, _screen: Screen[object]) -> None:
        self.refresh()

    def entries(self) -> list[FooterEntry]:
        """The keys shown, in order: one per action (its first key), as `Footer` picks."""
        seen: set[str] = set()
        entries: list[FooterEntry] = []
        x = 0
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            display = self.app.get_key_display(binding)
            width = len(display) + 2 + (len(binding.description) + 1 if binding.description else 0)
            entries.append(
                FooterEntry(binding.key, display, binding.description, active.enabled, x, x + width)
            )
            x += width
        return entries

    def render(self) -> RenderableType:
        key = self.get_component_rich_style("app-footer--key")
        description = self.get_component_rich_style("app-footer--description")
        hover = Style.from_color(bgcolor=self.get_component_rich_style("app-footer--hover").bgcolor)
        line = Text(no_wrap=True, overflow="crop")
        for i, entry in enumerate(self.entries()):
            on = hover if i == self.hovered else Style()
            dim = Style() if entry.enabled else Style(dim=True)
            line.append(f" {entry.display} ", key + on + dim)
            if entry.description:
                line.append(f"{entry.description} ", description + on + dim)
        return line

    def _entry_at(self, x: int) -> FooterEntry | None:
        return next((e for e in self.entries() if e.start <= x < e.end), None)

    def on_click(self, event: events.Click) -> None:
        entry = self._entry_at(event.x)
        if entry is None:
            return
        if entry.enabled:
            self.app.simulate_key(entry.key)
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        entry = self._entry_at(event.x)
        self.hovered = -1 if entry is None else self.entries().index(entry)

    def on_leave(self, _event: events.Leave) -> None:
        self.hovered = -1


class BaseScreen(Screen[None]):
    """A full screen of the assistant; `HELP` is its paragraph in the `?` help."""

    HELP = ""
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def __init__(self) -> None:
        super().__init__()
        self._breakpoint_classes()

    def _breakpoint_classes(self) -> None:
        """The app's width class (`-narrow`, `-wide`) set before the screen is styled:
        Textual sets it on the first resize, and styles the whole screen again for it."""
        try:
            width, breakpoints = self.app.size.width, self.app.HORIZONTAL_BREAKPOINTS or []
        except RuntimeError:  # no app running (made outside one): the resize sets it
            return
        fits = [name for least, name in sorted(breakpoints) if width >= least]
        for _, name in breakpoints:
            self.set_class(name == fits[-1] if fits else False, name, update=False)

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
