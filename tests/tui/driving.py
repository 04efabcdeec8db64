"""Helpers to drive the app in Pilot tests and read what the screen shows."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.app import App
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input


def screen_text(app: App[object]) -> str:
    """The characters on the active screen, as a terminal would show them."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def until(pilot: Pilot[Any], ready: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app (and its worker threads) run until `ready()` holds."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; the screen shows:\n{screen_text(pilot.app)}")
        await pilot.pause(0.05)


def _packed(text: str) -> str:
    return "".join(text.split())


def on_screen(screen: str, text: str) -> bool:
    """Whether `screen` shows `text`, as is or folded over lines (a long path folds
    wherever the checkout's own path length puts it, even inside a word)."""
    return text in screen or _packed(text) in _packed(screen)


async def shows(pilot: Pilot[Any], *texts: str, timeout: float = 10.0) -> str:
    """Wait until the screen shows every one of `texts` (widgets draw asynchronously)."""
    await until(pilot, lambda: all(on_screen(screen_text(pilot.app), t) for t in texts), timeout)
    return screen_text(pilot.app)


async def until_screen(pilot: Pilot[Any], name: str, timeout: float = 10.0) -> None:
    """Wait until the screen called `name` is on top and has drawn itself."""
    await until(pilot, lambda: type(pilot.app.screen).__name__ == name, timeout)
    await until(pilot, lambda: bool(screen_text(pilot.app).strip()), timeout)
    await pilot.pause()


async def paste(pilot: Pilot[Any], widget: Widget, text: str) -> None:
    """A bracketed paste as a terminal sends it (line ends as CR) into `widget`."""
    widget.post_message(events.Paste(text.replace("\n", "\r")))
    await pilot.pause()


async def export(pilot: Pilot[Any]) -> str:
    """`e`, then Enter in the dialog that asks where (the default path filled in): the
    runbook's path, as the dialog showed it before writing."""
    await pilot.press("e")
    await until_screen(pilot, "SavePathScreen")
    where = pilot.app.screen.query_one("#save-path", Input).value
    await pilot.press("enter")
    await until(pilot, lambda: Path(where).is_file())
    return where
