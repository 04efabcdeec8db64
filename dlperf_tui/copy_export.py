"""What the app does with a fix and the session: copy a fix's commands, export the runbook.

Why its own part: both leave the terminal (the clipboard through OSC 52, a Markdown file)
and both say plainly what happened, where to, and what to do when it could not be done.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from dlperf_tui.app_part import AppPart

if TYPE_CHECKING:
    from kb.rules.schema.models import Fix, FixCommand


class CopyAndExport(AppPart):
    """The app's part that copies fixes and writes runbooks."""

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
