"""The `dlperf-help` command: the engine's CLI, with this package as its interactive front
end. The engine never names the TUI (it stays headless); the front end hands itself in
here, and Textual is imported only when the assistant opens.

With no argument at all the assistant opens straight away: building the engine's parser
(argparse and every subcommand's module) would come before the first frame, for nothing.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `diagnose` on a small log need not import pathlib
    from collections.abc import Sequence
    from pathlib import Path


def open_assistant(log: Path | None) -> int:
    from dlperf_tui import collector

    collector.pause()  # until the first frame (`DlperfHelpApp.on_ready`)
    try:
        from dlperf_tui.app import run_app

        return run_app(log=log)
    finally:
        collector.resume()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        return assistant_alone()
    from kb.cli.main import main as engine_main

    return engine_main(args, open_tui=open_assistant)


def assistant_alone() -> int:
    """Plain `dlperf-help`: what `kb.cli.main` does for it (`kb.cli.tui.run`, the same
    one-line errors and exit statuses), without the parser."""
    from types import SimpleNamespace

    from kb.cli import tui
    from kb.util.errors import UserError

    try:  # `run` reads the two attributes `kb.cli.main` would have set
        return tui.run(SimpleNamespace(log=None, open_tui=open_assistant))  # type: ignore[arg-type]
    except UserError as exc:
        return _say(str(exc))
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if os.environ.get("DLPERF_HELP_DEBUG"):
            raise
        return _say(
            f"internal error: {type(exc).__name__}: {exc} (set DLPERF_HELP_DEBUG=1 to see where)"
        )


def _say(message: str) -> int:
    """One line on stderr, as `kb.cli.main` writes it; the exit status of a failed job."""
    from kb.util.textsafe import safe_line

    first = message.strip().splitlines()[0] if message.strip() else "error"
    sys.stderr.write(f"dlperf-help: {safe_line(first)}\n")
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
