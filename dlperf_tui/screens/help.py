"""`?` help: what the current screen is for, its keys, and the keys that work everywhere."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

GENERAL = """\
**Everywhere**: `?` or `F1` this help · `ctrl+p` search symptoms, causes, fixes and error
lines · `Esc` back · `q` quit (asks first during a walk) · `ctrl+t` light/dark theme ·
the mouse works: click, scroll, select text.

**The flow**: paste a log or pick a symptom → see the causes and their evidence → walk:
answer the questions, run or paste the checks → the fix, with commands to copy → verify
it → `e` writes the runbook of the whole session (secrets masked).
"""


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,f1,q", "dismiss(None)", "Close")
    ]

    def __init__(self, under: Screen[object]) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(self._text())

    def _text(self) -> str:
        name = type(self.under).__name__.removesuffix("Screen")
        about = getattr(self.under, "HELP", "")
        keys: dict[tuple[str, str], str] = {}
        for key, active in self.under.active_bindings.items():
            b = active.binding
            if b.description and b.show:
                keys.setdefault((b.action, b.description), b.key_display or key)
        lines = [f"- `{key}` {what}" for (_, what), key in keys.items()]
        table = "**Keys here**\n\n" + "\n".join(lines) if lines else ""
        return f"## Help: {name}\n\n{about}\n\n{table}\n\n{GENERAL}\nEsc closes this help."
