"""The Textual application: loads the rules, holds the session, moves between screens.

Why it exists: one place that owns the state a session needs (the knowledge base, the
`kb.walk.session.Session`, the hosts checks can run on) and the long jobs (loading rules,
scanning logs) that run in worker threads, so every screen stays a thin view. Attributes
go down, messages come up: a screen is handed the session and hosts it shows, and posts a
`dlperf_tui.messages` message for what only the app does (open a screen, copy, export).
Its parts, one module each: `held_keys.py` (input before the rules load), `scanning.py`
(a log scan and its busy dialog), `copy_export.py` (a fix copied, the runbook exported).
"""

from __future__ import annotations

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
from dlperf_tui.copy_export import CopyAndExport
from dlperf_tui.held_keys import HeldKeys
from dlperf_tui.scanning import LogScans
from dlperf_tui.screens.start import StartScreen
from kb.util.errors import UserError
from kb.util.textsafe import safe, safe_line

if TYPE_CHECKING:  # these load after the first frame (the engine's in a worker)
    from dlperf_tui.hosts import Hosts
    from dlperf_tui.screens.dialogs import BusyScreen
    from kb.rules.knowledge import KnowledgeBase
    from kb.walk.session import Session


class DlperfHelpApp(HeldKeys, LogScans, CopyAndExport, App[int]):
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
