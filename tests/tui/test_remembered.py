"""Nodes and log files are remembered between runs and offered again (issue 14).

Two runs of the real app share one XDG_DATA_HOME (the conftest gives each test its own):
what the first added and opened, the second offers; a pasted log is never remembered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from tests.tui.common import LOG
from tests.tui.driving import paste, screen_text, shows, until, until_screen

NODE = "127.0.0.1:1"  # refused at once: the panel's test of it ends quickly


def state_doc(data_home: Path) -> dict:
    return json.loads((data_home / "dlperf-help" / "state.json").read_text())


@pytest.mark.slow
async def test_nodes_and_logs_of_one_run_are_offered_in_the_next(
    make_app: Callable, own_data_home: Path
):
    first = make_app()
    async with first.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        assert "reopens the last log" not in screen_text(first)  # a first run offers nothing
        await paste(pilot, first.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        assert not (own_data_home / "dlperf-help" / "state.json").exists()  # a paste: nothing
        await pilot.press("escape")
        await until_screen(pilot, "StartScreen")
        first.diagnose(path=LOG)
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("w")  # walk from the log, as a user would
        await until_screen(pilot, "WalkScreen")
        await pilot.press("h")
        await until_screen(pilot, "HostsScreen")
        await pilot.press(*NODE, "enter")
        await shows(pilot, NODE)
        await until(pilot, lambda: "connecting" not in screen_text(first), timeout=30)

    doc = state_doc(own_data_home)
    assert doc["nodes"] == [NODE]
    assert doc["logs"] == [str(LOG.absolute())]
    raw = (own_data_home / "dlperf-help" / "state.json").read_text()
    assert "NCCL WARN" not in raw and "bootstrap" not in raw  # never the log's text

    second = make_app()
    async with second.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        await shows(pilot, "ctrl+o reopens the last log: /")
        await pilot.press("ctrl+o")
        await until_screen(pilot, "OpenFileScreen")
        assert second.screen.query_one("#open-path", Input).value == str(LOG.absolute())
        await pilot.press("enter")  # the last log, opened again with one key
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("w")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("h")
        await until_screen(pilot, "HostsScreen")
        await shows(pilot, f"{NODE}   remembered, not tried yet")
        listing = second.screen.query_one("#host-list", OptionList)
        listing.focus()
        while listing.highlighted_option is None or listing.highlighted_option.id != NODE:
            await pilot.press("down")
        await pilot.press("delete")  # removed: not offered again
        await until(pilot, lambda: NODE not in screen_text(second))
    assert state_doc(own_data_home)["nodes"] == []


@pytest.mark.slow
async def test_a_corrupt_state_file_is_one_line_and_a_fresh_start(
    make_app: Callable, own_data_home: Path
):
    f = own_data_home / "dlperf-help" / "state.json"
    f.parent.mkdir(parents=True)
    f.write_bytes(b'{"schema": "dlperf-help/state/1", "nodes": [\xff')
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until_screen(pilot, "StartScreen")
        await shows(pilot, "not JSON", "starting fresh")
        assert "reopens the last log" not in screen_text(app)
        app.diagnose(path=LOG)  # the next change writes a good file over it
        await until_screen(pilot, "DiagnosisScreen")
    assert state_doc(own_data_home)["logs"] == [str(LOG.absolute())]
