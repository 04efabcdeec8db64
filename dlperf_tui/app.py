"""The Textual application: loads the rules, holds the session, moves between screens.

Why it exists: one place that owns the state a session needs (the knowledge base, the
`kb.walk.session.Session`, the hosts checks can run on) and the long jobs (loading rules,
scanning logs) that run in worker threads, so every screen stays a thin view. Attributes
go down, messages come up: a screen is handed the session and hosts it shows, and posts a
`dlperf_tui.messages` message for what only the app does (open a screen, copy, export).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel

from dlperf_tui import messages
from dlperf_tui.commands import KnowledgeCommands
from dlperf_tui.screens.start import StartScreen
from kb.util.errors import UserError
from kb.util.textsafe import safe, safe_line

if TYPE_CHECKING:  # these load after the first frame (the engine's in a worker)
    from dlperf_tui.hosts import Hosts
    from dlperf_tui.screens.dialogs import BusyScreen
    from kb.rules.knowledge import KnowledgeBase
    from kb.rules.schema.models import Fix, FixCommand
    from kb.walk.session import Session

BUSY_DELAY = 0.3  # seconds before a running scan shows its progress dialog
QUIT_KEYS = frozenset({"ctrl+q", "ctrl+c"})  # never held back while the rules load
EDIT_KEYS = frozenset(  # typing in a text box needs no rules: never held back
    {"enter", "backspace", "delete", "left", "right", "up", "down", "home", "end", "tab"}
)


class DlperfHelpApp(App[int]):
    """`dlperf-help` in a terminal: paste a log or pick a symptom, walk to the fix."""

    TITLE = "dlperf-help"
    SUB_TITLE = "troubleshoot distributed training"
    # the start screen is the default screen, whose own CSS_PATH Textual does not read
    CSS_PATH = ["app.tcss", "screens/start.tcss"]  # noqa: RUF012 (typed by Textual)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012 (typed by Textual)
    COMMANDS = App.COMMANDS | {KnowledgeCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "f1,question_mark", "help", "Help", key_display="F1"
        ),  # ? types in a text box; F1 never
        # ctrl+q quits everywhere (a text box takes `q` as a letter), and says so
        Binding("ctrl+q", "quit", "Quit", key_display="^q", priority=True),
        Binding("q", "quit", "Quit", show=False),
        Binding("ctrl+t", "toggle_theme", "Light/dark", show=False),
        Binding("ctrl+k", "cluster", "Cluster", show=False, priority=True),
    ]

    def __init__(
        self,
        rules: Path | None = None,
        log: Path | None = None,
        export_dir: Path | None = None,
        kb: KnowledgeBase | None = None,
    ) -> None:
        super().__init__()
        self.rules = rules
        self.start_log = log
        self.export_dir = export_dir
        self.kb: KnowledgeBase | None = kb
        self.session: Session | None = None
        if kb is not None:  # given the rules (tests, embedding): ready at once
            from kb.walk.session import Session

            self.session = Session(kb)
        self._runners: Hosts | None = None
        self.fatal: str | None = None
        self._busy: BusyScreen | None = None
        self._pending: tuple[str | None, Path | None] | None = None
        self._held: list[events.Key | events.Paste] = []  # input before the rules loaded
        self._cancel_scan = threading.Event()
        self.exported: Path | None = None  # the last runbook written, said again on exit

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification is plain text: messages carry paths, commands and findings
        (markup in them would be parsed, `[@click=…]` live); terminal controls are shown."""
        super().notify(
            safe(message), title=safe_line(title), severity=severity, timeout=timeout, markup=False
        )

    # ------------------------------------------------------------ start up

    @property
    def runners(self) -> Hosts:
        """Where checks run: this machine, and the nodes added in the hosts panel."""
        if self._runners is None:
            from dlperf_tui.hosts import Hosts

            self._runners = Hosts()
        return self._runners

    @runners.setter
    def runners(self, hosts: Hosts) -> None:
        self._runners = hosts

    def get_default_screen(self) -> StartScreen:
        """The start screen is the first on the stack: no blank screen is drawn before it."""
        return StartScreen(self.kb)

    def on_mount(self) -> None:
        if self.kb is not None:
            self.call_after_refresh(self._rules_ready, self.kb)

    def on_ready(self) -> None:
        """The first frame is on screen: now what it did not wait for (the rules load in a
        worker; starting it a moment later leaves the frame's write the GIL)."""
        from dlperf_tui import collector

        collector.resume()  # paused since the command started, for this frame
        for screen in self.screen_stack:
            if isinstance(screen, StartScreen):
                screen.after_first_frame()
        if self.kb is None:
            self.set_timer(0.05, self.load_rules)

    async def on_event(self, event: events.Event) -> None:
        """Keys that come before the knowledge base has loaded (and pastes after them)
        are held, then replayed in order once it has: what is typed at the first frame
        is acted on, never dropped. Typing into a text box and quitting go on at once."""
        if self.kb is None and self._holds(event):
            self._held.append(event)  # type: ignore[arg-type]  # a Key or a Paste
            return
        await super().on_event(event)

    def _holds(self, event: events.Event) -> bool:
        if isinstance(event, events.Paste):
            return bool(self._held)  # after held keys: in its turn
        if not isinstance(event, events.Key) or event.is_forwarded or event.key in QUIT_KEYS:
            return False
        if self._held:
            return True
        from textual.widgets import Input, TextArea

        typing = event.is_printable or event.key in EDIT_KEYS
        return not (typing and isinstance(self.focused, (Input, TextArea)))

    def _replay_held(self) -> None:
        held, self._held = self._held, []
        for event in held:
            if isinstance(event, events.Key):
                self.post_message(events.Key(event.key, event.character))
            else:
                self.post_message(events.Paste(event.text))

    @work(thread=True, exclusive=True, group="rules")
    def load_rules(self) -> None:
        from kb.authoring.checked import load_kb
        from kb.walk.session import Session  # noqa: F401  (imported here, off the UI thread)

        try:
            kb = load_kb(self.rules)
        except UserError as exc:
            self.call_from_thread(self._fail, str(exc))
            return
        self.call_from_thread(self._rules_ready, kb)

    def _fatal_error(self) -> None:
        """An unexpected error: one line for the user, the traceback kept in a file."""
        if os.environ.get("DLPERF_HELP_DEBUG"):
            super()._fatal_error()
            return
        import traceback

        from kb.util import paths

        exc = sys.exc_info()[1]
        where = paths.cache_dir() / "tui-crash.txt"
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text(traceback.format_exc(), encoding="utf-8")
            kept = f"details in {where}"
        except OSError:
            kept = "set DLPERF_HELP_DEBUG=1 to see where"
        self.fatal = f"internal error: {type(exc).__name__}: {exc} ({kept})"
        self.bell()
        self._close_messages_no_wait()

    def _fail(self, message: str) -> None:
        self.fatal = message
        self.exit(2)

    def _rules_ready(self, kb: KnowledgeBase) -> None:
        from kb.walk.session import Session

        if self.session is None or self.session.kb is not kb:
            self.session = Session(kb)
        self.kb = kb
        for screen in self.screen_stack:
            if isinstance(screen, StartScreen):
                screen.rules_ready(kb)
        self._replay_held()
        pending, self._pending = self._pending, None
        if pending is not None:
            self._end_busy()
            self.diagnose(*pending)
        elif self.start_log is not None:
            self.diagnose(path=self.start_log)

    # ------------------------------------------------------------ diagnosis

    def diagnose(self, text: str | None = None, path: Path | None = None) -> None:
        """Scan a pasted log or a file in a worker; the result opens the diagnosis view."""
        if self.session is None or self.kb is None:  # scan once the rules are loaded
            self._pending = (text, path)
            if self._busy is None:
                from dlperf_tui.screens.dialogs import BusyScreen

                self._busy = BusyScreen("Loading the knowledge base…")
                self.push_screen(self._busy, self._busy_closed)
            return
        if path is not None and not path.is_file():
            self.notify(f"{path}: no such file", severity="error")
            return
        name = str(path) if path is not None else "pasted log"
        self.session.set_log(name, text=text, path=path)
        if path is not None:  # offered again next run; a pasted log's text never is
            from kb.walk.state import remember_log

            notice = remember_log(path)
            if notice is not None:
                self.notify(notice, severity="warning")
        from dlperf_tui.screens.dialogs import BusyScreen

        self._busy = BusyScreen(f"Scanning {name}…", measured=path is not None)
        self.set_timer(BUSY_DELAY, self._show_busy)
        self._cancel_scan = threading.Event()
        self._diagnose_worker(text, path, name, self._cancel_scan)

    def _show_busy(self) -> None:
        if self._busy is not None and not self._busy.is_attached:
            self.push_screen(self._busy, self._busy_closed)

    def _busy_closed(self, cancel: bool | None) -> None:
        if cancel:
            self._pending = None
            self._cancel_scan.set()
            self.workers.cancel_group(self, "diagnose")
            self._busy = None
            self.notify("Scan cancelled.")

    @work(thread=True, exclusive=True, group="diagnose")
    def _diagnose_worker(
        self, text: str | None, path: Path | None, name: str, cancel: threading.Event
    ) -> None:
        from dlperf_tui.jobs import Cancelled, diagnose

        assert self.kb is not None
        try:
            diag = diagnose(
                self.kb,
                text=text,
                path=path,
                name=name,
                cancel=cancel,
                progress=lambda f: self.call_from_thread(self._progress, f),
            )
        except Cancelled:
            return
        except OSError as exc:
            self.call_from_thread(self._diagnosis_failed, f"{name}: {exc.strerror or exc}")
            return
        if not cancel.is_set():
            self.call_from_thread(self._diagnosis_done, diag)

    def _progress(self, fraction: float) -> None:
        if self._busy is not None and self._busy.is_attached:
            self._busy.progress(fraction)

    def _end_busy(self) -> None:
        busy, self._busy = self._busy, None
        if busy is not None and busy.is_attached:
            busy.dismiss(False)

    def _diagnosis_failed(self, message: str) -> None:
        self._end_busy()
        self.notify(message, severity="error")

    def _diagnosis_done(self, diag: object) -> None:
        from dlperf_tui.screens.diagnosis import DiagnosisScreen

        self._end_busy()
        assert self.session is not None
        self.session.diagnosis = diag  # type: ignore[assignment]
        self.push_screen(DiagnosisScreen(self.session))

    # ------------------------------------------------------------ walk and cards

    def start_walk(
        self,
        symptom: str | None = None,
        use_diagnosis: bool = False,
        cause: str | None = None,
        fix: str | None = None,
    ) -> None:
        """Walk from `symptom` (or the diagnosis); `cause` and `fix` chosen at once."""
        from dlperf_tui.screens.walk import WalkScreen

        if self.session is None:
            return
        if not use_diagnosis:
            self.session.diagnosis = None
            self.session.log_name = self.session.log_text = self.session.log_path = None
        walk = self.session.start_walk(symptom)
        self.push_screen(WalkScreen(self.session, self.runners))
        if cause is not None:
            walk.choose(cause)
            if fix is not None:
                self.session.choose_fix(fix)

    def show_card(self, kind: str, node_id: str) -> None:
        from dlperf_tui.screens.card import CardScreen

        if self.session is not None:
            self.push_screen(CardScreen(self.session, kind, node_id))

    def show_conclusion(self) -> None:
        from dlperf_tui.screens.conclusion import ConclusionScreen

        if self.session is not None:
            self.push_screen(ConclusionScreen(self.session, self.runners))

    # ------------------------------------------------------------ what screens ask

    def on_start_walk(self, message: messages.StartWalk) -> None:
        self.start_walk(message.symptom, message.use_diagnosis, message.cause, message.fix)

    def on_show_card(self, message: messages.ShowCard) -> None:
        self.show_card(message.kind, message.node_id)

    def on_show_conclusion(self, _message: messages.ShowConclusion) -> None:
        self.show_conclusion()

    def on_diagnose(self, message: messages.Diagnose) -> None:
        self.diagnose(message.text, message.path)

    def on_copy_fix(self, message: messages.CopyFix) -> None:
        self.copy_fix(message.fix, message.params, message.commands)

    def on_ask_export(self, _message: messages.AskExport) -> None:
        self.ask_export()

    def on_export_runbook(self, _message: messages.ExportRunbook) -> None:
        self.export_runbook()

    # ------------------------------------------------------------ actions

    def copy_fix(
        self, fix: Fix, params: dict[str, str], commands: list[FixCommand] | None = None
    ) -> None:
        """Copy the fix's commands (default: all) as lines ready to paste, every value filled
        in by kb's builder; a value still missing or refused is asked for first."""
        from dlperf_tui import fixscript
        from dlperf_tui.screens.dialogs import ValuesScreen

        if not (fixscript.chosen(fix, params) if commands is None else commands):
            self.notify("This fix has no command to copy; read its steps.")
            return
        need = fixscript.needed(fix, params, commands)
        if not need:
            self.copy_command(fixscript.script(fix, params, commands))
            return

        def entered(values: dict[str, str] | None) -> None:
            if values is not None:
                self.copy_fix(fix, {**params, **values}, commands)

        names = ", ".join(n.name for n in need)
        self.push_screen(
            ValuesScreen(f"Copying needs {names}", need, lambda n, v: fixscript.refusal(fix, n, v)),
            entered,
        )

    def copy_command(self, command: str) -> None:
        """Copy to the clipboard (OSC 52) and show the command, for terminals without one."""
        self.copy_to_clipboard(command)
        self.notify(
            f"{command}\n\nCopied (OSC 52). No clipboard in this terminal? Select the "
            "command with the mouse (shift+drag in tmux).",
            title="Copied",
            timeout=10,
        )

    def runbook_path(self) -> Path:
        """Where a runbook goes unless the user says otherwise."""
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        return (self.export_dir or Path.cwd()) / f"dlperf-help-session-{stamp}.md"

    def ask_export(self) -> None:
        """`e`: ask where the runbook goes (the default filled in), then write it there."""
        from dlperf_tui.screens.dialogs import SavePathScreen

        if self.session is None:
            return

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.export_runbook(path)

        self.push_screen(SavePathScreen("Export the runbook to", self.runbook_path()), chosen)

    def export_runbook(self, target: Path | None = None) -> Path | None:
        """Write the session's runbook to `target` (None: the default, else the home folder);
        returns the file, or None when it could not be written. Says where either way."""
        from kb.markdown import session_runbook

        if self.session is None:
            return None
        text = session_runbook.render(self.session)
        default = self.runbook_path()
        tries = [target] if target is not None else [default, Path.home() / default.name]
        problem = ""
        for path in tries:
            try:
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                problem = f"{path}: {exc.strerror or exc}"
                continue
            self.exported = path.absolute()
            self.notify(f"Runbook written to {self.exported}", title="Exported", timeout=10)
            return path
        self.notify(f"Could not write the runbook: {problem}", severity="error")
        return None

    def action_help(self) -> None:
        from dlperf_tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_cluster(self) -> None:
        from dlperf_tui.screens.cluster import ClusterScreen

        if self.session is not None and not isinstance(self.screen, ClusterScreen):
            self.push_screen(ClusterScreen(self.session, self.runners))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme != "textual-light" else "textual-dark"

    @property
    def walk_in_progress(self) -> bool:
        walk = self.session.walk if self.session is not None else None
        return walk is not None and bool(walk.events)

    async def action_quit(self) -> None:
        from dlperf_tui.screens.dialogs import ConfirmScreen

        if not self.walk_in_progress:
            self.exit(0)
            return

        def answer(choice: str | None) -> None:
            if choice == "export":
                self.export_runbook()
            if choice in ("quit", "export"):
                self.exit(0)

        await self.push_screen(
            ConfirmScreen(
                "Quit now? Your walk is in progress.",
                [("export", "Export the runbook and quit"), ("quit", "Quit"), ("stay", "Stay")],
            ),
            answer,
        )


def run_app(log: Path | None = None) -> int:
    """Run the assistant in this terminal; a broken rule set is a one-line error."""
    from kb.util import paths

    if log is not None and not log.is_file():
        raise UserError("no such file", where=str(log))
    rules = Path(os.environ["DLPERF_HELP_RULES"]) if os.environ.get("DLPERF_HELP_RULES") else None
    app = DlperfHelpApp(rules=rules or paths.rules_dir(), log=log)
    app.run()
    if app._runners is not None:
        app._runners.close()
    if app.exported is not None:
        print(f"dlperf-help: the runbook is in {app.exported}", file=sys.stderr)
    if app.fatal:
        raise UserError(app.fatal)
    return app.return_code or 0
