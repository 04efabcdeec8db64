"""What the main screens look like, at 80x24 and wider, in dark and light themes.

Pictures of the fixed rule set in tests/tui/rules (not the shipped rules, which change
often). A change on purpose: `pytest tests/tui/test_snapshots.py --snapshot-update`, then
look at the new pictures (tests/tui/__snapshots__/) before committing them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from dlperf_tui.app import DlperfHelpApp
from tests.tui.common import IP_ADDR_PHYSICAL_ONLY
from tests.tui.driving import paste, until, until_screen


def _assistant(pilot: Pilot[Any]) -> DlperfHelpApp:
    assert isinstance(pilot.app, DlperfHelpApp)
    return pilot.app


@pytest.mark.slow
def test_the_start_screen_at_80x24(make_app: Callable, snap_compare: Callable):
    assert snap_compare(make_app(), terminal_size=(80, 24))


@pytest.mark.slow
def test_the_symptom_tree_at_80x24(make_app: Callable, snap_compare: Callable):
    assert snap_compare(make_app(), press=["f2", "down", "down"], terminal_size=(80, 24))


@pytest.mark.slow
def test_the_symptom_tree_side_by_side_at_120x30(make_app: Callable, snap_compare: Callable):
    assert snap_compare(make_app(), press=["f2"], terminal_size=(120, 30))


@pytest.mark.slow
def test_a_walk_after_a_check_ruled_a_cause_out_at_80x24(
    make_app: Callable, snap_compare: Callable
):
    async def walk(pilot: Pilot) -> None:
        _assistant(pilot).start_walk("multi-node-hang")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("p")
        await until_screen(pilot, "CheckRunScreen")
        await paste(pilot, pilot.app.screen.query_one("#output"), IP_ADDR_PHYSICAL_ONLY)
        await pilot.click("#go")
        await until_screen(pilot, "WalkScreen")
        pilot.app.clear_notifications()  # a toast's lifetime would make the picture flaky
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=walk)


@pytest.mark.slow
def test_a_walk_side_by_side_in_the_light_theme_at_140x36(
    make_app: Callable, snap_compare: Callable
):
    async def walk(pilot: Pilot) -> None:
        pilot.app.theme = "textual-light"
        _assistant(pilot).start_walk("multi-node-hang")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("s")

    assert snap_compare(make_app(), terminal_size=(140, 36), run_before=walk)


@pytest.mark.slow
def test_the_fix_with_its_commands_at_80x24(make_app: Callable, snap_compare: Callable):
    async def fix(pilot: Pilot) -> None:
        _assistant(pilot).start_walk("mpi-launch-fails")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("2")
        await until_screen(pilot, "ConclusionScreen")
        await until(
            pilot, lambda: pilot.app.screen.query_one("#commands", OptionList).option_count > 0
        )

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=fix)
