"""`dlperf-help rules lint|list|test`: validate, list and test the knowledge base."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kb.util.textsafe import safe_line

HELP = "validate (lint), list or test the rules"


ACTIONS = {
    "lint": "check every rule file; file:line messages, exit 1 on errors",
    "list": "list the causes with their area and symptoms",
    "test": "run every rule's inline examples",
    "coverage": "per library: the versions and messages the message catalogue covers",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))
    for name, help_text in ACTIONS.items():
        q = sub.add_parser(name, help=help_text, description=help_text)
        q.add_argument(
            "dir", nargs="?", type=Path, help="rules directory (default: the shipped rules)"
        )
        q.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    from kb.util import paths

    if args.action == "coverage":
        return _coverage(args.dir or paths.catalogue_dir(), args.json)
    root = args.dir or paths.rules_dir()
    return {"lint": _lint, "list": _list, "test": _test}[args.action](root, args.json)


def _coverage(root: Path, as_json: bool) -> int:
    """`rules coverage [DIR]`: DIR is a catalogue directory (default: the shipped one)."""
    from kb.cli.common import print_json
    from kb.rules.catalogue import CatalogueError, load_catalogue
    from kb.rules.catalogue.coverage import coverage, table
    from kb.util.errors import UserError

    if not root.is_dir():
        raise UserError(f"{root}: no such catalogue directory")
    try:
        cat = load_catalogue(root)
    except CatalogueError as exc:
        raise UserError(str(exc)) from None
    data = coverage(cat)
    if as_json:
        print_json(data, "rules-coverage")
    else:
        for row in table(data):
            print(safe_line(row))
    return 0


def _lint(root: Path, as_json: bool) -> int:
    from kb.authoring import lint
    from kb.cli.common import print_json
    from kb.util.errors import UserError

    if not root.is_dir():
        raise UserError(f"{root}: no such rules directory")
    kb, issues = lint.lint(root)
    errors = [i for i in issues if i.severity == "error"]
    if as_json:
        print_json([i.as_json() for i in issues], "rules-lint")
    else:
        from kb.cli.output import line

        for i in issues:
            line(str(i))
        nodes = len(kb.causes) + len(kb.symptoms) + len(kb.fixes)
        warnings = len(issues) - len(errors)
        summary = (
            f"{len(errors)} error(s), {warnings} warning(s) in {root} "
            f"({len(kb.causes)} causes, {len(kb.symptoms)} symptoms, {len(kb.fixes)} fixes valid)"
        )
        print(summary if issues else f"ok: {nodes} rules in {root}, no problems", file=sys.stderr)
    return 1 if errors else 0


def _list(root: Path, as_json: bool) -> int:
    from kb.authoring.checked import load_kb
    from kb.cli.common import print_json
    from kb.rules.schema.models import text_of

    kb = load_kb(root)
    rows = [
        {
            "id": c.id,
            "title": text_of(c.title),
            "area": kb.area_of(c.id),
            "symptoms": list(c.symptoms),
        }
        for c in sorted(kb.causes.values(), key=lambda c: (kb.area_of(c.id), c.id))
    ]
    if as_json:
        print_json(rows, "rules-list")
    else:
        width = max((len(r["id"]) for r in rows), default=10)
        for r in rows:
            print(safe_line(f"{r['id']:<{width}}  {r['area']:<10}  {r['title']}"))
    return 0


def _test(root: Path, as_json: bool) -> int:
    from kb.authoring import ruletests
    from kb.authoring.checked import load_kb
    from kb.cli.common import print_json

    kb = load_kb(root)
    passed, todo, failed = ruletests.run_all(kb)
    if as_json:
        print_json({"passed": passed, "failed": failed, "todo": todo}, "rules-test")
    else:
        for f in failed:
            print(safe_line(f"FAIL {f['example']}: {f['why']}"))
        print(f"{passed} passed, {len(failed)} failed, {todo} todo", file=sys.stderr)
    return 1 if failed else 0
