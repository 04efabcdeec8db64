"""The entry point: the engine's walk and session stay free of Textual; no terminal, no TUI."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.tui.common import RULES


@pytest.mark.slow
def test_the_walk_session_and_runbook_modules_never_import_textual():
    code = (
        "import sys, kb.walk.engine, kb.walk.session, kb.markdown.session_runbook, kb.util.secrets, dlperf_tui.jobs, "
        "dlperf_tui.hosts, kb.markdown.blocks; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_a_terminal_the_assistant_says_so_in_one_line():
    out = subprocess.run(
        [sys.executable, "-m", "dlperf_tui.cli", "--rules", str(RULES)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith("dlperf-help: the interactive assistant needs a terminal")


def test_the_engine_alone_has_no_assistant_to_open(monkeypatch, capsys):
    from kb.cli import main as cli

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli.main(["--rules", str(RULES)]) == 2
    assert capsys.readouterr().err == (
        "dlperf-help: the interactive assistant is not part of the engine; run `dlperf-help`\n"
    )


def test_the_front_end_hands_the_assistant_to_the_engine(monkeypatch, tmp_path):
    from dlperf_tui import cli

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    opened = []

    def open_assistant(log):
        opened.append(log)
        return 0

    monkeypatch.setattr(cli, "open_assistant", open_assistant)
    log = tmp_path / "job.log"
    assert cli.main(["--rules", str(RULES), "tui", str(log)]) == 0
    assert opened == [log]


def test_a_missing_log_is_a_one_line_error_before_the_screen_opens(tmp_path):
    import pytest

    from dlperf_tui.app import run_app
    from kb.util.errors import UserError

    with pytest.raises(UserError, match="no such file"):
        run_app(log=tmp_path / "missing.log")
