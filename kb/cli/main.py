"""The `dlperf-help` command: argument parsing, dispatch, and the one-line-error policy.

Subcommands live in their own modules (`kb.cli.<name>`) exposing `HELP`,
`add_arguments(parser)` and `run(args) -> int`; their heavy imports happen inside
`run`, so parsing stays fast. The interactive assistant is handed in by its front end
(`dlperf_tui.cli`, the installed `dlperf-help`) as `open_tui`: the engine never imports it.
Exit status: 0 nothing wrong, 1 a problem found, 2 the job could not be done.
"""

from __future__ import annotations

import os
import sys

from kb.util.errors import UserError

TYPE_CHECKING = False
if TYPE_CHECKING:  # a plain `diagnose` needs neither argparse nor pathlib (nor typing)
    import argparse
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any

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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `command`, only that subcommand's (`kb.cli.parser`)."""
    from kb.cli.parser import build_parser as build

    return build([command] if command else SUBCOMMANDS)


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
        args = _quick(args_list)
        if args is None:
            parser = build_parser(command_of(args_list))
            args = parser.parse_args(args_list)
        if args.rules:
            os.environ["DLPERF_HELP_RULES"] = args.rules
        module = getattr(args, "_module", None)
        if module is None:
            module = _command_module("tui")
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


def _quick(args: list[str]) -> argparse.Namespace | None:
    """A plain `diagnose` command line, read as argparse reads it (`kb.cli.quickargs`)
    without building the parser; None for any other."""
    from kb.cli.quickargs import quick_args

    found = quick_args(args)
    if found is None:
        return None
    from types import SimpleNamespace

    found["_module"] = _command_module("diagnose")
    return SimpleNamespace(**found)  # type: ignore[return-value]


def _command_module(name: str) -> Any:
    """`kb.cli.<name>`, imported as `importlib.import_module` would (without importing
    importlib, for a plain `diagnose`)."""
    full = f"kb.cli.{name}"
    __import__(full)
    return sys.modules[full]


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
