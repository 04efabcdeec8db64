"""The `dlperf-help` command: argument parsing, dispatch, and the one-line-error policy.

Subcommands live in their own modules (`kb.cli.<name>`) exposing `HELP`,
`add_arguments(parser)` and `run(args) -> int`; their heavy imports happen inside
`run`, so parsing stays fast. The interactive assistant is handed in by its front end
(`dlperf_tui.cli`, the installed `dlperf-help`) as `open_tui`: the engine never imports it.
Exit status: 0 nothing wrong, 1 a problem found, 2 the job could not be done.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kb import __version__
from kb.util.errors import UserError

SUBCOMMANDS = [
    "diagnose",
    "walk",
    "check",
    "survey",
    "report",
    "speedup",
    "runbook",
    "rules",
    "tui",
]


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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `command`, only that subcommand's (its module alone is
    imported: `dlperf-help diagnose` must not pay for the other eight)."""
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
    for name in [command] if command else SUBCOMMANDS:
        module = importlib.import_module(f"kb.cli.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.add_argument(  # also after the command; SUPPRESS keeps the one given before it
            "--rules", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS
        )
        p.set_defaults(_module=module)
    return parser


def command_of(args: Sequence[str]) -> str | None:
    """The subcommand `args` run when nothing but `--rules DIR` comes before it (the only
    case in which the top-level parser has nothing to say beyond dispatching), else None."""
    i = 0
    while i < len(args) and (args[i] == "--rules" or args[i].startswith("--rules=")):
        i += 2 if args[i] == "--rules" else 1
    return args[i] if i < len(args) and args[i] in SUBCOMMANDS else None


def main(
    argv: Sequence[str] | None = None, open_tui: Callable[[Path | None], int] | None = None
) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    before = os.environ.get("DLPERF_HELP_RULES")
    try:
        parser = build_parser(command_of(args_list))
        args = parser.parse_args(args_list)
        if args.rules:
            os.environ["DLPERF_HELP_RULES"] = args.rules
        module = getattr(args, "_module", None)
        if module is None:
            module = importlib.import_module("kb.cli.tui")
            args = parser.parse_args([*args_list, "tui"])
        args.open_tui = open_tui
        return int(module.run(args) or 0)
    except UserError as exc:
        _say(str(exc))
        return 2
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if os.environ.get("DLPERF_HELP_DEBUG"):
            raise
        _say(f"internal error: {type(exc).__name__}: {exc} (set DLPERF_HELP_DEBUG=1 to see where)")
        return 2
    finally:  # `--rules` holds for this call only (main is also called in-process)
        if before is None:
            os.environ.pop("DLPERF_HELP_RULES", None)
        else:
            os.environ["DLPERF_HELP_RULES"] = before


def _say(message: str) -> None:
    from kb.util.textsafe import safe_line

    first = message.strip().splitlines()[0] if message.strip() else "error"
    sys.stderr.write(f"dlperf-help: {safe_line(first)}\n")


def _quiet_stdout() -> None:
    """After a closed pipe (`dlperf-help ... | head`), don't complain while exiting."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
