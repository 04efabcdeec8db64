"""The start screen's two tabs, drawn by one widget: the labels and the bar under them.

Why it exists: Textual's `TabbedContent` builds a dozen widgets (tabs, their list, an
underline, scroll containers), each styled and laid out again whenever the screen's
classes or focus change: a fifth of the CPU before the first frame. This draws the
same two lines (the labels, the active one bright; the bar under it highlighted) with
the styles of Textual's tabs, takes a click on a label or the bar, and left and right
when focused. The start screen switches its panes (a `ContentSwitcher`) on `Activated`.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.renderables.bar import Bar
from textual.widget import Widget


def blank(text: str) -> bool:
    return not text.strip(" ")


class TabStrip(Widget, can_focus=True):
    """A row of tab labels over a bar marking the active one (as `Tabs` draws them)."""

    # the colours of Textual's `Tab`, `Tabs` and `Underline`, on one widget's components
    DEFAULT_CSS = """
    TabStrip {
        width: 1fr;
        height: 2;
        pointer: pointer;
        & > .tab-strip--tab { color: $foreground 50%; }
        & > .tab-strip--hover { color: $foreground; }
        & > .tab-strip--active { color: $foreground; }
        & > .tab-strip--bar {
            color: $block-cursor-background;
            background: $foreground 10%;
        }
        &:focus {
            & > .tab-strip--bar { background: $foreground 30%; }
            & > .tab-strip--active {
                text-style: $block-cursor-text-style;
                color: $block-cursor-foreground;
                background: $block-cursor-background;
            }
        }
        &:ansi {
            & > .tab-strip--tab { text-style: dim; }
            & > .tab-strip--active { text-style: not dim bold; }
            & > .tab-strip--bar { background: $border-blurred; }
        }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tab-strip--tab",
        "tab-strip--hover",
        "tab-strip--active",
        "tab-strip--bar",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous tab", show=False),
        Binding("right", "step(1)", "Next tab", show=False),
    ]

    active: reactive[str] = reactive("", init=False)
    hovered: reactive[int] = reactive(-1)  # the label under the mouse, -1 for none

    class Activated(Message):
        """A tab became the active one (by click, key, or `active` set)."""

        def __init__(self, strip: TabStrip, tab: str) -> None:
            super().__init__()
            self.strip = strip
            self.tab = tab

        @property
        def control(self) -> TabStrip:
            return self.strip

    def __init__(self, *tabs: tuple[str, str], active: str, id: str | None = None) -> None:
        """`tabs`: (id, label) pairs, in order; `active`: the id shown first."""
        super().__init__(id=id)
        self.tabs = list(tabs)
        self.set_reactive(TabStrip.active, active)

    def _spans(self) -> list[tuple[int, int]]:
        """Each label's cells (with its padding of one cell either side)."""
        spans, x = [], 0
        for _, label in self.tabs:
            width = len(label) + 2
            spans.append((x, x + width))
            x += width
        return spans

    def _index(self) -> int:
        ids = [tab for tab, _ in self.tabs]
        return ids.index(self.active) if self.active in ids else 0

    def render(self) -> RenderableType:
        styles = {
            name: self.get_component_rich_style(f"tab-strip--{name}")
            for name in ("tab", "hover", "active", "bar")
        }
        base, active = self.rich_style, self._index()
        runs: list[tuple[str, Style]] = []  # cells of one style in one run, as `Tabs` draws

        def add(text: str, style: Style) -> None:
            if runs:
                last, last_style = runs[-1]
                if last_style == style or (
                    blank(last + text) and last_style.bgcolor == style.bgcolor
                ):
                    runs[-1] = (last + text, last_style)  # blank: only the background shows
                    return
            runs.append((text, style))

        for i, (_, label) in enumerate(self.tabs):
            style = styles["active" if i == active else "hover" if i == self.hovered else "tab"]
            padding = style  # a cell each side
            add(" ", padding)
            add(label, style + Style(meta={"tab": i}))  # never merged with its padding
            add(" ", padding)
        add(" " * max(self.size.width - sum(len(text) for text, _ in runs), 0), base)
        labels = Text(no_wrap=True, overflow="crop")
        for text, style in runs:
            labels.append(text, style)
        start, end = self._spans()[active]
        bar = styles["bar"]
        return Group(
            labels,
            Bar(
                (start + 1, end - 1),  # under the label, not its padding (as `Tabs` does)
                highlight_style=Style.from_color(bar.color),
                background_style=Style.from_color(bar.bgcolor),
            ),
        )

    def _tab_at(self, x: int) -> int | None:
        for i, (start, end) in enumerate(self._spans()):
            if start <= x < end:
                return i
        return None

    def on_click(self, event: events.Click) -> None:
        event.stop()
        i = self._tab_at(event.x)  # on a label or on the bar under it
        if i is not None:
            self.active = self.tabs[i][0]

    def on_mouse_move(self, event: events.MouseMove) -> None:
        i = self._tab_at(event.x) if event.y == 0 else None
        self.hovered = -1 if i is None else i

    def on_leave(self, _event: events.Leave) -> None:
        self.hovered = -1

    def watch_active(self) -> None:
        self.post_message(self.Activated(self, self.active))

    def action_step(self, step: int) -> None:
        self.active = self.tabs[(self._index() + step) % len(self.tabs)][0]
