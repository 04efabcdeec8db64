"""The walk never runs a command with a value its kind refuses: it shows `<name>`, says
why, and asks for the value again; a value typed in is refused the same way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.tui.driving import shows, until_screen

SIZE = (100, 32)


@pytest.mark.slow
async def test_a_refused_value_from_the_log_is_asked_again_and_never_runs(
    make_app: Callable, tmp_path: Path
) -> None:
    marker = tmp_path / "P"
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.start_walk("mpi-launch-fails")
        await until_screen(pilot, "WalkScreen")
        walk = app.session.walk
        walk.base_params["peer"] = f"gpu02;touch {marker};"  # as if extracted from a log
        walk._state = None
        screen = app.screen
        screen._pinned = "check:ssh-batch-mode"
        screen.refresh_walk(conclude=False)
        await shows(pilot, "$ ssh -o BatchMode=yes -o ConnectTimeout=5 <peer> true")

        await pilot.press("r")
        await until_screen(pilot, "CheckRunScreen")
        await shows(pilot, "Refused value {peer}: 'gpu02;touch")
        field = app.screen.query_one("#param-peer", Input)
        field.value = f"$(touch {marker})"
        await pilot.press("ctrl+r")
        await shows(pilot, "Refused value {peer}: '$(touch")
        assert type(app.screen).__name__ == "CheckRunScreen"  # nothing ran
    assert not marker.exists()
    assert walk.events == []
