"""The entry point: the engine's walk and session stay free of Textual; no terminal, no TUI."""

from __future__ import annotations

import subprocess
import sys

from tests.tui.common import RULES


def test_the_walk_session_and_runbook_modules_never_import_textual():
    code = (
        "import sys, kb.walk, kb.session, kb.session_runbook, kb.secrets, dlperf_tui.jobs, "
        "dlperf_tui.hosts, dlperf_tui.markdown; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_a_terminal_the_assistant_says_so_in_one_line():
    out = subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "--rules", str(RULES)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith("dlperf-help: the interactive assistant needs a terminal")


def test_a_missing_log_is_a_one_line_error_before_the_screen_opens(tmp_path):
    import pytest

    from dlperf_tui.app import run_app
    from kb.errors import UserError

    with pytest.raises(UserError, match="no such file"):
        run_app(log=tmp_path / "missing.log")
