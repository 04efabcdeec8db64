"""Small modal dialogs: progress with cancel, a question with choices, a path to open,
another step to take."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, ProgressBar
from textual.widgets.option_list import Option

from dlperf_tui.plain import plain, plain_line

if TYPE_CHECKING:
    from kb.walk import Step


class BusyScreen(ModalScreen[bool]):
    """Long work in progress; dismissed with True when the user cancels."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, message: str, measured: bool = False) -> None:
        super().__init__()
        self.message = message
        self.measured = measured  # False: no way to know how far it is, the bar pulses

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(plain_line(self.message), classes="dialog-title")
            yield ProgressBar(
                total=100 if self.measured else None, show_eta=self.measured, id="busy-progress"
            )
            yield Button("Cancel (Esc)", id="busy-cancel", variant="warning")

    def progress(self, fraction: float) -> None:
        if self.measured:
            self.query_one(ProgressBar).update(progress=round(fraction * 100, 1))

    def action_cancel(self) -> None:
        self.dismiss(True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(True)


class ConfirmScreen(ModalScreen[str | None]):
    """A question with a few labelled choices; Escape answers None."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, message: str, choices: list[tuple[str, str]], detail: str = "") -> None:
        super().__init__()
        self.message = message
        self.detail = detail
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(plain(self.message), classes="dialog-title")
            if self.detail:
                yield Label(plain(self.detail), classes="dialog-detail")
            with Horizontal(classes="dialog-buttons"):
                for i, (key, label) in enumerate(self.choices):
                    yield Button(
                        label, id=f"choice-{key}", variant="primary" if i == 0 else "default"
                    )

    def on_mount(self) -> None:
        self.query(Button).first().focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "").removeprefix("choice-"))


class OpenFileScreen(ModalScreen[Path | None]):
    """Ask for a log file to open."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Open a log file (plain or .gz)", classes="dialog-title")
            yield Input(placeholder="path, e.g. ~/logs/rank0.log", id="open-path")
            yield Label("", id="open-error", classes="dialog-error")
            yield Label("Enter opens it, Esc cancels.", classes="dialog-detail")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        path = Path(event.value.strip()).expanduser()
        if path.is_file():
            self.dismiss(path)
        else:
            self.query_one("#open-error", Label).update(plain_line(f"{path}: no such file"))


class StepsScreen(ModalScreen[str | None]):
    """Every step still worth taking, best p/C first, to take another than the proposed."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, steps: list[Step]) -> None:
        super().__init__()
        self.steps = steps

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(
                "Steps still worth taking (best first: chance to settle it ÷ cost)",
                classes="dialog-title",
            )
            yield OptionList(
                *[
                    Option(
                        plain_line(
                            f"{s.efficiency:5.2f}  {'check' if s.kind == 'check' else 'ask  '}  "
                            f"{' '.join(s.title.split())[:90]}  (p {s.p_settle:.2f}, "
                            f"cost {s.cost:g})"
                        ),
                        id=s.key,
                    )
                    for s in self.steps
                ],
                id="steps-list",
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)
