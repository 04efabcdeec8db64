"""`dlperf-help survey`: this node's facts (GPUs, drivers, NCCL, frameworks, IB, NICs, limits).

Runs read-only commands in one shell script on this machine.  It is meant to be
started by the launcher a cluster already has, on every node at once:

    srun --ntasks-per-node=1 --output=survey-%N.json dlperf-help survey --json
    dlperf-help report survey-*.json

Exit status: 0 when the survey ran (facts that cannot be read are listed, not
errors), 2 when it could not run at all.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "this node's facts as JSON for `report` (run it on every node with srun/mpirun/pdsh)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the survey as one JSON object")
    p.add_argument(
        "--one-line",
        action="store_true",
        help="with --json: print it on one line (JSON lines, for many nodes into one file)",
    )
    p.add_argument(
        "--python",
        default="python3",
        metavar="PY",
        help="the Python that runs the training job (default: python3 on PATH)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="give up after S seconds (default 180)",
    )
    p.add_argument(
        "--script",
        action="store_true",
        help="print the read-only shell script the survey runs, and exit",
    )


def run(args: argparse.Namespace) -> int:
    from kb.cli.output import stamped, write
    from kb.cluster import survey
    from kb.runners.local import LocalRunner
    from kb.util.errors import UserError
    from kb.util.textsafe import json_dumps

    if args.script:
        sys.stdout.write(survey.script(args.python))
        return 0
    timeout = args.timeout if args.timeout and args.timeout > 0 else survey.DEFAULT_TIMEOUT
    doc = survey.collect(LocalRunner(), timeout=timeout, python=args.python)
    if doc.get("error") and all(v is None for v in doc["facts"].values()):
        raise UserError(f"the survey could not run: {doc['error']}")
    if args.json:
        doc = stamped("survey", doc)
        text = (
            json_dumps(doc, separators=(",", ":")) if args.one_line else json_dumps(doc, indent=2)
        )
        sys.stdout.write(text + "\n")
        return 0
    write(to_text(doc))
    return 0


def to_text(doc: dict[str, Any]) -> str:
    """The survey for a person: one fact per line, then what could not be read and why."""
    from kb.cluster.report.compare import show
    from kb.sysinfo import topology

    facts = doc["facts"]
    lines = [f"Survey of {doc['host']}", ""]
    width = max(len(k) for k in facts)
    for name, value in facts.items():
        if name in ("interfaces", "gpu_topology", "env", "boot_id") or value is None:
            continue
        lines.append(f"  {name.ljust(width)}  {show(value, name)}")
    if facts.get("env"):
        lines += ["", "Environment:"] + [f"  {k}={v}" for k, v in facts["env"].items()]
    if facts.get("interfaces"):
        lines += ["", "Interfaces (* = virtual):"]
        for i in facts["interfaces"]:
            addr = ", ".join(i["addresses"]) or "no address"
            lines.append(
                f"  {i['name']}{'*' if i['virtual'] else ''}  {i['state']}  {addr}  ({i['why']})"
            )
    if isinstance(facts.get("gpu_topology"), dict):
        topo = topology.Topology.from_json(facts["gpu_topology"])
        lines += ["", f"GPU topology: {topo.summary()}"]
        lines += [f"  [{f.severity}] {f.text}" for f in topo.findings()]
    if doc.get("unavailable"):
        lines += ["", "Not available:"]
        lines += [f"  {k}: {v}" for k, v in doc["unavailable"].items()]
    return "\n".join(lines) + "\n"
