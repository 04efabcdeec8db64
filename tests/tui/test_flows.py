"""Each flow of the assistant, driven by keys and paste events as a user would."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import TextArea

from tests.tui.common import IP_ADDR_PHYSICAL_ONLY, IP_ADDR_WITH_DOCKER, LOG
from tests.tui.driving import export, paste, screen_text, shows, until, until_screen

SIZE = (80, 24)


@pytest.mark.slow
async def test_paste_a_log_see_the_cause_walk_to_the_fix_and_export(
    make_app: Callable, tmp_path: Path
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        await shows(
            pilot,
            "1 likely cause in pasted log (65 lines)",
            "96% █████████",
            "Confidence 96%",
            "NCCL uses a virtual or unreachable network",
            "8▶ [2026-11-29 19:54:45] vm:851:851 [0] bootstrap.cc:114 NCCL WARN",
        )

        await pilot.press("w")
        await until_screen(pilot, "WalkScreen")
        # the same cause, the same words and format as on the diagnosis screen
        await shows(pilot, "the log shows it (confidence 96%)", "likelihood now")
        # the questions first: listing NICs cannot tell the ib9 variant the log shows
        for _ in range(8):
            if "$ ip -o addr show" in screen_text(app):
                break
            await pilot.press("s")
            await pilot.pause()
        await shows(pilot, "List the network interfaces and their addresses", "$ ip -o addr show")

        await pilot.press("p")  # I ran it myself: paste the output
        await until_screen(pilot, "CheckRunScreen")
        await paste(pilot, app.screen.query_one("#output"), IP_ADDR_WITH_DOCKER)
        await pilot.click("#go")
        await until_screen(pilot, "ConclusionScreen")
        await shows(
            pilot,
            "Found it: NCCL uses a virtual or unreachable network interface",
            "export NCCL_SOCKET_IFNAME=enp3s0",
        )  # the value the check found

        await export(pilot)
        runbook = next(tmp_path.glob("dlperf-help-session-*.md")).read_text()
        assert runbook.startswith("# Troubleshooting runbook: NCCL uses a virtual")
        assert "8> [2026-11-29 19:54:45]" in runbook
        assert (
            ". **Check:** List the network interfaces and their addresses" in runbook
        )  # after the skipped questions
        assert "3: docker0    inet 172.17.0.1/16" in runbook
        assert "```bash\nexport NCCL_SOCKET_IFNAME=enp3s0\n```" in runbook


@pytest.mark.slow
async def test_from_a_symptom_without_a_log_checks_update_the_ranking_visibly(
    make_app: Callable, tmp_path: Path
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await pilot.press("f2")  # the symptom tree, its first symptom highlighted
        tree = app.screen.query_one("#symptom-tree")
        await until(pilot, lambda: tree.cursor_node is not None)
        while tree.cursor_node.data != "multi-node-hang":
            await pilot.press("down")
        await pilot.press("enter")
        await until_screen(pilot, "WalkScreen")
        await shows(pilot, "walk: A multi-node job hangs or never connects")

        await pilot.press("p")
        await until_screen(pilot, "CheckRunScreen")
        await paste(pilot, app.screen.query_one("#output"), IP_ADDR_PHYSICAL_ONLY)
        await pilot.click("#go")
        await until_screen(pilot, "WalkScreen")
        await shows(
            pilot,
            "✘",
            "ruled out because the check “List the network",
            "Path start: multi-node-hang › check list-interfaces → pass",
            "List the RDMA devices",
        )  # the next best step

        await pilot.press("p")
        await until_screen(pilot, "CheckRunScreen")
        await paste(pilot, app.screen.query_one("#output"), "0 HCAs found")
        await pilot.click("#go")
        await until_screen(pilot, "ConclusionScreen")
        await shows(
            pilot,
            "Found it: InfiniBand is not usable, NCCL falls back to sockets",
            "apt-get install -y rdma-core ibverbs-providers",
        )

        await pilot.press("u")  # back one step: the ib check is undone
        await until_screen(pilot, "WalkScreen")
        assert len(app.session.walk.path) == 1
        await shows(pilot, "List the RDMA devices")

        await export(pilot)
        runbook = next(tmp_path.glob("dlperf-help-session-*.md")).read_text()
        assert "## Log" not in runbook and "## Symptom" in runbook
        assert "ruled out because the check “List the network interfaces" in runbook


@pytest.mark.slow
async def test_a_question_answered_with_a_number_key_can_end_at_not_in_the_kb(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.start_walk("mpi-launch-fails")
        await until_screen(pilot, "WalkScreen")
        await shows(pilot, "From the first node, does `ssh <other node> true` return")
        await pilot.press("1")  # yes, it returns at once
        await until_screen(pilot, "ConclusionScreen")
        await shows(
            pilot,
            "Not in the knowledge base yet",
            "Passwordless SSH between the nodes is not set up",
        )


@pytest.mark.slow
async def test_running_a_read_only_check_here_records_host_and_output(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.start_walk("multi-node-hang")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("r")  # list-interfaces is read-only: it runs without asking
        await until(pilot, lambda: bool(app.session.walk.path))
        event = app.session.walk.path[0]
        assert event.record is not None and event.record.host == "local"
        assert event.record.command == "ip -o addr show"
        assert event.record.status in ("pass", "fail", "unavailable")
        await shows(pilot, "check list-interfaces →")


@pytest.mark.slow
async def test_the_evidence_opens_in_the_whole_log_with_its_span_selected(make_app: Callable):
    app = make_app(log=LOG)
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "DiagnosisScreen")
        # Tab: the detail pane (it scrolls to the fixes), Tab again: its evidence list
        await pilot.press("tab", "tab", "down", "enter")  # the second evidence line
        await until_screen(pilot, "LogScreen")
        area = app.screen.query_one(TextArea)
        await until(pilot, lambda: bool(area.selected_text))
        assert area.selected_text == "Bootstrap : no socket interface found"
        await shows(pilot, "Evidence 2 of 2: line 23 of 65")
        await pilot.press("n")
        await shows(pilot, "Evidence 1 of 2: line 8")
        assert area.selected_text == "Bootstrap : no socket interface found"
        await pilot.press("escape")
        await until_screen(pilot, "DiagnosisScreen")


@pytest.mark.slow
async def test_a_fix_is_copied_with_its_values_asked_and_shown_for_terminals_without_a_clipboard(
    make_app: Callable,
):
    app = make_app()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.start_walk("mpi-launch-fails")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("2")  # it asks for a password: passwordless SSH is missing
        await until_screen(pilot, "ConclusionScreen")
        await pilot.press("c")  # `<peer>` pasted would be a shell syntax error: it is asked for
        await until_screen(pilot, "ValuesScreen")
        await shows(pilot, "Copying needs peer", "peer: another node of the job")
        await pilot.press(*"$(reboot)", "enter")  # refused by its kind: the dialog stays
        await shows(pilot, "{peer}: '$(reboot)'")
        assert app.clipboard == "" and type(app.screen).__name__ == "ValuesScreen"
        app.screen.query_one("#value-peer").value = "gpu02"
        await pilot.press("enter")
        await until_screen(pilot, "ConclusionScreen")
        assert app.clipboard == "ssh-copy-id gpu02"
        await shows(pilot, "Copied (OSC 52). No clipboard in this terminal?", "ssh-copy-id gpu02")


@pytest.mark.slow
async def test_q_asks_before_quitting_a_walk_in_progress(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.start_walk("multi-node-hang")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("s")  # one step taken: the walk is in progress
        await pilot.press("q")
        await until_screen(pilot, "ConfirmScreen")
        await shows(pilot, "Quit now? Your walk is in progress.")
        await pilot.press("escape")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("q")
        await until_screen(pilot, "ConfirmScreen")
        await pilot.click("#choice-quit")
        await until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0


@pytest.mark.slow
async def test_q_quits_at_once_without_a_walk(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await pilot.press("f2", "q")
        await until(pilot, lambda: app.return_code is not None)


@pytest.mark.slow
async def test_help_lists_the_keys_of_the_screen_it_was_opened_from(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.start_walk("multi-node-hang")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("question_mark")
        await until_screen(pilot, "HelpScreen")
        await shows(pilot, "Help: Walk", "Undo", "Skip")
        await pilot.press("escape")
        await until_screen(pilot, "WalkScreen")


@pytest.mark.slow
async def test_the_command_palette_finds_a_cause_by_its_error_line(make_app: Callable):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await until_screen(pilot, "StartScreen")
        await pilot.press("ctrl+p")
        await until_screen(pilot, "CommandPalette")
        await pilot.press(*"no socket interface")
        await shows(pilot, "Error: [2026-11-29 19:54:45]")
        await pilot.press("enter")
        await until_screen(pilot, "CardScreen")
        await shows(pilot, "NCCL uses a virtual or unreachable network interface")
        await pilot.press("f")  # take its fix now
        await until_screen(pilot, "ConclusionScreen")
        await shows(pilot, "Your choice: NCCL uses a virtual")


@pytest.mark.slow
async def test_a_pasted_path_opens_that_file(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), str(LOG))
        await until_screen(pilot, "DiagnosisScreen")
        assert app.session.log_path == LOG
        await shows(pilot, f"1 likely cause in {LOG.name} (65 lines)")  # the title has the path


@pytest.mark.slow
async def test_a_log_with_no_known_problem_says_so_and_points_to_the_symptoms(make_app: Callable):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), "epoch 1 loss 0.5\nepoch 2 loss 0.4\n")
        await until_screen(pilot, "DiagnosisScreen")
        shown = await shows(
            pilot,
            "No known problem found in pasted log (2 lines)",
            "Esc: back, pick a symptom",
            "nothing worth noting",
        )
        assert "Walk to the fix" not in shown and "Evidence" not in shown
        await pilot.press("w")  # nothing to walk from: the key does nothing
        await pilot.press("escape", "f2")
        await until_screen(pilot, "StartScreen")
        await shows(pilot, "A multi-node job hangs or never connects")
