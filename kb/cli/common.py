"""Helpers shared by the subcommands: loading the rules, printing JSON."""

from __future__ import annotations

from typing import Any


def print_json(data: Any) -> None:
    """Indented JSON on stdout, safe for a terminal (`kb.cli.output.print_json`)."""
    from kb.cli import output

    output.print_json(data)
