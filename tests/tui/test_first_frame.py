"""The first frame comes first (issue 13): nothing of the engine is imported before it,
plain `dlperf-help` never builds the engine's parser, and the light widgets that draw the
first screen (the tabs, the footer) act as Textual's own did: click, keys, hover."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

from dlperf_tui.screens.base import AppFooter
from dlperf_tui.screens.tabstrip import TabStrip
from tests.tui.common import RULES
from tests.tui.driving import screen_text, until, until_screen

# the knowledge base's pieces and the libraries only they need
ENGINE = (
    "kb.rules",
    "kb.diagnosis",
    "kb.authoring",
    "kb.walk.session",
    "kb.cli.main",
    "pydantic",
    "yaml",
    "rapidfuzz",
    "networkx",
    "paramiko",
    "argparse",
)

FIRST_FRAME = f"""
import asyncio, pathlib, sys
from dlperf_tui.app import DlperfHelpApp

def probe(self):  # the first frame is drawn (App.on_ready): what is imported by now?
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in {{"pydantic", "yaml",
        "rapidfuzz", "networkx", "paramiko", "argparse"}} or m.startswith({ENGINE[:5]!r}))
    print("LOADED", loaded, "SCREEN", type(self.screen).__name__)
    self.exit()

DlperfHelpApp.on_ready = probe

async def main():
    async with DlperfHelpApp(rules=pathlib.Path({str(RULES)!r})).run_test() as pilot:
        await pilot.pause(5)

asyncio.run(main())
"""


def test_nothing_of_the_engine_is_imported_before_the_first_frame():
    out = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME], capture_output=True, text=True, check=True
    )
    assert "LOADED [] SCREEN StartScreen" in out.stdout, out.stdout + out.stderr


def test_plain_dlperf_help_opens_the_assistant_without_the_engines_parser():
    code = (
        "import sys; from dlperf_tui.cli import main; rc = main([]); "
        "print(rc, sorted(m for m in ('kb.cli.main', 'argparse') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert out.stdout.strip() == "2 []"  # no terminal: the one-line refusal, no parser built
    assert out.stderr == (
        "dlperf-help: the interactive assistant needs a terminal; for scripts use "
        "`dlperf-help diagnose LOG` (see dlperf-help --help)\n"
    )


@pytest.mark.slow
async def test_the_tabs_switch_by_click_and_by_left_and_right(make_app: Callable):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        strip = app.screen.query_one(TabStrip)
        await pilot.click(TabStrip, offset=(16, 0))  # on "Pick a symptom"
        await until(pilot, lambda: app.screen.query_one("#symptom-tab").display)
        assert strip.active == "symptom-tab" and not app.screen.query_one("#paste-tab").display
        tree = app.screen.query_one("#symptom-tree")
        await until(pilot, lambda: tree.region.height > 0)  # the tree is drawn
        assert app.focused is strip  # a click on the tabs focuses them, as Textual's do
        await pilot.press("left")
        await until(pilot, lambda: app.screen.query_one("#paste-tab").display)
        assert strip.active == "paste-tab"
        await pilot.click(TabStrip, offset=(5, 1))  # the bar under "Paste a log": stays
        assert strip.active == "paste-tab"


@pytest.mark.slow
async def test_a_click_on_a_footer_key_presses_it(make_app: Callable):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        await pilot.press("a", "b")
        assert app.screen.query_one("#log").text == "ab"
        footer = app.screen.query_one(AppFooter)
        clear = next(e for e in footer.entries() if e.description == "Clear")
        assert screen_text(app).splitlines()[-1][clear.start : clear.end] == " ^l Clear "
        await pilot.click(AppFooter, offset=(clear.start + 1, 0))
        await until(pilot, lambda: app.screen.query_one("#log").text == "")
        help_key = next(e for e in footer.entries() if e.description == "Help")
        await pilot.hover(AppFooter, offset=(help_key.start + 1, 0))
        assert footer.hovered == footer.entries().index(help_key)
        await pilot.click(AppFooter, offset=(help_key.start + 1, 0))
        await until_screen(pilot, "HelpScreen")
