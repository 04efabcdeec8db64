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
        "-o", "--output", metavar="OUT", help="write the report to OUT instead of stdout"
    )


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
