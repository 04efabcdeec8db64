#!/usr/bin/env python3
"""Snapshot `dlperf-help diagnose --json` on every test log, to prove a speed change
leaves every diagnosis byte-identical (the `seconds` timing aside).

    python benchmarks/snapshot_diagnoses.py OUT.json            # take a snapshot
    python benchmarks/snapshot_diagnoses.py OUT.json --compare BEFORE.json

Runs the CLI in one process (kb.cli.main.main) over every log of corpora/ and tests/
(`.log`, `.txt`), so several hundred logs take a minute rather than many of process starts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TIMING = re.compile(r'"seconds": [0-9.e+-]+')


def logs() -> list[Path]:
    return sorted(
        p
        for top in ("corpora", "tests")
        for p in (ROOT / top).rglob("*")
        if p.is_file() and p.suffix in (".log", ".txt") and "labels" not in p.name
    )


def diagnose(path: Path) -> str:
    from kb.cli.main import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        code = main(["diagnose", "--json", str(path)])
    out = TIMING.sub('"seconds": 0', buf.getvalue()).replace(str(ROOT) + "/", "")
    return f"exit {code}\n" + out  # paths relative: two checkouts compare


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--compare", type=Path)
    # pin the knowledge (DLPERF_HELP_RULES, DLPERF_HELP_CATALOGUE) when others edit it
    args = ap.parse_args()
    snap = {str(p.relative_to(ROOT)): diagnose(p) for p in logs()}
    args.out.write_text(json.dumps(snap, indent=0, sort_keys=True), encoding="utf-8")
    print(f"{len(snap)} logs diagnosed -> {args.out}")
    if args.compare:
        before = json.loads(args.compare.read_text(encoding="utf-8"))
        diff = sorted(k for k in before.keys() | snap.keys() if before.get(k) != snap.get(k))
        for k in diff:
            print(f"DIFFERS: {k}")
        print(f"{len(diff)} of {len(snap)} differ")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
