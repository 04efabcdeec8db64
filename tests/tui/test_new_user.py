"""A new user's session at 80x24 (issue 14): a way out shown on every screen, a second log
that starts anew, the fix text reachable from the keyboard, footers and titles that fit."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.app import App

from dlperf_tui.screens.base import AppFooter, TitleBar, fit
from tests.tui.common import LOG
from tests.tui.driving import paste, screen_text, shows, until, until_screen

SIZE = (80, 24)
SECOND_LOG = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 3, in <module>\n'
    "    import horovod.torch as hvd\n"
    "ModuleNotFoundError: No module named 'horovod'\n"
)


def footer_line(app: App[object]) -> str:
    return screen_text(app).splitlines()[-1]


def assert_nothing_cut(app: App[object]) -> None:
    """The screen's footer shows each of its keys whole, quit among them, and its title
    line shows the title (or its middle cut out with an ellipsis), never a cut end."""
    width = app.size.width
    footer = app.screen.query_one(AppFooter)
    keys = footer.entries()
    assert keys, "no key in the footer"
    for key in keys:
        assert key.end <= width, f"{key.description!r} cut: {footer_line(app)!r}"
        shown = f" {key.display} {key.description}".rstrip()
        assert footer_line(app)[key.start : key.end].rstrip() == shown, footer_line(app)
    assert "^q Quit" in footer_line(app)
    title = app.screen.query_one(TitleBar)
    shown = screen_text(app).splitlines()[0].strip()
    assert shown == fit(title.full, width).strip(), shown
    assert len(shown) <= width and (shown == title.full or "…" in shown)


@pytest.mark.slow
async def test_q_types_in_the_paste_box_and_ctrl_q_quits_as_the_footer_says(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        assert_nothing_cut(app)
        await pilot.press("q")
        assert app.screen.query_one("#log").text == "q"  # a letter in the box, not quit
        assert app.is_running
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


@pytest.mark.slow
async def test_q_quits_where_no_text_box_has_focus(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await pilot.press("f2")  # the symptom tree has the focus
        await until(pilot, lambda: app.focused is not None and app.focused.id == "symptom-tree")
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running)


@pytest.mark.slow
async def test_help_says_how_to_quit_and_lists_the_keys_the_footer_has_no_room_for(
    make_app: Callable,
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("w")
        await until_screen(pilot, "WalkScreen")
        assert "o Other" not in footer_line(app)  # no room for it at 80 columns ...
        await pilot.press("f1")
        await until_screen(pilot, "HelpScreen")
        help_text = app.screen.query_one("Markdown").source
        assert "`o` Other steps" in help_text  # ... so help lists it
        assert "`h` Hosts" in help_text and "`e` Export runbook" in help_text
        assert "`ctrl+q` quits" in help_text and "q quit" not in help_text
        assert "Up" not in help_text  # a list's own arrows are not the screen's keys


@pytest.mark.slow
async def test_a_paste_after_going_back_starts_a_new_log(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        assert "^l Clear" in footer_line(app)
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("escape")
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), SECOND_LOG)
        await until_screen(pilot, "DiagnosisScreen")
        assert app.session.log_text == SECOND_LOG  # not the first log with this one after it
        assert "(4 lines)" in screen_text(app)
        await pilot.press("escape")
        await until_screen(pilot, "StartScreen")
        await shows(pilot, "5 lines, a new log")
        await pilot.press("ctrl+l")
        assert app.screen.query_one("#log").text == ""


@pytest.mark.slow
async def test_the_fix_text_of_the_diagnosis_is_reached_from_the_keyboard(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        detail = app.screen.query_one("#cause-detail")
        await until(pilot, lambda: detail.max_scroll_y > 0)
        assert "export NCCL_SOCKET_IFNAME" not in screen_text(app)  # below the fold
        await pilot.press("tab")
        assert app.focused is detail
        await pilot.press("end")
        await until(pilot, lambda: detail.scroll_y == detail.max_scroll_y)
        await shows(pilot, "export NCCL_SOCKET_IFNAME")
        await pilot.press("home")
        await until(pilot, lambda: detail.scroll_y == 0)


@pytest.mark.slow
async def test_no_footer_or_title_is_cut_at_80x24_on_any_screen(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await pilot.press("f2")
        assert_nothing_cut(app)
        await pilot.press("f2")
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        assert_nothing_cut(app)
        await pilot.press("l")
        await until_screen(pilot, "LogScreen")
        assert_nothing_cut(app)
        await pilot.press("escape")
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("w")
        await until_screen(pilot, "WalkScreen")
        assert_nothing_cut(app)
        await pilot.press("h")
        await until_screen(pilot, "HostsScreen")
        await shows(pilot, "Trust a node's host key the first time (ssh accept-new)")
        await pilot.press("escape")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("f")  # the fix of the most likely cause, now
        await until_screen(pilot, "ConclusionScreen")
        assert_nothing_cut(app)
        await pilot.press("ctrl+k")
        await until_screen(pilot, "ClusterScreen")
        assert_nothing_cut(app)
        await pilot.press("escape")
        await until_screen(pilot, "ConclusionScreen")
        app.show_card("cause", "nccl-wrong-interface")
        await until_screen(pilot, "CardScreen")
        assert_nothing_cut(app)


@pytest.mark.slow
async def test_a_long_title_keeps_its_ends_and_cuts_its_middle(make_app: Callable, tmp_path):
    log = tmp_path / ("a-very-long-folder-name-" * 4) / "rank0-of-the-job.log"
    log.parent.mkdir()
    log.write_text(SECOND_LOG)
    app = make_app(log=log)
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "DiagnosisScreen")
        assert_nothing_cut(app)
        title = screen_text(app).splitlines()[0]
        assert title.startswith("dlperf-help — diagnosis of") and "…" in title
        assert title.rstrip().endswith("rank0-of-the-job.log")


@pytest.mark.slow
async def test_export_asks_where_with_the_default_shown_and_says_where_it_went(
    make_app: Callable, tmp_path
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("e")
        await until_screen(pilot, "SavePathScreen")
        field = app.screen.query_one("#save-path")
        assert field.value.startswith(str(tmp_path / "dlperf-help-session-"))  # the default
        assert not list(tmp_path.glob("*.md"))  # nothing written before the user says where
        field.value = str(tmp_path / "no-such-folder" / "r.md")
        await pilot.press("enter")
        await shows(pilot, "No such folder:")
        error = str(app.screen.query_one("#save-error").content)
        assert error == f"No such folder: {tmp_path / 'no-such-folder'}"
        assert type(app.screen).__name__ == "SavePathScreen"
        chosen = tmp_path / "incident-42.md"
        field.value = str(chosen)
        await pilot.press("enter")
        await until(pilot, chosen.is_file)
        assert chosen.read_text().startswith("# Troubleshooting runbook")
        said = [n.message for n in app._notifications]  # run_test draws no toasts
        assert f"Runbook written to {chosen}" in said
        assert app.exported == chosen


@pytest.mark.slow
async def test_copy_from_the_diagnosis_asks_for_the_value_the_log_did_not_show(
    make_app: Callable,
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("c")  # the log names no good interface: asked, never `<good_iface>`
        await until_screen(pilot, "ValuesScreen")
        await shows(pilot, "good_iface: the interface (or prefix) the nodes reach each other")
        await pilot.press("enter")  # nothing entered yet
        await shows(pilot, "still needed")
        await pilot.press(*"enp3s0", "enter")
        await until_screen(pilot, "DiagnosisScreen")
        assert app.clipboard == "export NCCL_SOCKET_IFNAME=enp3s0"


@pytest.mark.slow
async def test_skipping_every_step_ends_undecided_not_unknown_to_the_rules(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.start_walk("multi-node-hang")
        await until_screen(pilot, "WalkScreen")
        while type(app.screen).__name__ == "WalkScreen":
            await pilot.press("s")
            await pilot.pause()
        await until_screen(pilot, "ConclusionScreen")
        skipped = len(app.session.walk.events)
        assert skipped > 0 and all(e.kind == "skip" for e in app.session.walk.events)
        shown = await shows(pilot, f"Undecided: {skipped} steps skipped")
        assert "Not in the knowledge base yet" not in shown
        await shows(pilot, "so the cause is undecided")


@pytest.mark.slow
async def test_the_diagnosis_shows_a_causes_confidence_in_one_format(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        share = f"{app.session.diagnosis.causes[0].confidence:.0%}"
        shown = await shows(pilot, f"{share:>4} █", f"Confidence {share} ·")
        assert "Confidence 0." not in shown
