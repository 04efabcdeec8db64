"""The app's side of a log scan: the worker, the busy dialog, the diagnosis it opens.

Why its own part: a scan asked for before the rules load waits for them (`_pending`),
shows its progress only when it takes a while (`BUSY_DELAY`), can be cancelled from the
dialog, and ends in the diagnosis view or a one-line error; `dlperf_tui/jobs.py` is the
scan itself.
"""

from __future__ import annotations

import threading
from pathlib import Path

from textual import work

from dlperf_tui.app_part import AppPart

BUSY_DELAY = 0.3  # seconds before a running scan shows its progress dialog


class LogScans(AppPart):
    """The app's part that scans a pasted log or a file in a worker."""

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
