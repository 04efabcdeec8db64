"""At 80x24 a long check command never pushes the answers or a dialog's buttons off screen.

Found in tmux at 80x24 (issue 14): the real `NCCL_SOCKET_IFNAME` check is a 400-character
awk line; on the walk screen it hid every answer (r/p/s), in the paste dialog it hid the
"Read the output" and "Cancel" buttons, and the hosts panel cut its example at `:222`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from kb.authoring.checked import load_kb
from tests.tui.common import LOG, RULES
from tests.tui.driving import paste, screen_text, shows, until_screen

# the shape of the real rule's command (rules/nccl/nccl-wrong-interface.yaml), one long line
LONG = (
    "ip -o addr show | awk -F': ' -v want=ib9 'BEGIN { neg = sub(/^\\^/, \"\", want); "
    'n = split(want, w, ",") } { name = $2; sub(/@.*/, "", name); up = ($3 ~ /[<,]UP[,>]/) '
    '? "UP" : "DOWN"; hit = 0; for (i = 1; i <= n; i++) { p = w[i]; exact = sub(/^=/, "", p); '
    'if (p != "" && ((exact && name == p) || (!exact && index(name, p) == 1))) hit = 1 } '
    'if (hit != neg) { print "MATCH", name, up; found = 1 } } END { if (!found) print '
    '"NO-MATCH", want }\''
)


@pytest.fixture
def long_command_app(tmp_path: Path) -> Callable[[], object]:
    from dlperf_tui.app import DlperfHelpApp

    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    rule = rules / "nccl" / "nccl-wrong-interface.yaml"
    text = rule.read_text()
    quoted = LONG.replace("'", "''")
    rule.write_text(text.replace("run: ip -o addr show", f"run: '{quoted}'", 1))
    kb = load_kb(rules)
    return lambda: DlperfHelpApp(rules=rules, export_dir=tmp_path, kb=kb)


@pytest.mark.slow
async def test_a_long_command_leaves_the_answers_and_buttons_in_view(long_command_app):
    app = long_command_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), LOG.read_text())
        await until_screen(pilot, "DiagnosisScreen")
        await pilot.press("w")
        await until_screen(pilot, "WalkScreen")
        for _ in range(8):  # the questions first, as in the flow test
            if "NO-MATCH" in screen_text(app) or "$ ip -o addr show" in screen_text(app):
                break
            await pilot.press("s")
            await pilot.pause()
        await shows(pilot, "$ ip -o addr show | awk")
        await shows(
            pilot,
            "r  Run it here, on this machine",
            "p  I ran it myself: paste the output",
            "s  Skip: I can't take this step",
            "^q Quit",
        )
        await pilot.press("p")
        await until_screen(pilot, "CheckRunScreen")
        await shows(
            pilot, "Its output (paste it here):", "Read the output (ctrl+r)", "Cancel (Esc)"
        )
        await pilot.press("escape")
        await until_screen(pilot, "WalkScreen")
        await pilot.press("h")
        await until_screen(pilot, "HostsScreen")
        await shows(pilot, "e.g. gpu[01-04] or root@10.0.0.12:2222")


@pytest.mark.slow
async def test_the_diagnosis_summary_of_a_deep_path_keeps_to_two_lines(
    make_app: Callable, tmp_path: Path
):
    """The title carries the whole path; the summary names the file, so the causes keep
    their rows at 80x24 (a long path made it five lines in tmux)."""
    deep = tmp_path / ("very-long-folder-name-" * 4) / "jobs" / "2026-12-01" / "rank0.log"
    deep.parent.mkdir(parents=True)
    deep.write_text(LOG.read_text())
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        app.diagnose(path=deep)
        await until_screen(pilot, "DiagnosisScreen")
        await shows(pilot, "1 likely cause in rank0.log (65 lines)", "^q Quit")
        summary = app.screen.query_one("#diag-summary")
        assert summary.region.height <= 2, screen_text(app)
        assert "rank0.log" in app.screen.query_one("TitleBar").render().plain  # type: ignore[attr-defined]
