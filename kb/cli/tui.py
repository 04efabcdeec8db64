"""`dlperf-help tui` (and plain `dlperf-help`): open the interactive assistant that the
front end handed to `kb.cli.main.main` (the engine itself never imports it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kb.util.errors import UserError

if TYPE_CHECKING:  # plain `dlperf-help` calls `run` without argparse, for a sooner first frame
    import argparse

HELP = "open the interactive assistant (the default with no command)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", nargs="?", type=Path, help="a log file to diagnose at start")


def run(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError(
            "the interactive assistant needs a terminal; for scripts use "
            "`dlperf-help diagnose LOG` (see dlperf-help --help)"
        )
    open_tui = getattr(args, "open_tui", None)
    if open_tui is None:  # `python -m kb.cli.main`: the engine alone, without a front end
        raise UserError("the interactive assistant is not part of the engine; run `dlperf-help`")
    return int(open_tui(getattr(args, "log", None)))
