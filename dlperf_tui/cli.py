"""The `dlperf-help` command: the engine's CLI, with this package as its interactive front
end. The engine never names the TUI (it stays headless); the front end hands itself in
here, and Textual is imported only when the assistant opens."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from kb.cli.main import main as engine_main


def open_assistant(log: Path | None) -> int:
    from dlperf_tui.app import run_app

    return run_app(log=log)


def main(argv: Sequence[str] | None = None) -> int:
    return engine_main(argv, open_tui=open_assistant)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
