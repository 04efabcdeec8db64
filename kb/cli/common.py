"""Helpers shared by the subcommands: loading the rules, printing JSON."""

from __future__ import annotations

from typing import Any


def print_json(data: Any, command: str | None = None) -> None:
    """Indented JSON on stdout, safe for a terminal (`kb.cli.output.print_json`), carrying
    `"schema": "dlperf-help/<command>/1"` when `command` is given."""
    from kb.cli import output

    output.print_json(output.stamped(command, data) if command else data)
