"""Running one check, or reading the output the user ran it for: values to fill in, the
host, the exact command, a confirmation when the command changes the machine."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, TextArea
from textual.worker import get_current_worker

from dlperf_tui.plain import plain, plain_line
from kb.checks.model import CheckResult
from kb.markdown.blocks import CHANGES_MACHINE
from kb.rules.placeholders import refused, show_command
from kb.rules.schema.models import Check, text_of
from kb.util.textsafe import safe_line
from kb.walk.session import check_from_paste, missing_params

if TYPE_CHECKING:
    from dlperf_tui.hosts import Hosts

Mode = Literal["run", "paste"]


class CheckRunScreen(ModalScreen[CheckResult | None]):
    """Dismissed with the check's record, or None when the user cancels."""

    CSS_PATH = "check_run.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+r", "go", "Run / read", priority=True),
    ]

    def __init__(self, check: Check, params: dict[str, str], mode: Mode, hosts: Hosts) -> None:
        super().__init__()
        self.hosts = hosts
        self.check = check
        self.params = dict(params)
        self.mode = mode
        self.missing = missing_params(check, params)
        self._cancel: threading.Event | None = None  # set while the check runs

    def compose(self) -> ComposeResult:
        hosts = self.hosts.choices
        with VerticalScroll(classes="check-dialog"):
            yield Static(plain_line(text_of(self.check.title)), classes="dialog-title")
            yield Static(
                plain_line(" ".join(text_of(self.check.means).split())), classes="dialog-detail"
            )
            for name in self.missing:
                doc = self.check.params.get(name)
                hint = (
                    f"{doc.description}" + (f", e.g. {doc.example}" if doc and doc.example else "")
                    if doc
                    else name
                )
                yield Label(plain_line(f"{name}: {hint}"))
                yield Input(placeholder=hint, id=f"param-{name}", classes="param")
            yield Static(id="command")
            if self.mode == "run":
                if len(hosts) > 1:
                    yield Select(
                        [(Text(safe_line(h)), h) for h in hosts],  # Text: searchable, no markup
                        value=self.hosts.selected,
                        allow_blank=False,
                        id="host",
                    )
                if not self.check.read_only:
                    yield Static(f"This command {CHANGES_MACHINE}.", classes="warning")
            else:
                yield Label("Its output (paste it here):")
                yield TextArea(id="output", soft_wrap=False)
                yield Input(
                    placeholder="exit status, if you know it (e.g. 0)",
                    id="exit-code",
                    type="integer",
                )
            yield Static("", id="check-status")
            with Horizontal(classes="dialog-buttons"):
                label = (
                    ("Run this command" if not self.check.read_only else "Run")
                    if self.mode == "run"
                    else "Read the output"
                ) + " (ctrl+r)"
                yield Button(
                    label,
                    id="go",
                    variant="warning"
                    if not self.check.read_only and self.mode == "run"
                    else "primary",
                )
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self._update_command()
        first = self.query(".param").first() if self.missing else None
        if first is not None:
            first.focus()
        elif self.mode == "paste":
            self.query_one("#output", TextArea).focus()
        else:
            self.query_one("#go", Button).focus()

    def _values(self) -> dict[str, str]:
        values = dict(self.params)
        for name in self.missing:
            value = self.query_one(f"#param-{name}", Input).value.strip()
            if value:
                values[name] = value
        return values

    def _update_command(self) -> None:
        self.query_one("#command", Static).update(  # values the user typed: never markup
            plain("$ " + show_command(self.check.run, self._values(), self.check.params))
        )

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.has_class("param"):
            self._update_command()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "cancel":
            self.action_cancel()
        elif event.button.id == "go":
            self._go()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._go()

    def action_go(self) -> None:
        self._go()

    def _go(self) -> None:
        values = self._values()
        unfilled = [n for n in self.missing if n not in values]
        if unfilled:
            self._status(f"Fill in {', '.join(unfilled)} first.")
            return
        bad = refused(self.check.run, values, self.check.params)
        if bad:  # the one command builder refuses it: nothing runs, the user corrects it
            self._status(f"Refused value {bad[0]}")
            return
        if self.mode == "paste":
            output = self.query_one("#output", TextArea).text
            code_text = self.query_one("#exit-code", Input).value.strip()
            code = int(code_text) if code_text.lstrip("-").isdigit() else None
            if not output.strip() and code is None:
                self._status("Paste the command's output first.")
                return
            self.dismiss(check_from_paste(self.check, output, code, values))
            return
        if self._cancel is not None:
            return
        hosts = self.hosts
        if self.query("#host"):
            hosts.select(str(self.query_one("#host", Select).value))
        self._cancel = threading.Event()
        self._status(f"Running {hosts.where()}… (Esc cancels)")
        self._run(values, self._cancel)

    @work(thread=True, exclusive=True)
    def _run(self, values: dict[str, str], cancel: threading.Event) -> None:
        """The check through kb's engine (`run_check_on`), confirmed: the user read this
        exact command here and pressed Run."""
        from kb.walk.session import run_check_on

        worker = get_current_worker()
        hosts = self.hosts
        record = run_check_on(
            self.check, hosts.for_job(), hosts.make_runner, values, confirmed=True, cancel=cancel
        )
        if not worker.is_cancelled:
            self.app.call_from_thread(self.dismiss, record)

    def _status(self, text: str) -> None:
        self.query_one("#check-status", Static).update(plain(text))

    def action_cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        self.workers.cancel_all()
        self.dismiss(None)
