"""`dlperf-help tui` (and plain `dlperf-help`): open the interactive assistant."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kb.errors import UserError

HELP = "open the interactive assistant (the default with no command)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", nargs="?", type=Path, help="a log file to diagnose at start")


def run(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError(
            "the interactive assistant needs a terminal; for scripts use "
            "`dlperf-help diagnose LOG` (see dlperf-help --help)"
        )
    from dlperf_tui.app import run_app

    return run_app(log=getattr(args, "log", None))
