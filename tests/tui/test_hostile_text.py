"""Hostile text in the assistant (issue 11): markup and terminal controls in a log, a log's
path, a node's answer or what the user types are shown literally: never parsed (a `[/b]` no
longer kills the assistant with MarkupError, `[@click=app.quit]` is no live action), never
passed to the terminal (no ESC, C1 or bidi control reaches the screen)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from kb.authoring import lint
from kb.rules.knowledge import KnowledgeBase
from tests.tui.common import RULES
from tests.tui.driving import paste, screen_text, shows, until, until_screen

SIZE = (160, 50)
# a rule whose extractor takes the rest of the line: what a log says becomes a value
RUN_DIR_RULE = """\
id: run-dir-unwritable
title: The job cannot write its run directory
description: The job could not write `{where}`; check the directory exists and is writable.
symptoms: [library-load-fails]
prior: 0.4
signatures:
  - id: cannot-write
    weight: 0.9
    matchers:
      - type: regex
        pattern: 'cannot write run directory: (?P<where>.+)'
fixes: [make-run-dir-writable]
examples:
  match:
    - 'cannot write run directory: /scratch/runs/7'
"""
RUN_DIR_FIX = """\
id: make-run-dir-writable
title: Make the run directory writable
steps: Create `{where}` on every node, writable by the job's user; see [the guide](https://example.org/guide).
commands:
  - run: ls -ld -- {where}
    where: every node
    changes_machine: false
"""
MARKUP = "runs[/b]/x [link=https://evil.example]y[/link] [@click=app.quit]q[/click] [b]bold"
ESC = "\x1b"
CONTROLS = (
    f"{ESC}]52;c;ZWNobyBwd25lZA=={ESC}\\ {ESC}]8;;https://evil.example/{ESC}\\link{ESC}]8;;"
    f"{ESC}\\ {ESC}P+q544e{ESC}\\ {ESC}c \x9b2J \x85 \u202eevil\u202c back\x08\x08 cr\rX"
)
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def hostile_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    rules = tmp_path_factory.mktemp("rules") / "rules"
    shutil.copytree(RULES, rules)
    (rules / "misc").mkdir()
    (rules / "misc" / "run-dir-unwritable.yaml").write_text(RUN_DIR_RULE)
    (rules / "fixes" / "make-run-dir-writable.yaml").write_text(RUN_DIR_FIX)
    kb, issues = lint.lint(rules)  # (the shared rule set's own lint is other tests' concern)
    assert not [i for i in issues if "run-dir" in str(i) and i.severity == "error"]
    return kb


@pytest.fixture
def make_hostile_app(hostile_kb: KnowledgeBase, tmp_path: Path) -> Callable[..., object]:
    from dlperf_tui.app import DlperfHelpApp

    def make(**kwargs: object) -> DlperfHelpApp:
        return DlperfHelpApp(rules=RULES, export_dir=tmp_path, kb=hostile_kb, **kwargs)  # type: ignore[arg-type]

    return make


def _nothing_raw(app: object) -> None:
    shown = screen_text(app)  # type: ignore[arg-type]
    assert ESC not in shown
    found = FORBIDDEN.search(shown)
    assert found is None, f"raw {found.group()!r} on screen:\n{shown}"


@pytest.mark.slow
async def test_markup_in_a_pasted_log_is_shown_literally_and_kills_nothing(
    make_hostile_app: Callable,
) -> None:
    app = make_hostile_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        log = f"step 1\ncannot write run directory: {MARKUP}\n"
        await paste(pilot, app.screen.query_one("#log"), log)
        await until_screen(pilot, "DiagnosisScreen", timeout=60)
        await shows(pilot, "The job cannot write", "where = runs[/b]/x [link=https://evil")
        values = app.screen.query_one("#values")
        content = values.render()
        assert MARKUP in content.plain
        assert not content.spans  # no style, no link, no action: plain text
        # the cause and fix text quote the value as text: the only link is the rule's own
        from kb.markdown.blocks import cause_block

        md = cause_block(app.kb, "run-dir-unwritable", app.session.diagnosis.causes[0].params)
        hrefs = [
            t.attrs.get("href")
            for block in MarkdownIt("gfm-like").parse(md)
            for t in block.children or []
            if t.type == "link_open"
        ]
        assert hrefs == ["https://example.org/guide"], hrefs
        assert "evil.example]y" in screen_text(app)
        # clicking where "[@click=app.quit]" shows does nothing: the app keeps running
        row, col = _find(screen_text(app), "[@click=app.quit]q", on="values found")
        await pilot.click(offset=(col + 18, row))
        await pilot.pause()
        assert app.is_running and type(app.screen).__name__ == "DiagnosisScreen"
        await pilot.press("l")  # the log view shows the line literally too
        await until_screen(pilot, "LogScreen", timeout=60)
        await shows(pilot, MARKUP)


def _find(screen: str, text: str, on: str) -> tuple[int, int]:
    for row, line in enumerate(screen.splitlines()):
        if text in line and on in line:
            return row, line.index(text)
    raise AssertionError(f"{text!r} not on screen:\n{screen}")


@pytest.mark.slow
async def test_a_log_path_holding_markup_opens(make_hostile_app: Callable, tmp_path: Path) -> None:
    folder = tmp_path / "runs[/b]"  # the folders `runs[` and `b]`
    folder.mkdir(parents=True)
    log = folder / "rank0.log"
    log.write_text("cannot write run directory: /scratch/[i]7\n")
    app = make_hostile_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), str(log))
        await until_screen(pilot, "DiagnosisScreen", timeout=60)
        await shows(pilot, "runs[/b]/rank0.log", "where = /scratch/[i]7")
        await pilot.press("escape")
        await until_screen(pilot, "StartScreen")
        await shows(pilot, "opened", "runs[/b]/rank0.log")
        await pilot.press("ctrl+o")  # a path that does not exist, with markup in it
        await until_screen(pilot, "OpenFileScreen")
        app.screen.query_one("#open-path").value = str(folder / "[/i]missing.log")
        await pilot.press("enter")
        error = app.screen.query_one("#open-error")
        await until(pilot, lambda: "[/i]missing.log: no such file" in error.render().plain)
        assert app.is_running


@pytest.mark.slow
async def test_terminal_controls_in_a_log_never_reach_the_screen(
    make_hostile_app: Callable, tmp_path: Path
) -> None:
    log = tmp_path / "controls.log"
    log.write_text(
        f"{CONTROLS}\ncannot write run directory: /tmp/{CONTROLS}\nafter {CONTROLS}\n",
        encoding="utf-8",
    )
    app = make_hostile_app(log=log)
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "DiagnosisScreen", timeout=60)
        await shows(pilot, "The job cannot write", "<U+202E>evil<U+202C> back␈␈", timeout=30)
        _nothing_raw(app)
        await pilot.press("l")
        await until_screen(pilot, "LogScreen", timeout=60)
        await shows(pilot, "<U+202E>evil", "cr␍X")
        _nothing_raw(app)


@pytest.mark.slow
async def test_a_pasted_log_with_controls_shows_them_in_the_box(make_hostile_app: Callable):
    app = make_hostile_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        area = app.screen.query_one("#log")
        area.focus()
        await paste(pilot, area, f"just a line {CONTROLS}")
        await until_screen(pilot, "DiagnosisScreen", timeout=60)
        await pilot.press("escape")
        await until_screen(pilot, "StartScreen")
        assert ESC not in area.text and not FORBIDDEN.search(area.text)
        assert "<U+202E>evil" in area.text
        _nothing_raw(app)


@pytest.mark.slow
async def test_notifications_and_host_errors_are_plain(make_hostile_app: Callable) -> None:
    app = make_hostile_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until_screen(pilot, "StartScreen")
        app.notify(f"node said: [/b] [@click=app.quit]q[/click] {ESC}]0;t{ESC}\\\u202e")
        await shows(pilot, "node said: [/b] [@click=app.quit]q[/click] <U+202E>", timeout=30)
        _nothing_raw(app)
        from dlperf_tui.screens.hosts import HostsScreen

        await app.push_screen(HostsScreen(app.runners))
        await until(pilot, lambda: type(app.screen).__name__ == "HostsScreen")
        app.screen.query_one("#host-add").value = "[/b]bad host[@click=app.quit]"
        await pilot.press("enter")
        await shows(pilot, "[/b]bad")
        assert app.is_running
