"""Helpers shared by the subcommands: loading the rules, printing JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb.errors import UserError
from kb.knowledge import KnowledgeBase


def load_kb(root: Path | None = None) -> KnowledgeBase:
    """The shipped (or --rules) knowledge base; a broken rule set is a one-line error."""
    from kb import lint, paths

    root = root or paths.rules_dir()
    kb, issues = lint.lint(root)
    errors = [i for i in issues if i.severity == "error"]
    if errors:
        raise UserError(
            f"the rules have {len(errors)} error(s), first: {errors[0]} "
            f"(run: dlperf-help rules lint {root})"
        )
    return kb


def print_json(data: Any) -> None:
    """Indented JSON on stdout, safe for a terminal (`kb.cli.output.print_json`)."""
    from kb.cli import output

    output.print_json(data)
