"""The `dlperf-help` argparse parser: built only when a command line needs it.

A plain `diagnose` command line (`kb.cli.quickargs`) never does: importing argparse
(with gettext and locale) and building a parser was a tenth of a small log's run.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any

from kb import __version__


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, sized as argparse sizes it (`shutil.get_terminal_size`)
    without importing shutil (and bz2, lzma, fnmatch with it): argparse builds one for
    every argument added, so even `diagnose` on a small log paid for them."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _columns() -> int:
    """`shutil.get_terminal_size().columns`: `$COLUMNS`, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80
    return size.columns or 80


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit status 2)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)  # subcommands' parsers too
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        from kb.util.textsafe import safe_line

        sys.stderr.write(f"{self.prog}: error: {safe_line(message)} (see {self.prog} --help)\n")
        raise SystemExit(2)


def build_parser(commands: list[str]) -> argparse.ArgumentParser:
    """The parser of these subcommands (`kb.cli.main.build_parser`: all of them, or the
    one given, whose module alone is then imported: `dlperf-help diagnose --help` must not
    pay for the other eight)."""
    parser = OneLineParser(
        prog="dlperf-help",
        description="Troubleshoot distributed deep-learning jobs: diagnose logs, walk the "
        "decision tree, verify on your nodes over SSH, export runbooks. "
        "With no command, opens the interactive assistant.",
    )
    parser.add_argument("--version", action="version", version=f"dlperf-help {__version__}")
    parser.add_argument(
        "--rules", metavar="DIR", help="use the rules in DIR instead of the shipped ones"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in commands:
        module = importlib.import_module(f"kb.cli.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.add_argument(  # also after the command; SUPPRESS keeps the one given before it
            "--rules", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS
        )
        p.set_defaults(_module=module)
    return parser
