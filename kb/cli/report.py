"""`dlperf-help report FILE...`: merge per-node surveys into the cross-node consistency report.

Inputs are `dlperf-help survey --json` documents (one per file, several per file,
or JSON lines) or `dlperf-help check --json` output.  Exit status: 0 the nodes
agree and no problem was found, 1 a difference or a cause was found (or a node was
unreachable), 2 an input could not be read (the others are still reported).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HELP = "merge `survey --json` (or `check --json`) files into the cross-node consistency report"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="survey or check JSON files ('-' for stdin)"
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument(
        "--markdown", action="store_true", help="print the report as a Markdown runbook section"
    )
    p.add_argument("--differences", action="store_true", help="show only the rows that differ")
    p.add_argument(
        "--hang",
        nargs="+",
        default=[],
        metavar="FILE",
        help="a hung job's logs, Flight Recorder dump folder or RAS report: the causes "
        "found on the host they name go first",
    )
    p.add_argument(
        "-o", "--output", metavar="OUT", help="write the report to OUT instead of stdout"
    )


def _hang_first(report: Any, nodes: list[Any], paths: list[str]) -> None:
    """The causes found on the host a hang names first (`kb.cluster.report.focus`), and a
    note that says which host that is, or that it was not surveyed."""
    from kb.authoring.checked import load_kb
    from kb.cluster.report.focus import focus_node, put_first
    from kb.diagnosis.engine import diagnose_paths
    from kb.diagnosis.hangs.focus import from_diagnosis
    from kb.util.errors import UserError

    for path in paths:
        if not Path(path).exists():
            raise UserError("cannot read: no such file", path)
    focus = from_diagnosis(diagnose_paths(load_kb(), paths))
    if focus is None:
        text = "the --hang inputs name no rank or host (no Flight Recorder dump or RAS report)"
    elif (found := focus_node(nodes, focus)) is None:
        text = f"{focus.says()}; that host is not among the surveyed nodes"
    else:
        ids = put_first(report, nodes, focus)
        shown = f": {', '.join(ids)} found there" if ids else ": nothing found there"
        text = f"{focus.says()} (surveyed as {found[0]}){shown}"
    report.notes.insert(0, {"id": "hang-focus", "text": text})


def run(args: argparse.Namespace) -> int:
    from kb.cli.common import print_json
    from kb.cli.output import stamped, write
    from kb.cluster.report import CauseBook, build_report, load_file, to_markdown, to_text
    from kb.util.errors import UserError
    from kb.util.textsafe import json_dumps, safe

    if args.files.count("-") > 1:
        raise UserError("standard input ('-') can be read only once")
    nodes, errors = [], []
    for path in args.files:
        try:
            nodes.extend(load_file(path))
        except UserError as exc:
            if len(args.files) == 1:
                raise
            errors.append({"file": path, "error": str(exc)})
            write(f"dlperf-help: {exc}\n", sys.stderr)
    if not nodes:
        raise UserError("none of the inputs could be read")
    report = build_report(nodes, CauseBook.shipped())
    report.errors = errors
    if args.hang:
        _hang_first(report, nodes, args.hang)
    if args.json:
        if args.output:
            doc = stamped("report", report.to_json())
            Path(args.output).write_text(json_dumps(doc, indent=2) + "\n")
        else:
            print_json(report.to_json(), "report")
    else:
        text = to_markdown(report) if args.markdown else to_text(report, args.differences)
        if args.output:
            try:
                Path(args.output).write_text(safe(text), encoding="utf-8")
            except OSError as exc:
                raise UserError(f"cannot write: {exc.strerror or exc}", args.output) from None
        else:
            write(text)
    if errors:
        return 2
    if report.no_host_answered:
        sys.stderr.write(f"dlperf-help: {report.no_host_answered}\n")
        return 1
    return 1 if report.problem else 0
