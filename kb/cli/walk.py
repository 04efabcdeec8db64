"""`dlperf-help walk [LOG...] [--symptom ID] [--facts FILE...] [--answer Q=A...] [--json]`.

The decision-tree walk without a person, for clusters and scripts: the same engine as
the TUI's walk (`kb.walk.engine`), fed by the log's diagnosis, given answers, `check --json`
results and node surveys (one per node, or JSON lines from srun/mpirun/pdsh; a survey's
recorded interfaces answer the checks that read them). It stops where a person is needed.
Exit status: 0 settled or chosen, 1 likely, unknown or needs a person, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HELP = "walk the decision tree without a person: from logs, answers and node facts to the fix"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("logs", nargs="*", metavar="LOG", help="the failing job's logs (plain or .gz)")
    p.add_argument("--symptom", metavar="ID", help="start from this symptom (see: rules list)")
    p.add_argument(
        "--facts",
        nargs="+",
        default=[],
        metavar="FILE",
        help="`survey --json` or `check --json` files (one per node, or JSON lines)",
    )
    p.add_argument(
        "--answer",
        nargs="+",
        default=[],
        metavar="QUESTION=OUTCOME",
        help="an answer to a question (its answer id), or a check you ran (pass|fail)",
    )
    p.add_argument("--json", action="store_true", help="print the walk as one JSON object")


def run(args: argparse.Namespace) -> int:
    from kb.authoring.checked import load_kb
    from kb.cli.common import print_json
    from kb.diagnosis.engine import diagnose_paths
    from kb.util.errors import UserError
    from kb.walk.batch import run_batch
    from kb.walk.engine import Walk, WalkError

    if not args.logs and not args.symptom:
        raise UserError("give a log or --symptom ID (see: dlperf-help rules list)")
    kb = load_kb()
    answers = _answers(args.answer)
    for log in args.logs:
        if not Path(log).exists():  # a folder of Flight Recorder dumps is an input too
            raise UserError("cannot read: no such file", log)
    diagnosis = diagnose_paths(kb, [Path(p) for p in args.logs]) if args.logs else None
    focus = _hang_focus(kb, diagnosis, args.facts)
    try:
        walk = Walk(kb, symptom=args.symptom, diagnosis=diagnosis)
    except WalkError as exc:
        raise UserError(str(exc)) from None
    for key in answers:
        try:
            walk.step(key)
        except WalkError:
            raise UserError(
                f"--answer {key}=...: no question or check '{key}' in this walk"
            ) from None
    records, nodes, interfaces = _facts(args.facts)
    advice = _nic_advice(interfaces)
    if advice:
        walk.know({"good_iface": advice})
    walk.know(_found_values(records))  # what the given checks read: fixes are chosen by it
    try:
        end = run_batch(walk, answers, records, nodes, _addresses(interfaces))
    except WalkError as exc:
        raise UserError(str(exc)) from None
    finally:
        for node in nodes:
            node.close()
    doc = _document(walk, end)
    doc["focus"] = focus.to_json() if focus is not None else None
    if args.json:
        print_json(doc, "walk")
    else:
        sys.stdout.write(_text(doc))
    return 0 if end.end in ("settled", "chosen") else 1


def _answers(items: list[str]) -> dict[str, str]:
    from kb.util.errors import UserError

    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise UserError(f"--answer takes QUESTION=OUTCOME, not '{item}'")
        out[key.strip()] = value.strip()
    return out


def _found_values(records: dict[str, list[Any]]) -> dict[str, str]:
    """The values the given check results read (driver_cuda, horovod_version, ...), the
    first one given of each name; a value that differs between nodes is left out."""
    seen: dict[str, set[str]] = {}
    for recs in records.values():
        for rec in recs:
            for name, value in rec.params.items():
                seen.setdefault(name, set()).add(value)
    return {name: next(iter(v)) for name, v in seen.items() if len(v) == 1}


def _hang_focus(kb: Any, diagnosis: Any, facts: list[str]) -> Any:
    """The rank and host a hang's evidence names (`kb.diagnosis.hangs.focus`), or None.
    The causes the surveys show on that host join the diagnosis: its facts decide
    between the hang's causes (a different NCCL, a NIC that is down there)."""
    from kb.cluster.report import CauseBook, build_report, load_file
    from kb.cluster.report.focus import causes_on
    from kb.diagnosis.hangs.focus import from_diagnosis
    from kb.diagnosis.model import CauseResult, Evidence

    focus = from_diagnosis(diagnosis)
    if focus is None or not facts:
        return focus
    nodes = [n for path in facts for n in load_file(path)]
    known = {c.id for c in diagnosis.causes}
    for c in causes_on(build_report(nodes, CauseBook(kb)), nodes, focus):
        if c["id"] in known:
            continue
        ev = [Evidence(str(e["file"]), int(e["line"]), str(e["text"])) for e in c["evidence"]]
        nodes_param = {"nodes": str(c["params"]["nodes"])} if c["params"].get("nodes") else {}
        found = CauseResult(c["id"], c["title"], c["confidence"], ev, nodes_param, c["fixes"])
        diagnosis.causes.append(found)
    diagnosis.causes.sort(key=lambda c: -c.confidence)
    return focus


def _addresses(interfaces: dict[str, list[Any]]) -> dict[str, list[str]]:
    """Each surveyed node's addresses: a hang names a host by its address."""
    return {
        host: [str(a) for i in ifs if isinstance(i, dict) for a in i.get("addresses") or []]
        for host, ifs in interfaces.items()
    }


def _nic_advice(interfaces: dict[str, list[Any]]) -> str | None:
    """The `NCCL_SOCKET_IFNAME` value that selects a usable NIC on every surveyed node."""
    from kb.sysinfo.ifadvice import advise

    if not interfaces:
        return None
    adv = advise(interfaces)
    return adv.nccl_socket_ifname if adv.ok else None


def _facts(paths: list[str]) -> tuple[dict[str, list[Any]], list[Any], dict[str, list[Any]]]:
    """Check results by check id (from `check --json`), recorded nodes (from surveys),
    and each surveyed node's interfaces."""
    from kb.checks.model import CheckResult
    from kb.checks.recorded import RecordedNode, outputs_from_survey
    from kb.cluster.report import load_file

    records: dict[str, list[Any]] = {}
    nodes: list[Any] = []
    interfaces: dict[str, list[Any]] = {}
    for path in paths:
        for node in load_file(path):
            for chk in node.checks:
                status = str(chk.get("status") or "error")
                records.setdefault(str(chk["id"]), []).append(
                    CheckResult(
                        node.host,
                        str(chk["id"]),
                        str(chk.get("command") or ""),
                        status,
                        str(chk.get("output") or ""),
                        exit_code=chk.get("exit_code"),
                        finding=chk.get("finding"),
                        reason=str(chk.get("reason") or ""),
                        params={str(k): str(v) for k, v in (chk.get("params") or {}).items()},
                        title=str(chk.get("title") or chk["id"]),
                    )
                )
            outputs = outputs_from_survey(node.facts)
            if outputs:
                nodes.append(RecordedNode(node.host, outputs))
                interfaces[node.host] = list(node.facts.get("interfaces") or [])
    return records, nodes, interfaces


def _document(walk: Any, end: Any) -> dict[str, Any]:
    from kb.rules import fixchoice
    from kb.walk.batch import fix_titles

    conclusion = end.conclusion
    cause = conclusion.cause if conclusion is not None else None
    params = walk.params
    fixes = fixchoice.order(conclusion.fixes if conclusion else [], walk.kb.fixes, params)
    nxt = end.next_step
    return {
        "end": end.end,
        "cause": cause,
        "fixes": [
            {
                "id": f,
                "title": t,
                "caution": fixchoice.caution_text(walk.kb.fixes[f], params),
                "commands": [c.to_json() for c in fixchoice.commands(walk.kb.fixes[f], params)],
            }
            for f, t in zip(fixes, fix_titles(walk, fixes), strict=False)
        ],
        "causes": [
            {"id": b.id, "title": b.title, "p": round(b.p, 4), "status": b.status, "why": b.reasons}
            for b in walk.beliefs()
        ],
        "p_other": round(walk.p_other, 4),
        "steps": [e.summary() for e in walk.path],
        "next": None if nxt is None else {"kind": nxt.kind, "id": nxt.id, "title": nxt.title},
        "needs": end.needs or None,
        "params": params,
        "problems": end.problems,
    }


def _text(doc: dict[str, Any]) -> str:
    from kb.diagnosis.percent import percent
    from kb.util.textsafe import safe_line

    lines = [f"end: {doc['end']}" + (f" at {doc['cause']}" if doc["cause"] else "")]
    if doc["causes"]:
        lines.append("likelihood now:")  # the walk's word for its number, as in the TUI
    for c in doc["causes"][:8]:
        why = f" — {c['why'][-1]}" if c["why"] else ""
        lines.append(f"  {percent(c['p']):>4}  {c['status']:<9} {c['id']}{why}")
    if doc["steps"]:
        lines.append("steps:")
        lines += [f"  {s}" for s in doc["steps"]]
    for f in doc["fixes"]:
        lines.append(f"fix: {f['title']}")
        if f.get("caution"):
            lines.append(f"  caution: {f['caution']}")
        for cmd in f["commands"]:
            where = f"   ({' '.join(cmd['where'].split())})" if cmd["where"] else ""
            lines.append(f"  $ {cmd['run']}{where}")
    if doc.get("focus"):
        lines.append(f"focus: {doc['focus']['text']}")
    if doc["needs"]:
        lines.append(f"next: {doc['needs']}")
    lines += [f"note: {p}" for p in doc["problems"]]
    return "".join(safe_line(line) + "\n" for line in lines)
