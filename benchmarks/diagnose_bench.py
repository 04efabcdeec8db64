#!/usr/bin/env python3
"""How fast is `dlperf-help diagnose` on the logs people have, next to `grep -E -f` over
the same signatures? With and without the message catalogue? And how long does a small
pasted log take, whole process?

    python benchmarks/diagnose_bench.py                         # 100 MB, real-dense, real-sparse
    python benchmarks/diagnose_bench.py --size-mb 1024          # the issue's 1 GB
    python benchmarks/diagnose_bench.py --kinds dense,sparse    # the generated shapes
    python benchmarks/diagnose_bench.py --kinds flood --size-mb 130   # a line-veto flood
    python benchmarks/diagnose_bench.py --skip-grep --rss-mb 20,100,500  # RSS flat in size?

*real-dense* and *real-sparse* (benchmarks/reallog.py) are made of the healthy logs of
corpora/ with one labelled failing log of corpora/ planted at 60 %: the lines real jobs
print, on which GNU grep's DFA over hundreds of patterns runs far slower than on the
generated ones (`--grep-limit-s` stops it; the ratio is then a bound).

Generates (once, under /tmp/dlperf-bench: never in the repository) each kind of log (benchmarks/loggen.py) with real
failure lines buried in it: *sparse*, a multi-rank training log where few lines are
candidates (progress lines, NCCL initialisation now and then); *dense*, what 64 ranks
print with `NCCL_DEBUG=INFO` (most lines NCCL INFO: Channel, Trees, NET/IB, ring and
Init lines); *flood*, an sshd log whose every line a rule's veto rejects. Then, one run
each, one after the other: GNU grep (`LC_ALL=C grep -E -c -f PATTERNS`, the rules'
regex and substring matchers translated to ERE, catalogue templates included) and
`dlperf-help diagnose --json`, with the catalogue and without it
(`DLPERF_HELP_CATALOGUE` at an empty folder), reporting wall time, CPU time, MB/s and
peak RSS (from wait4) of each, the causes found and whether the planted ones are among
them, and the median of 21 whole-process runs of `diagnose --json` on a small pasted
log, each beside a run of `python -c pass` (the floor at that minute's load). Writes the
figures to benchmarks/results/diagnose-latest.{md,json} (--results to change).
The machine's load average is recorded beside them: on a shared machine, wall times
are the load's as much as the program's; CPU times less so.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reallog
from loggen import generate, generate_dense, generate_flood

ROOT = Path(__file__).resolve().parent.parent
SMALL_LOG = Path(__file__).resolve().parents[1] / "corpora/dev-h200/h200-libcudart-10.1-missing.log"
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else ""  # GNU time: see run_measured


def run_measured(
    cmd: list[str], env: dict[str, str] | None = None, limit: float | None = None
) -> tuple[float, int, int, bytes, float]:
    """(wall seconds, peak RSS in MB, exit status, stdout, CPU seconds) of one run; past
    `limit` seconds the command is killed (exit status -9).

    The peak RSS is the command's own: Linux carries a process's high-water mark across
    fork and exec, so wait4's `ru_maxrss` of a child of this (large) benchmark process is
    at least this process's size at the fork. GNU time, a small process, forks the command
    and reports the command's own peak; without it the figure is wait4's, an upper bound."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as sink, tempfile.NamedTemporaryFile("r") as peak:
        if TIME:
            cmd = [TIME, "-f", "%M", "-o", peak.name, *cmd]
        proc = subprocess.Popen(
            cmd, stdout=sink, stderr=subprocess.DEVNULL, env=env, start_new_session=True
        )
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if limit is not None and time.perf_counter() - t0 > limit:
                _stop(proc.pid)
                _, status, usage = os.wait4(proc.pid, 0)
                status = -1  # stopped, whatever GNU time then says
                break
            time.sleep(0.02)
        proc.returncode = -9 if status == -1 else os.waitstatus_to_exitcode(status)
        sink.seek(0)
        out = sink.read()
        rss_kb = usage.ru_maxrss
        if TIME:
            # the last word (a killed command's status line comes first)
            with contextlib.suppress(ValueError, IndexError):
                rss_kb = int(peak.read().split()[-1])
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - t0, rss_kb // 1024, proc.returncode, out, cpu


def _stop(pid: int) -> None:
    """Kill the command GNU time runs (time then reaps it, so wait4 on time still counts
    the command's CPU), else the whole process group."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            children = [int(c) for c in fh.read().split()]
    except (OSError, ValueError):
        children = []
    for child in children if TIME else []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    if not (TIME and children):
        os.killpg(pid, signal.SIGKILL)


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


def grep_patterns(dest: Path) -> tuple[Path, int, int, int]:
    """Write the rules' matchers as ERE lines; return (file, kept, dropped, of which from
    the catalogue)."""
    sys.path.insert(0, str(ROOT))
    from kb.authoring.checked import load_rules

    pats: dict[str, bool] = {}
    for _rid, sig in load_rules().signatures():
        for m in sig.matchers:
            if m.type == "regex":
                p = re2_to_ere(m.pattern)
            elif m.type == "substring":
                p = re.sub(r"([.[\]()*+?{}|^$\\])", r"\\\1", m.text)
            else:
                continue
            pats.setdefault(p, sig.id.startswith("catalogued:"))
    kept, dropped, from_catalogue = [], 0, 0
    for p, cat in pats.items():
        ok = subprocess.run(["grep", "-E", "-e", p, "/dev/null"], capture_output=True).returncode
        if ok == 2:
            dropped += 1
        else:
            kept.append(p)
            from_catalogue += cat
    dest.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return dest, len(kept), dropped, from_catalogue


def _real(kind: str) -> Any:
    return lambda path, size: reallog.generate(kind, path, size)


KINDS = {
    # kind: (file name, generator, planted causes that must be found)
    "real-dense": ("real-nccl-info-dense", _real("dense"), [reallog.PLANTED["dense"][1]]),
    "real-sparse": ("real-sparse", _real("sparse"), [reallog.PLANTED["sparse"][1]]),
    "sparse": ("multirank", generate, ["nccl-ib-fabric-error", "nccl-timeout-hang"]),
    "dense": ("nccl-info-dense", generate_dense, ["nccl-ib-fabric-error", "nccl-timeout-hang"]),
    "flood": ("sshd-flood", generate_flood, []),
}


def catalogue_counts() -> tuple[int, int]:
    """(templates in the catalogue, of them wired as signatures of a cause)."""
    sys.path.insert(0, str(ROOT))
    from kb.authoring.checked import load_rules
    from kb.rules.catalogue import load_catalogue

    templates = len(load_catalogue().messages)
    wired = sum(s.id.startswith("catalogued:") for _r, s in load_rules().signatures())
    return templates, wired


def diagnose_row(exe: str, log: Path, env: dict[str, str], planted: list[str]) -> dict[str, Any]:
    wall, rss, code, out, cpu = run_measured([exe, "diagnose", "--json", str(log)], env)
    try:
        ids = [(c["id"], round(c["confidence"], 2)) for c in json.loads(out)["causes"]]
    except (json.JSONDecodeError, KeyError, TypeError):
        ids = []
    found = [i for i, _ in ids]
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_rss_mb": rss,
        "exit": code,
        "causes": [f"{i} {c:.2f}" for i, c in ids[:3]],
        "planted_found": all(p in found for p in planted),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument(
        "--kinds", default="real-dense,real-sparse", help=f"comma-separated: {','.join(KINDS)}"
    )
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "dlperf-bench")
    ap.add_argument("--skip-grep", action="store_true")
    ap.add_argument(
        "--grep-limit-s", type=float, default=900, help="stop grep after this long (wall)"
    )
    ap.add_argument("--skip-no-catalogue", action="store_true")
    ap.add_argument(
        "--rss-mb",
        default="",
        metavar="MB,MB,...",
        help="also the peak RSS of diagnose on each kind at these sizes (is it flat?)",
    )
    ap.add_argument("--results", type=Path, default=ROOT / "benchmarks/results/diagnose-latest")
    ap.add_argument(
        "--small-only",
        action="store_true",
        help="measure only the small pasted log and update its line of the results",
    )
    ap.add_argument(
        "--small-runs",
        type=int,
        default=SMALL_RUNS,
        metavar="N",
        help=f"runs of the small pasted log whose median is reported (default {SMALL_RUNS})",
    )
    args = ap.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        ap.error(f"unknown kind(s): {', '.join(unknown)} (known: {', '.join(KINDS)})")
    args.dir.mkdir(parents=True, exist_ok=True)
    exe = shutil.which("dlperf-help") or str(ROOT / ".venv/bin/dlperf-help")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    empty = args.dir / "no-catalogue"
    empty.mkdir(exist_ok=True)
    bare = dict(env, DLPERF_HELP_CATALOGUE=str(empty))
    for e in (env, bare):  # compile and cache the rules (and scan databases) once each
        subprocess.run([exe, "diagnose", str(SMALL_LOG)], capture_output=True, env=e)
    if args.small_only:
        return small_only(exe, env, args.results, args.small_runs)
    templates, wired = catalogue_counts()
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": os.cpu_count(),
        "load_before": [round(x, 1) for x in os.getloadavg()],
        "catalogue_templates": templates,
        "catalogue_signatures": wired,
        "logs": {},
    }
    if not args.skip_grep:
        pats, kept, dropped, from_cat = grep_patterns(args.dir / "patterns.ere")
        result["grep_patterns"] = {"kept": kept, "dropped": dropped, "from_catalogue": from_cat}
    for kind in kinds:
        stem, gen, planted = KINDS[kind]
        t0 = time.perf_counter()
        log = gen(args.dir / f"{stem}-{args.size_mb}mb.log", args.size_mb * 1024 * 1024)
        size = log.stat().st_size
        print(f"{kind}: {log} ({size / 1e6:,.0f} MB, ready in {time.perf_counter() - t0:.0f} s)")
        row: dict[str, Any] = {"file": log.name, "mb": round(size / 1e6, 1)}
        if not args.skip_grep:
            genv = dict(env, LC_ALL="C")
            wall, rss, code, out, cpu = run_measured(
                ["grep", "-E", "-c", "-f", str(pats), str(log)], genv, args.grep_limit_s
            )
            row["grep"] = {
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "peak_rss_mb": rss,
                "lines": int(out or b"0") if code >= 0 else None,
                "stopped": code < 0,  # killed at the limit: its times are lower bounds
            }
        row["diagnose"] = diagnose_row(exe, log, env, planted)
        if not args.skip_no_catalogue:
            row["diagnose_no_catalogue"] = diagnose_row(exe, log, bare, planted)
        print(json.dumps(row), flush=True)
        for key in ("grep", "diagnose", "diagnose_no_catalogue"):
            if key in row:
                r = row[key]
                r["mb_s_wall"] = round(size / 1e6 / max(r["wall_s"], 1e-3))
                r["mb_s_cpu"] = round(size / 1e6 / max(r["cpu_s"], 1e-3))
        if "grep" in row:
            row["ratio_grep_over_diagnose_wall"] = round(
                row["grep"]["wall_s"] / max(row["diagnose"]["wall_s"], 1e-3), 2
            )
            row["ratio_grep_over_diagnose_cpu"] = round(
                row["grep"]["cpu_s"] / max(row["diagnose"]["cpu_s"], 1e-3), 2
            )
        result["logs"][kind] = row
        if args.rss_mb:
            row["rss_by_size"] = rss_by_size(exe, env, kind, args.dir, args.rss_mb)

    result["small_log"] = small_log(exe, env, args.small_runs)
    result["load_after"] = [round(x, 1) for x in os.getloadavg()]
    write_results(result, args.results)
    return 0


SMALL_RUNS = 21


def small_log(exe: str, env: dict[str, str], runs: int = SMALL_RUNS) -> dict[str, Any]:
    """The small pasted log, `diagnose --json` whole process: medians of `runs` runs (after
    one that warms), each beside a run of the bare interpreter (`python -c pass`, the
    floor on this machine at this load: the same minute's noise in both)."""
    small, small_cpu, floor, floor_cpu, srss = [], [], [], [], 0
    load = round(os.getloadavg()[0], 1)
    python = _interpreter(exe)
    cmd = [exe, "diagnose", "--json", str(SMALL_LOG)]
    # as a second run finds it: the rules' key recorded for their files' fingerprint (the
    # first run after compiling hashes them when they were written too recently to trust)
    run_measured(cmd, env)
    for _ in range(runs):
        w, srss, _, _, c = run_measured(cmd, env)
        small.append(w)
        small_cpu.append(c)
        w, _, _, _, c = run_measured([python, "-c", "pass"], env)
        floor.append(w)
        floor_cpu.append(c)
    return {
        "file": SMALL_LOG.name,
        "runs": runs,
        "median_wall_s": round(statistics.median(small), 3),
        "median_cpu_s": round(statistics.median(small_cpu), 3),
        "python_pass_wall_s": round(statistics.median(floor), 3),
        "python_pass_cpu_s": round(statistics.median(floor_cpu), 3),
        "peak_rss_mb": srss,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": [load, round(os.getloadavg()[0], 1)],
    }


def _interpreter(exe: str) -> str:
    """The Python the installed `dlperf-help` runs on (its `#!` line), else this one."""
    try:
        with open(exe, "rb") as fh:
            first = fh.readline().decode("utf-8", "replace")
    except OSError:
        return sys.executable
    if first.startswith("#!") and os.access(first[2:].strip(), os.X_OK):
        return first[2:].strip()
    return sys.executable


def small_only(exe: str, env: dict[str, str], results: Path, runs: int = SMALL_RUNS) -> int:
    """`--small-only`: the small log measured anew, its line of the results replaced (the
    large logs' figures, which take an hour, are kept as they were)."""
    path = results.with_suffix(".json")
    if not path.exists():
        raise SystemExit(f"{path}: no results to update (run the whole benchmark first)")
    result = json.loads(path.read_text())
    result["small_log"] = small_log(exe, env, runs)
    s = result["small_log"]
    print(
        f"small log: {s['median_cpu_s']:.3f} s CPU, {s['median_wall_s']:.3f} s wall (median "
        f"of {runs}; python -c pass: {s['python_pass_cpu_s']:.3f} s CPU, load {s['load']})"
    )
    write_results(result, results)
    return 0


def write_results(result: dict[str, Any], results: Path) -> None:
    md = markdown(result)
    print("\n" + md)
    results.parent.mkdir(parents=True, exist_ok=True)
    results.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    results.with_suffix(".md").write_text(md)
    print(f"written: {results}.md, .json")


def rss_by_size(exe: str, env: dict[str, str], kind: str, where: Path, sizes: str) -> list[Any]:
    """(MB, peak RSS in MB, CPU s) of `diagnose --json` on a `kind` log of each size: the
    memory a diagnosis holds must not grow with the log."""
    stem, gen, _planted = KINDS[kind]
    out = []
    for mb in (int(x) for x in sizes.split(",") if x.strip()):
        log = gen(where / f"{stem}-{mb}mb.log", mb * 1024 * 1024)
        _wall, rss, _code, _out, cpu = run_measured([exe, "diagnose", "--json", str(log)], env)
        out.append([round(log.stat().st_size / 1e6), rss, round(cpu, 1)])
        print(f"{kind} {mb} MB: peak RSS {rss} MB, CPU {cpu:.1f} s", flush=True)
    return out


def markdown(r: dict[str, Any]) -> str:
    """The result as a short Markdown page (what README's speed paragraph quotes)."""
    out = [
        f"# diagnose speed, {r['date']}",
        "",
        f"{r['cpus']} CPUs shared with other engineers' work: load average "
        f"{', '.join(map(str, r['load_before']))} before, "
        f"{', '.join(map(str, r['load_after']))} after. Wall times carry that load; CPU "
        "times (user+system, from wait4) less so. One run each.",
        "",
        f"Message catalogue: {r['catalogue_templates']} templates, "
        f"{r['catalogue_signatures']} of them wired as signatures of a cause.",
    ]
    if "grep_patterns" in r:
        g = r["grep_patterns"]
        out.append(
            f"grep gets {g['kept']} ERE patterns ({g['from_catalogue']} from the catalogue; "
            f"{g['dropped']} it cannot take left out)."
        )
    out += [
        "",
        "| log | program | wall | MB/s wall | CPU | MB/s CPU | peak RSS | found |",
        "|---|---|---|---|---|---|---|---|",
    ]
    names = {
        "grep": "`LC_ALL=C grep -E -c -f`",
        "diagnose": "`diagnose --json`",
        "diagnose_no_catalogue": "`diagnose --json`, no catalogue",
    }
    for kind, row in r["logs"].items():
        for key, name in names.items():
            if key not in row:
                continue
            x = row[key]
            if key == "grep":
                found = "stopped at the limit" if x.get("stopped") else f"{x['lines']} lines"
            else:
                found = ", ".join(x["causes"])
            if key != "grep":
                found += "" if x["planted_found"] else " (PLANTED CAUSE MISSED)"
            out.append(
                f"| {kind} {row['mb']:,.0f} MB | {name} | {x['wall_s']:.2f} s | "
                f"{x['mb_s_wall']} | {x['cpu_s']:.2f} s | {x['mb_s_cpu']} | "
                f"{x['peak_rss_mb']} MB | {found} |"
            )
    out.append("")
    for kind, row in r["logs"].items():
        if "ratio_grep_over_diagnose_wall" in row:
            bound = " at least" if row["grep"].get("stopped") else ""
            out.append(
                f"- {kind}: diagnose took {1 / max(row['ratio_grep_over_diagnose_wall'], 1e-6):.2f}"
                f"x grep's time (wall), {1 / max(row['ratio_grep_over_diagnose_cpu'], 1e-6):.2f}x"
                f" (CPU); time ratio grep/diagnose{bound} {row['ratio_grep_over_diagnose_wall']}"
                f" (wall), {row['ratio_grep_over_diagnose_cpu']} (CPU)"
            )
    for kind, row in r["logs"].items():
        if row.get("rss_by_size"):
            sizes = ", ".join(f"{rss} MB at {mb:,} MB" for mb, rss, _cpu in row["rss_by_size"])
            out.append(f"- {kind}: peak RSS of diagnose by the log's size: {sizes}")
    s = r["small_log"]
    when = f" ({s['date']}, load {s['load'][0]} to {s['load'][1]})" if "date" in s else ""
    floor = (
        f" (`python -c pass`: {s['python_pass_wall_s']:.3f} s wall, "
        f"{s['python_pass_cpu_s']:.3f} s CPU)"
        if "python_pass_cpu_s" in s
        else ""
    )
    out.append(
        f"- small pasted log ({s['file']}), `diagnose --json`, whole process, median of "
        f"{s.get('runs', 5)}{when}: {s['median_wall_s']:.3f} s wall, "
        f"{s['median_cpu_s']:.3f} s CPU, peak RSS {s['peak_rss_mb']} MB{floor}"
    )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
