"""`dlperf-help check` (being built: see its issue)."""

from __future__ import annotations

import argparse

HELP = "check (not available yet)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("rest", nargs="*")


def run(args: argparse.Namespace) -> int:
    from kb.errors import UserError

    raise UserError("'check' is not available in this build yet")
