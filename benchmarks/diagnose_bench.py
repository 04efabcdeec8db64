#!/usr/bin/env python3
"""How fast is `dlperf-help diagnose` on a huge log, next to `grep -E -f` over the same
signatures? And how long does a small pasted log take, whole process?

    python benchmarks/diagnose_bench.py                 # 1 GB log (generated once)
    python benchmarks/diagnose_bench.py --size-mb 100   # while developing
    python benchmarks/diagnose_bench.py --flood --size-mb 130   # a line-veto flood

Generates (once, under .bench/) a realistic multi-rank NCCL/training log with real
failure lines buried in it (benchmarks/loggen.py), then runs, one after the other and
one run each: GNU grep (`LC_ALL=C grep -E -c -f PATTERNS`, the rules' regex and
substring matchers translated to ERE) and `dlperf-help diagnose --json`, reporting
wall time, MB/s and peak RSS (from wait4) of each, the causes found, and the median
of five whole-process runs on a small pasted log. Prints a Markdown table for README.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loggen import generate, generate_flood

ROOT = Path(__file__).resolve().parent.parent
SMALL_LOG = (
    Path(__file__).resolve().parents[1] / "tests/shared/corpus/dev/h200-libcudart-10.1-missing.log"
)


def run_measured(
    cmd: list[str], env: dict[str, str] | None = None
) -> tuple[float, int, int, bytes, float]:
    """(wall seconds, peak RSS in MB, exit status, stdout, CPU seconds) of one run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - t0, usage.ru_maxrss // 1024, proc.returncode, out, cpu


def re2_to_ere(pattern: str) -> str:
    """A rule's RE2 pattern in GNU ERE, as closely as the dialect allows."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "d":
                out.append("0-9" if in_class else "[0-9]")
            elif nxt == "D":
                out.append("[^0-9]")
            else:
                out.append(ch + nxt)
            i += 2
            continue
        if in_class:
            in_class = ch != "]" or (out and out[-1] in ("[", "[^"))
            out.append(ch)
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                out.append("[^")
                i += 2
                continue
            out.append(ch)
        elif pattern.startswith("(?P<", i):
            out.append("(")
            i = pattern.index(">", i) + 1
            continue
        elif pattern.startswith("(?:", i):
            out.append("(")
            i += 3
            continue
        elif pattern.startswith("(?i)", i):
            i += 4
            continue
        elif ch == "?" and out and out[-1] in ("*", "+", "?", "}"):
            pass  # non-greedy: the same lines match
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def grep_patterns(dest: Path) -> tuple[Path, int, int]:
    """Write the rules' matchers as ERE lines; return (file, kept, dropped)."""
    sys.path.insert(0, str(ROOT))
    from kb.diagnosis.compiled import load_rules

    pats = []
    for _rid, sig in load_rules().signatures():
        for m in sig.matchers:
            if m.type == "regex":
                pats.append(re2_to_ere(m.pattern))
            elif m.type == "substring":
                pats.append(re.sub(r"([.[\]()*+?{}|^$\\])", r"\\\1", m.text))
    kept, dropped = [], 0
    for p in dict.fromkeys(pats):
        ok = subprocess.run(["grep", "-E", "-e", p, "/dev/null"], capture_output=True).returncode
        if ok == 2:
            dropped += 1
        else:
            kept.append(p)
    dest.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return dest, len(kept), dropped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--dir", type=Path, default=ROOT / ".bench")
    ap.add_argument("--skip-grep", action="store_true")
    ap.add_argument(
        "--flood",
        action="store_true",
        help="an sshd log whose every line a rule's line veto rejects (benchmarks/loggen.py)",
    )
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if args.flood:
        log = args.dir / f"sshd-flood-{args.size_mb}mb.log"
        generate_flood(log, args.size_mb * 1024 * 1024)
    else:
        log = args.dir / f"multirank-{args.size_mb}mb.log"
        generate(log, args.size_mb * 1024 * 1024)
    size = log.stat().st_size
    print(f"log: {log} ({size / 1e6:,.0f} MB, ready in {time.perf_counter() - t0:.0f} s)")

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    exe = shutil.which("dlperf-help") or "dlperf-help"
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    subprocess.run([exe, "diagnose", str(SMALL_LOG)], capture_output=True, env=env)  # warm caches

    rows = []
    if not args.skip_grep:
        pats, kept, dropped = grep_patterns(args.dir / "patterns.ere")
        genv = dict(env, LC_ALL="C")
        wall, rss, _, _, cpu = run_measured(["grep", "-E", "-c", "-f", str(pats), str(log)], genv)
        rows.append((f"GNU grep -E -c -f ({kept} patterns, LC_ALL=C)", wall, cpu, rss, ""))
        if dropped:
            print(f"({dropped} patterns grep could not take were left out)")
    wall, rss, code, out, cpu = run_measured([exe, "diagnose", "--json", str(log)], env)
    try:
        causes = [f"{c['id']} {c['confidence']:.2f}" for c in json.loads(out)["causes"]]
    except (json.JSONDecodeError, KeyError):
        causes = [f"no JSON (exit {code})"]
    rows.append(("dlperf-help diagnose --json", wall, cpu, rss, ", ".join(causes[:3])))

    small, small_cpu, srss = [], [], 0
    for _ in range(5):
        w, srss, _, _, c = run_measured([exe, "diagnose", str(SMALL_LOG)], env)
        small.append(w)
        small_cpu.append(c)
    print(f"\nload average before the runs: {load}")
    kind = "sshd flood" if args.flood else "multi-rank"
    print(f"| {size / 1e6:,.0f} MB {kind} log | wall | MB/s (wall) | CPU | peak RSS | found |")
    print("|---|---|---|---|---|---|")
    for name, w, c, r, found in rows:
        print(f"| {name} | {w:.2f} s | {size / 1e6 / w:,.0f} | {c:.2f} s | {r} MB | {found} |")
    print(
        f"\nsmall pasted log ({SMALL_LOG.name}), whole process, median of 5: "
        f"{statistics.median(small):.2f} s wall, {statistics.median(small_cpu):.2f} s CPU, "
        f"peak RSS {srss} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
