"""`dlperf-help diagnose` (being built: see its issue)."""

from __future__ import annotations

import argparse

HELP = "diagnose (not available yet)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("rest", nargs="*")


def run(args: argparse.Namespace) -> int:
    from kb.errors import UserError

    raise UserError("'diagnose' is not available in this build yet")
