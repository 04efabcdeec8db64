"""`dlperf-help tui` (and plain `dlperf-help`): open the interactive assistant."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "open the interactive assistant (the default with no command)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", nargs="?", type=Path, help="a log file to open at start")


def run(args: argparse.Namespace) -> int:
    from dlperf_tui.app import run_app

    return run_app(log=getattr(args, "log", None))
