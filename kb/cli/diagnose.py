"""`dlperf-help diagnose`: name the cause in one or more logs, with the lines that prove it.

Reads files, `.gz` files and standard input (`-`, or nothing when input is piped).
Exit status: 0 nothing wrong found, 1 a cause found (or only a failure's symptom, with
its probable causes), 2 some input could not be read (the others are still diagnosed
and printed). Heavy imports happen inside `run`; the
rules come from the compiled cache, so a pasted log is answered in a fraction of a second.
"""

from __future__ import annotations

import gc
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # a plain command line is read without argparse (`kb.cli.quickargs`)
    import argparse
    from typing import Any

HELP = "diagnose logs: the likely causes, the lines that show them, and the fixes"
LIKELY = 0.5  # kb.diagnosis.ranking.LIKELY, kept here so `--help` imports nothing heavy


def add_arguments(p: argparse.ArgumentParser) -> None:
    import argparse

    p.epilog = (
        "Exit status: 0 no known problem found, 1 a likely cause found (or a failure whose "
        "cause no line names: a crash, a killed rank, an exception, a hang; the JSON then "
        'holds a "failure" object), 2 some input could not be read (the rest is still '
        "diagnosed). A short input (5 lines or fewer) that fires nothing is compared with "
        'the known messages: close ones give their causes, marked "basis": "approximate". '
        f"A cause is listed when its rule fires and its confidence is at least {LIKELY}. When "
        "the logs show a failure (an NCCL error code, a run stuck at start-up) but no likely "
        "cause, the failure's most probable causes are listed below that threshold, marked "
        '"basis": "symptom" in the JSON. Lines that only describe the setup (INFO lines, '
        "warnings) never rank above a cause shown by an error line, and are no diagnosis in a "
        "log whose run completed (they become notes)."
    )
    p.add_argument(
        "logs",
        nargs="*",
        metavar="LOG",
        help="log files (plain or .gz), `ncclras` reports, Flight Recorder dumps (files or "
        "a folder of them); '-' or nothing (with piped input) reads stdin",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--top", type=_positive, metavar="N", help="keep only the first N causes")
    p.add_argument("--explain", action="store_true", help="say why each cause scored what it did")
    p.add_argument(
        "--no-mask",
        action="store_true",
        help="keep secrets (passwords, tokens, keys) in the JSON: by default they are masked, "
        "since a diagnosis file is made to be shared",
    )
    p.add_argument(
        "--engine", choices=["fast", "reference"], default="fast", help=argparse.SUPPRESS
    )  # the reference path, for tests and benchmarks
    p.add_argument("--no-hyperscan", action="store_true", help=argparse.SUPPRESS)


def _positive(value: str) -> int:
    import argparse

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return n


def run(args: argparse.Namespace) -> int:
    from kb.util.errors import UserError

    logs = list(args.logs)
    if not logs:
        if sys.stdin is None or sys.stdin.isatty():
            raise UserError(
                "give one or more log files, or '-' to read standard input "
                "(see dlperf-help diagnose --help)"
            )
        logs = ["-"]
    if logs.count("-") > 1:
        raise UserError("standard input ('-') can be read only once")
    if "-" in logs and sys.stdin is not None and sys.stdin.isatty():
        sys.stderr.write("reading the log from standard input; end it with Ctrl-D\n")

    was = gc.isenabled()
    gc.disable()  # until the rules and their plan are made and frozen (`_settled`)
    try:
        from kb.authoring.checked import load_rules
        from kb.cli import output
        from kb.diagnosis.engine import diagnose_paths

        if args.json:  # the output's modules too, while the collector is off
            from kb.rules import fixchoice  # noqa: F401 (`with_fix_commands` uses it)
            from kb.util import secrets  # noqa: F401
        else:
            from kb.diagnosis.render import render

        _no_collection_at_exit()
        rules = load_rules()
        _settled(rules, use_hyperscan=not args.no_hyperscan)
    finally:
        if was:
            gc.enable()
    progress = _Progress()
    diag = diagnose_paths(
        rules,
        logs,
        progress=progress,
        fast=args.engine == "fast",
        use_hyperscan=not args.no_hyperscan,
    )
    progress.clear()
    print_json, stamped, write = output.print_json, output.stamped, output.write
    if args.top:
        diag.causes = diag.causes[: args.top]
    if args.json:
        data = with_fix_commands(diag.to_json(explain=args.explain), rules)
        if not args.no_mask:  # the output only: what was matched is the log as it is
            from kb.util.secrets import mask_json

            data = mask_json(data)
        print_json(stamped("diagnose", data))  # not kb.cli.common: it loads pydantic
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        # render made the log's text safe before colouring it: only its colours are kept
        write(render(diag, rules, explain=args.explain, color=color), keep_sgr=bool(color))
    sys.stdout.flush()
    for err in diag.errors:
        write(f"dlperf-help: {err['error']}\n", sys.stderr)
    if diag.errors:
        return 2
    return 1 if diag.found else 0  # a cause, or a failure whose cause no line names


def _settled(rules: Any, use_hyperscan: bool) -> None:
    """The rules and their scan plan made, then moved out of the cyclic collector's sight
    (`gc.freeze`), the collector having been off while they were built: they live as
    long as this process, and each collection of an older generation would walk their
    hundred thousand objects, and the modules', again (a sixth of a small log's run).
    Only here, in the command's own process: the TUI and other callers of the engine
    keep collecting as before; what the diagnosis then makes is collected as usual."""
    from kb.diagnosis.plan import plan_for

    plan_for(rules, use_hyperscan)  # the plan the diagnosis will use (cached on the rules)
    gc.freeze()


def _no_collection_at_exit() -> None:
    """At exit, move what is alive out of the collector's sight (`gc.freeze`): the
    interpreter's last collections would walk the tens of thousands of objects the rules
    and the scan plan are made of, which hold no cycle worth freeing before the process
    ends (a fifth of a small log's run). Only at exit: a caller that runs `diagnose`
    in-process keeps collecting as before."""
    import atexit

    atexit.unregister(gc.freeze)  # once, however many runs
    atexit.register(gc.freeze)


def with_fix_commands(data: dict[str, Any], rules: Any) -> dict[str, Any]:
    """Each cause's fixes chosen for the values found (`kb.rules.fixchoice`): `fixes` keeps
    its shape (ids, fragile ones last) and `fix_details` adds each fix's title, caution
    and commands filled with the values, naming those still needed (`missing`)."""
    from kb.rules import fixchoice

    for cause in data.get("causes", []):
        values = {str(k): str(v) for k, v in (cause.get("params") or {}).items()}
        ids = fixchoice.order(cause.get("fixes", []), rules.fixes, values)
        cause["fixes"] = ids
        details = []
        for fid in ids:
            fix = rules.fixes.get(fid)
            if fix is None:
                continue
            cmds = fixchoice.commands(fix, values)
            details.append(
                {
                    "id": fid,
                    "title": fix.title,
                    "caution": fixchoice.caution_text(fix, values),
                    "commands": [c.to_json() for c in cmds],
                    "missing": list(dict.fromkeys(n for c in cmds for n in c.missing)),
                }
            )
        cause["fix_details"] = details
    return data


class _Progress:
    """Progress on stderr for big inputs, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.last = time.monotonic()
        self.shown = False

    def __call__(self, done: int, total: int | None, name: str) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.last < 0.5:
            return
        self.last, self.shown = now, True
        pct = f" {100 * done / total:3.0f}%" if total else ""
        from kb.util.textsafe import safe_line

        sys.stderr.write(f"\rscanning {safe_line(name)}{pct} ({done / 1e6:,.0f} MB)\x1b[K")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
