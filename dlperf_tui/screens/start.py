"""The first screen: paste a log (or open a file), or pick a symptom from the tree."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, ContentSwitcher, Static, TextArea, Tree

from dlperf_tui.messages import Diagnose, StartWalk
from dlperf_tui.plain import plain_line
from dlperf_tui.screens.base import AppFooter, BaseScreen, TitleBar
from dlperf_tui.screens.buttons import StartButton
from dlperf_tui.screens.tabstrip import TabStrip
from kb.util.textsafe import safe

if TYPE_CHECKING:
    from kb.rules.knowledge import KnowledgeBase

INTRO = (
    "Paste a log below with your terminal's paste (ctrl+shift+v, right click, cmd+v): "
    "it is diagnosed at once. Or paste a file's path, or press ctrl+o to open one."
)
PREVIEW_LINES = 2000  # a longer log is shown as its first and last thousand lines
PLACEHOLDER = "Paste the failing job's log here (a few lines around the error are enough)"


def normalise(text: str) -> str:
    """Terminals send a pasted line end as CR (bracketed paste); logs want LF. The box shows
    (and the diagnosis reads) the text with terminal controls removed or made visible."""
    return safe(text.replace("\r\n", "\n").replace("\r", "\n"))


def as_path(text: str) -> Path | None:
    """The file a one-line paste names, if it names one."""
    candidate = text.strip().strip("'\"")
    if not candidate or "\n" in candidate or len(candidate) > 4096:
        return None
    try:
        path = Path(candidate).expanduser()
        return path if path.is_file() else None
    except (OSError, ValueError):
        return None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def symptom_text(kb: KnowledgeBase, symptom_id: str) -> Content:
    """A symptom's description and known causes, for the pane beside the tree."""
    from kb.rules.schema.models import text_of

    s = kb.symptoms[symptom_id]
    causes = sorted(kb.causes_of(symptom_id), key=lambda c: -c.prior)
    return Content.assemble(
        (text_of(s.title), "bold"),
        "\n",
        " ".join(text_of(s.description).replace("`", "").split()),
        "\n\n",
        (
            f"{_count(len(causes), 'known cause')}, {_count(len(s.questions), 'question')} "
            "to tell them apart:",
            "bold",
        ),
        *[f"\n• {text_of(c.title)}" for c in causes],
        "\n\n",
        ("Enter: start the walk from this symptom", "italic"),
    )


class LogArea(TextArea):
    """The paste box. A log too long to show whole is kept whole, and diagnosed whole, while
    the box shows its beginning and its end: loading 50,000 lines into a text area takes a
    second, a freeze nobody should feel mid-incident."""

    class Pasted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._full: str | None = None  # the whole log while the box shows a preview
        self._preview = ""
        self.diagnosed = False  # the box holds a log already diagnosed: a paste starts anew

    def show(self, text: str) -> None:
        """Put `text` in the box (a preview of it when it is long)."""
        lines = text.splitlines()
        if len(lines) <= PREVIEW_LINES:
            self._full = None
            self.load_text(text)
            return
        half = PREVIEW_LINES // 2
        gap = f"… {len(lines) - 2 * half:,} more lines, not shown here (all are diagnosed) …"
        self.load_text("\n".join([*lines[:half], gap, *lines[-half:]]))
        self._full, self._preview = text, self.text

    @property
    def log_text(self) -> str:
        """The whole log: the kept paste unless the preview was edited, else the box's text."""
        if self._full is not None and self.text == self._preview:
            return self._full
        return self.text

    async def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()  # TextArea's own handler would insert the text again
        event.stop()
        text = normalise(event.text)
        before = "" if self.diagnosed else self.log_text
        if not before.strip():
            self.show(text)
            self.move_cursor(self.document.end)
        elif self._full is not None or text.count("\n") >= PREVIEW_LINES:
            self.show(f"{before}\n{text}")
        else:
            await super()._on_paste(events.Paste(text))
        self.post_message(self.Pasted(text))


class StartScreen(BaseScreen):
    CSS_PATH = "start.tcss"
    AUTO_FOCUS = "#log"  # focused as the screen is composed (not the tabs first, then moved)
    HELP = (
        "Paste a log into the box (it is diagnosed at once), paste a path, or open a file "
        "with ctrl+o. Or switch to *Pick a symptom* (f2) and choose what you see: the "
        "assistant then asks the most telling questions first."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "diagnose", "Diagnose", priority=True),
        Binding("ctrl+o", "open_file", "Open file", priority=True),
        Binding("f2", "switch_tab", "Paste/Symptoms", priority=True),
        Binding("ctrl+l", "clear", "Clear", priority=True),
    ]

    def __init__(self, rules: KnowledgeBase | None = None) -> None:
        super().__init__()
        self.rules = rules  # None until loaded: the app calls `rules_ready` then
        self.recent: list[str] = []  # log files opened in earlier runs, most recent first

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Widget(id="start-tabs"):  # the tabs as one light widget: the first frame sooner
            yield TabStrip(
                ("paste-tab", "Paste a log"), ("symptom-tab", "Pick a symptom"), active="paste-tab"
            )
            with ContentSwitcher(initial="paste-tab", id="start-panes"):
                with Widget(id="paste-tab", classes="tab-pane"):
                    yield Static(INTRO, id="intro")
                    yield Static("", id="recent")
                    yield LogArea(
                        id="log", soft_wrap=False, placeholder=PLACEHOLDER, show_line_numbers=False
                    )
                    with Horizontal(id="start-buttons"):
                        yield StartButton("Diagnose (ctrl+r)", id="diagnose", variant="primary")
                        yield StartButton("Open a file (ctrl+o)", id="open")
                        yield Static("", id="paste-status")
                # its tree is mounted after the first frame (`_mount_symptoms`)
                yield Widget(id="symptom-tab", classes="tab-pane")
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one(LogArea).focus()
        if self.rules is not None:
            self.rules_ready(self.rules)

    def after_first_frame(self) -> None:
        """What the first frame need not wait for (the app calls this once it is drawn):
        the hidden tab's tree, the remembered logs."""
        self._mount_symptoms()
        self._offer_remembered()

    def _mount_symptoms(self) -> None:
        """The symptom tab's tree and its text, once (the tab shows nothing before)."""
        pane = self.query_one("#symptom-tab")
        if not pane.children:
            pane.mount(
                Vertical(
                    Tree("Kinds of trouble", id="symptom-tree"),
                    Static("Loading the knowledge base…", id="symptom-info"),
                    id="symptom-pane",
                )
            )

    def _offer_remembered(self) -> None:
        """The log files of earlier runs (kb.walk.state): the last one named, ctrl+o opens it."""
        from kb.walk.state import load

        remembered, notice = load()
        if notice is not None:
            self.notify(notice, severity="warning")
        self.recent = [p for p in remembered.logs if Path(p).is_file()]
        recent = self.query_one("#recent", Static)
        recent.display = bool(self.recent)
        if self.recent:
            recent.update(plain_line(f"ctrl+o reopens the last log: {self.recent[0]}"))

    def rules_ready(self, kb: KnowledgeBase) -> None:
        from kb.markdown.runbook import GROUP_TITLES
        from kb.rules.schema.models import text_of

        self.rules = kb
        self._mount_symptoms()
        if not any(tree.is_mounted for tree in self.query("#symptom-tree")):  # filled once it is
            self.call_after_refresh(self.rules_ready, kb)
            return

        tree = self.query_one("#symptom-tree", Tree)
        tree.clear()
        tree.show_root = False
        first = None
        for group, title in GROUP_TITLES.items():
            members = sorted(
                (s for s in kb.symptoms.values() if s.group == group),
                key=lambda s: text_of(s.title),
            )
            if not members:
                continue
            node = tree.root.add(Text(title), expand=True)  # Text: a title is never markup
            for s in members:
                leaf = node.add_leaf(Text(text_of(s.title)), data=s.id)
                first = first or leaf
        if first is not None:
            self.call_after_refresh(tree.move_cursor, first)
        self.query_one("#symptom-info", Static).update(
            f"{len(kb.symptoms)} symptoms, {len(kb.causes)} causes. Enter or click a symptom "
            "to start."
        )

    # ------------------------------------------------------------ paste and diagnose

    def on_paste(self, event: events.Paste) -> None:
        """A paste that landed outside the box (focus elsewhere) goes into it."""
        area = self.query_one(LogArea)
        self._show_tab("paste-tab")
        area.focus()
        text = normalise(event.text)
        fresh = area.diagnosed or not area.log_text.strip()
        area.show(text if fresh else f"{area.log_text}\n{text}")
        self._pasted(text)

    def on_log_area_pasted(self, message: LogArea.Pasted) -> None:
        self._pasted(message.text)

    def _pasted(self, text: str) -> None:
        """Diagnose what the box holds now; a paste after that starts a new log (a second
        job's log appended to the first would mix both in one diagnosis)."""
        area = self.query_one(LogArea)
        new = ", a new log" if area.diagnosed else ""  # the previous one replaced
        area.diagnosed = True
        path = as_path(text)
        if path is not None:
            area.show("")
            self.query_one("#paste-status", Static).update(plain_line(f"opened {path}"))
            self.post_message(Diagnose(path=path))
            return
        log = area.log_text
        self.query_one("#paste-status", Static).update(f"{log.count(chr(10)) + 1:,} lines{new}")
        self.post_message(Diagnose(text=log))

    def action_diagnose(self) -> None:
        area = self.query_one(LogArea)
        if not area.log_text.strip():
            self.notify("Paste a log first, or open a file with ctrl+o.", severity="warning")
            return
        area.diagnosed = False  # the box as it is now (perhaps edited) is the log
        self._pasted(area.log_text)

    def action_open_file(self) -> None:
        from dlperf_tui.screens.dialogs import OpenFileScreen

        def opened(path: Path | None) -> None:
            if path is not None:
                self.post_message(Diagnose(path=path))

        self.app.push_screen(OpenFileScreen(self.recent), opened)

    def action_clear(self) -> None:
        area = self.query_one(LogArea)
        area.show("")
        area.diagnosed = False
        self.query_one("#paste-status", Static).update("")

    def action_switch_tab(self) -> None:
        tab = "symptom-tab" if self.query_one(TabStrip).active == "paste-tab" else "paste-tab"
        self._show_tab(tab)
        for widget in self.query("#symptom-tree" if tab == "symptom-tab" else "#log"):
            widget.focus()

    def _show_tab(self, tab: str) -> None:
        """Show `tab`'s pane at once (a widget in it can take the focus now)."""
        self.query_one(TabStrip).active = tab
        self.on_tab_strip_activated(TabStrip.Activated(self.query_one(TabStrip), tab))

    def on_tab_strip_activated(self, message: TabStrip.Activated) -> None:
        """A tab clicked, or chosen with left and right on the strip."""
        if message.tab == "symptom-tab":
            self._mount_symptoms()
        self.query_one(ContentSwitcher).current = message.tab

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "diagnose":
            self.action_diagnose()
        elif event.button.id == "open":
            self.action_open_file()

    # ------------------------------------------------------------ symptoms

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        if event.node.data and self.rules is not None:
            self.query_one("#symptom-info", Static).update(
                symptom_text(self.rules, event.node.data)
            )

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        if event.node.data:
            self.post_message(StartWalk(event.node.data))
