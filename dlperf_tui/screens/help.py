"""`?` help: what the current screen is for, its keys, and the keys that work everywhere."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

GENERAL = """\
**Everywhere**: `ctrl+q` quits (asks first during a walk; `q` too where no text box has
focus) · `?` or `F1` this help · `Esc` back · `ctrl+p` search symptoms, causes, fixes and
error lines · `ctrl+k` cluster view · `ctrl+t` light/dark theme · the mouse works: click,
scroll, select text. Run `dlperf-help` again any time (`dlperf-help tui LOG` opens a log).

**The flow**: paste a log or pick a symptom → see the causes and their evidence → walk:
answer the questions, run or paste the checks → the fix, with commands to copy → verify
it → `e` writes the runbook of the whole session (secrets masked). Back on the first
screen, a new paste starts a new log; `ctrl+l` clears the box.
"""


def _own_bindings(*classes: type) -> set[tuple[str, str]]:
    """(action, description) of the bindings the assistant's own classes declare."""
    return {
        (b.action, b.description)
        for cls in classes
        for base in cls.__mro__
        if base.__module__.startswith("dlperf_tui.")
        for b in base.__dict__.get("BINDINGS", [])
        if isinstance(b, Binding)
    }


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
        # every key of the screen: the footer's few and those it has no room for (not
        # Textual's own: Tab, a list's arrows)
        ours = _own_bindings(type(self.under), type(self.app))
        keys: dict[tuple[str, str], list[str]] = {}
        for key, active in self.under.active_bindings.items():
            b = active.binding
            if b.description and (b.action, b.description) in ours:
                shown = keys.setdefault((b.action, b.description), [])
                display = b.key_display or key
                if display not in shown:
                    shown.append(display)
        lines = [f"`{' / '.join(shown)}` {what}" for (_, what), shown in keys.items()]
        table = "**Keys here**: " + " · ".join(lines) if lines else ""
        return f"## Help: {name}\n\n{about}\n\n{table}\n\n{GENERAL}\nEsc closes this help."
