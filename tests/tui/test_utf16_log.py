"""A UTF-16 log (PowerShell's `>` writes one, with a BOM) is shown as the text it holds:
the session reads a log file through the diagnosis's own reader, so the log view, the
evidence lines and the runbook's excerpt show what was diagnosed, never mojibake."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import TextArea

from kb.diagnosis.engine import diagnose_paths
from kb.markdown.session_runbook import render
from kb.rules.knowledge import KnowledgeBase
from kb.walk.session import Session
from tests.tui.common import LOG
from tests.tui.driving import shows, until, until_screen

ERROR = "Bootstrap : no socket interface found"


def utf16_copy(tmp_path: Path, gz: bool = False) -> Path:
    data = LOG.read_text(encoding="utf-8").encode("utf-16")  # BOM + native order (LE here)
    assert data[:2] == b"\xff\xfe"
    path = tmp_path / ("rank0.utf16.log.gz" if gz else "rank0.utf16.log")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_the_lines_read_equal_the_utf8_files_lines(
    kb: KnowledgeBase, tmp_path: Path, gz: bool
) -> None:
    path = utf16_copy(tmp_path, gz)
    expected = LOG.read_text(encoding="utf-8").splitlines()
    s = Session(kb)
    s.set_log(str(path), path=path)
    assert s.log_lines() == expected
    assert ERROR in s.lines_at({8})[8]
    first, lines, total = s.window(8, 2)
    assert (first, lines, total) == (6, expected[5:10], len(expected))


def test_the_runbook_excerpt_of_a_utf16_log_is_readable(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = utf16_copy(tmp_path)
    s = Session(kb)
    s.set_log(str(path), path=path)
    s.diagnosis = diagnose_paths(kb, [path])
    assert s.diagnosis.causes  # the UTF-16 log is diagnosed (its evidence is excerpted)
    md = render(s)
    assert ERROR in md
    assert "\x00" not in md and "\ufffd" not in md


@pytest.mark.slow
async def test_the_log_view_of_a_utf16_log_shows_readable_text(
    make_app: Callable, tmp_path: Path
) -> None:
    path = utf16_copy(tmp_path)
    app = make_app(log=path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("l")  # the log, at the first evidence line
        await until_screen(pilot, "LogScreen")
        area = app.screen.query_one(TextArea)
        await until(pilot, lambda: bool(area.selected_text))
        assert area.selected_text == ERROR
        await shows(pilot, "Evidence 1 of 2: line 8 of 65", ERROR)
        shown = area.text.splitlines()
        assert len(shown) > 5 and set(shown) <= set(LOG.read_text(encoding="utf-8").splitlines())
