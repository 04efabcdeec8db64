"""Small modal dialogs: progress with cancel, a question with choices, a path to open,
another step to take."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from dlperf_tui.plain import plain, plain_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from dlperf_tui.fixscript import Needed
    from kb.walk.engine import Step


class BusyScreen(ModalScreen[bool]):
    """Long work in progress; dismissed with True when the user cancels."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, message: str, measured: bool = False) -> None:
        super().__init__()
        self.message = message
        self.measured = measured  # False: no way to know how far it is, the bar pulses
        self._fraction: float | None = None  # the last progress, kept until the bar exists

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(plain_line(self.message), classes="dialog-title")
            yield ProgressBar(
                total=100 if self.measured else None, show_eta=self.measured, id="busy-progress"
            )
            yield Button("Cancel (Esc)", id="busy-cancel", variant="warning")

    def progress(self, fraction: float) -> None:
        """Show how far the work is; before the bar is built the value waits for on_mount.

        A worker's progress can arrive between push_screen and compose (the dialog is
        attached but has no children yet), so this never assumes the bar exists.
        """
        self._fraction = fraction
        if self.measured:
            for bar in self.query(ProgressBar):
                bar.update(progress=round(fraction * 100, 1))

    def on_mount(self) -> None:
        if self._fraction is not None:
            self.progress(self._fraction)

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
    """Ask for a log file to open; the logs opened in earlier runs are offered (the last
    one filled in, so Enter opens it again)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, recent: list[str] | None = None) -> None:
        super().__init__()
        self.recent = list(recent or [])

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Open a log file (plain or .gz)", classes="dialog-title")
            yield Input(
                value=self.recent[0] if self.recent else "",
                placeholder="path, e.g. ~/logs/rank0.log",
                id="open-path",
            )
            yield Label("", id="open-error", classes="dialog-error")
            if len(self.recent) > 1:
                yield Label("Opened before (Tab, then Enter):", classes="dialog-detail")
                yield OptionList(
                    *[Option(plain_line(p), id=f"recent-{i}") for i, p in enumerate(self.recent)],
                    id="open-recent",
                )
            yield Label("Enter opens it, Esc cancels.", classes="dialog-detail")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = self.recent[int((event.option.id or "recent-0").removeprefix("recent-"))]
        self._open(chosen)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._open(event.value)

    def _open(self, text: str) -> None:
        path = Path(text.strip()).expanduser()
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


class SavePathScreen(ModalScreen[Path | None]):
    """Ask where to write a file, the default filled in: nothing lands in a folder unsaid."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, default: Path) -> None:
        super().__init__()
        self.title_text = title
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(plain_line(self.title_text), classes="dialog-title")
            yield Input(value=str(self.default), id="save-path")
            yield Static("", id="save-error", classes="dialog-error")  # wraps a long path
            yield Label("Enter writes it there, Esc cancels.", classes="dialog-detail")

    def on_mount(self) -> None:
        self.query_one("#save-path", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        path = Path(text).expanduser() if text else self.default
        problem = None
        if path.is_dir():
            problem = f"A folder, not a file: {path}"
        elif not path.parent.is_dir():
            problem = f"No such folder: {path.parent}"
        if problem:
            self.query_one("#save-error", Static).update(plain_line(problem))
            return
        self.dismiss(path.absolute())


class ValuesScreen(ModalScreen[dict[str, str] | None]):
    """Ask for the values a fix still needs before it is copied; each is checked by its kind
    (`check` says why a value is refused) and the dialog stays until all are good."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, needed: list[Needed], check: Callable[[str, str], str | None]):
        super().__init__()
        self.title_text = title
        self.needed = needed
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(plain_line(self.title_text), classes="dialog-title")
            for n in self.needed:
                yield Static(plain(f"{n.name}: {n.description}"))
                yield Input(
                    placeholder=f"e.g. {n.example}" if n.example else n.name, id=f"value-{n.name}"
                )
                yield Static(plain(n.problem), id=f"value-error-{n.name}", classes="dialog-error")
            yield Label(
                "Enter copies the fix with these values, Esc cancels.", classes="dialog-detail"
            )

    def on_mount(self) -> None:
        self.query(Input).first().focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        values: dict[str, str] = {}
        first_bad: Input | None = None
        for n in self.needed:
            field = self.query_one(f"#value-{n.name}", Input)
            value = field.value.strip()
            problem = "still needed" if not value else self.check(n.name, value)
            self.query_one(f"#value-error-{n.name}", Static).update(plain(problem or ""))
            if problem:
                first_bad = first_bad or field
            values[n.name] = value
        if first_bad is not None:
            first_bad.focus()
            return
        self.dismiss(values)
