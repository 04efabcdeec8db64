"""A plain `dlperf-help diagnose` command line read without argparse.

Why: importing argparse (gettext, locale with it) and building the parser cost a small
pasted log's run about a tenth of its time. Only a command line made of `diagnose`'s own
options, spelled out in full, with its logs in one run, is read here; anything else
(`--help`, an abbreviation, `--`, an unknown or malformed option, a log named like an
option) gets `None`, and the real parser, with its messages and exit statuses. What is
read here equals what argparse reads (`tests/core/test_quick_args.py` compares the two,
and these tables with the parser's own).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` itself is not needed to read a command line
    from collections.abc import Sequence
    from typing import Any

COMMAND = "diagnose"
FLAGS = {"--json": "json", "--explain": "explain", "--no-mask": "no_mask"}
FLAGS["--no-hyperscan"] = "no_hyperscan"
VALUED = {"--top": "top", "--engine": "engine", "--rules": "rules"}
ENGINES = ("fast", "reference")
DEFAULTS: dict[str, Any] = {
    "json": False,
    "top": None,
    "explain": False,
    "no_mask": False,
    "engine": "fast",
    "no_hyperscan": False,
}


def quick_args(argv: Sequence[str]) -> dict[str, Any] | None:
    """The attributes argparse would give `argv` (`rules`, `command`, `logs` and
    `diagnose`'s options), or None when `argv` is not a plain `diagnose` command line."""
    rules: str | None = None
    i = 0
    while i < len(argv) and argv[i] != COMMAND:  # before the command: only `--rules DIR`
        got = _valued(argv, i)
        if got is None or got[0] != "rules":
            return None
        rules, i = got[1], got[2]
    if i == len(argv):
        return None
    out: dict[str, Any] = {"rules": rules, "command": COMMAND, "logs": [], **DEFAULTS}
    logs: list[str] = out["logs"]
    i, run_ended = i + 1, False
    while i < len(argv):
        arg = argv[i]
        if arg == "-" or not arg.startswith("-"):
            if run_ended:  # argparse reads the logs once: a second run is an error
                return None
            logs.append(arg)
            i += 1
            continue
        run_ended = bool(logs)
        if arg in FLAGS:
            out[FLAGS[arg]] = True
            i += 1
            continue
        got = _valued(argv, i)
        if got is None:
            return None
        dest, value, i = got
        out[dest] = value
    return out


def _valued(argv: Sequence[str], i: int) -> tuple[str, Any, int] | None:
    """(dest, value, next index) of the valued option at `argv[i]` (`--top N`,
    `--top=N`), or None when it is not one or its value is not plainly valid."""
    name, eq, value = argv[i].partition("=")
    if name not in VALUED:
        return None
    if not eq:
        if i + 1 >= len(argv):
            return None
        value, i = argv[i + 1], i + 1
    if not value or value.startswith("-"):
        return None
    dest = VALUED[name]
    if dest == "top":
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            return None
        return dest, int(value), i + 1
    if dest == "engine" and value not in ENGINES:
        return None
    return dest, value, i + 1
