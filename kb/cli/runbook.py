"""`dlperf-help runbook`: the knowledge base (or some causes) as one Markdown document."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "export the knowledge base, or the given causes, as a Markdown runbook"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("causes", nargs="*", metavar="CAUSE", help="cause ids (default: all)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here instead of stdout")
    p.add_argument(
        "--lang",
        choices=["en", "zh", "both"],
        default="both",
        help="language of the texts (default: English with the Chinese beneath)",
    )


def run(args: argparse.Namespace) -> int:
    from kb.authoring.checked import load_kb
    from kb.markdown import runbook
    from kb.util.errors import UserError

    kb = load_kb()
    unknown = [c for c in args.causes if c not in kb.causes]
    if unknown:
        import difflib

        near = difflib.get_close_matches(unknown[0], list(kb.causes), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else "; see: dlperf-help rules list"
        raise UserError(f"unknown cause '{unknown[0]}'{hint}")
    text = runbook.render(kb, args.causes or None, lang=args.lang)
    if args.output:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {args.output}: {exc.strerror}") from None
        print(f"wrote {args.output} ({len(text.splitlines())} lines)", file=sys.stderr)
    else:
        from kb.cli.output import write

        write(text)
    return 0
