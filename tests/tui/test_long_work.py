"""Long work shows progress, can be cancelled, and never blocks the screen."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dlperf_tui import jobs
from kb.rules.knowledge import KnowledgeBase
from tests.tui.common import LOG
from tests.tui.driving import paste, screen_text, shows, until, until_screen


def big_log(tmp_path: Path, lines: int) -> Path:
    path = tmp_path / "big.log"
    healthy = "".join(
        f"step {i} loss 0.{i % 9973:04d} lr 1e-4 throughput 2458.7 img/s\n" for i in range(lines)
    )
    path.write_text(healthy + LOG.read_text())
    return path


@pytest.mark.slow
def test_a_file_scan_reports_progress_up_to_the_end(kb: KnowledgeBase, tmp_path: Path):
    seen: list[float] = []
    diag = jobs.diagnose(kb, path=big_log(tmp_path, 200_000), progress=seen.append)
    assert [c.id for c in diag.causes] == ["nccl-wrong-interface"]
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)


def test_a_cancelled_scan_raises_instead_of_returning_a_partial_result(
    kb: KnowledgeBase, tmp_path: Path
):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(jobs.Cancelled):
        jobs.diagnose(kb, path=big_log(tmp_path, 1000), cancel=cancel)


def test_an_unreadable_file_is_an_error_not_a_crash(kb: KnowledgeBase, tmp_path: Path):
    (tmp_path / "locked.log").mkdir()  # a directory where a file is expected
    with pytest.raises(OSError):
        jobs.diagnose(kb, path=tmp_path / "locked.log")


@pytest.mark.slow
async def test_escape_cancels_a_running_scan_and_the_screen_stays_usable(
    make_app: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    started = threading.Event()

    def endless_scan(kb: object, *, cancel: threading.Event, progress: Callable, **_: object):
        """Stands in for a scan of a huge file: reports progress until cancelled."""
        started.set()
        done = 0.0
        while not cancel.wait(0.02):
            done = min(0.99, done + 0.01)
            progress(done)
        raise jobs.Cancelled

    monkeypatch.setattr(jobs, "diagnose", endless_scan)
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until_screen(pilot, "StartScreen")
        app.diagnose(path=LOG)
        await until_screen(pilot, "BusyScreen")
        await until(pilot, started.is_set)
        await shows(pilot, "Scanning", "Cancel (Esc)")
        await pilot.press("escape")
        await until_screen(pilot, "StartScreen")
        await shows(pilot, "Scan cancelled.")
        assert app._cancel_scan.is_set()


@pytest.mark.slow
async def test_a_paste_of_many_thousand_lines_lands_in_one_piece(make_app: Callable):
    lines = [f"[rank{i % 64}] step {i} loss 0.{i % 9973:04d}" for i in range(50_000)]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        area = app.screen.query_one("#log")
        started = time.monotonic()
        await paste(pilot, area, "\n".join(lines))
        await until(pilot, lambda: app.session.log_text is not None, timeout=30)
        # the box shows the first and last thousand lines; the whole paste is diagnosed
        assert area.document.line_count == 2001
        assert "… 48,000 more lines, not shown here (all are diagnosed) …" in area.text
        assert app.session.log_text.splitlines() == lines
        assert area.log_text == app.session.log_text
        await until_screen(pilot, "DiagnosisScreen", timeout=60)
        await shows(pilot, "No known problem found in pasted log (50,000 lines)")
        print(f"50,000-line paste to diagnosis: {time.monotonic() - started:.2f} s")
        assert screen_text(app)


@pytest.mark.slow
async def test_progress_that_arrives_before_the_busy_dialog_is_built_is_kept(
    make_app: Callable,
):
    """A worker's progress can reach the dialog between push_screen and compose (under load)."""
    from textual.widgets import ProgressBar

    from dlperf_tui.screens.dialogs import BusyScreen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        busy = BusyScreen("Scanning big.log", measured=True)
        busy.progress(0.4)  # no ProgressBar yet: this used to raise NoMatches in the worker
        await app.push_screen(busy)
        await until_screen(pilot, "BusyScreen")
        await until(pilot, lambda: busy.query_one(ProgressBar).progress == 40.0)
        busy.progress(0.75)
        assert busy.query_one(ProgressBar).progress == 75.0
