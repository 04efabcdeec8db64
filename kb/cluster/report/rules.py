"""From facts and differences between nodes to causes (and notes that are not failures).

Each rule reads the consistency table and the nodes' facts and records a finding
(`kb.cluster.findings`, defined in rules/vocabulary/findings.yaml) with evidence
pointing at the fact in the input file; the causes whose YAML lists the finding under
`named_by` get it.
Rules that read one node alone also fire on a single-node report.  The rules on
survey facts live in `rules_facts`; the environment, interface and `check` rules here.
"""

from __future__ import annotations

from typing import Any

from kb.cluster.findings import Finding
from kb.cluster.report import rules_facts as facts
from kb.cluster.report.causes import CauseBook, evidence
from kb.cluster.report.compare import Report, Row
from kb.cluster.report.rulekit import Pairs, ev, spread
from kb.sysinfo import ifadvice


def apply(nodes: Pairs, report: Report, book: CauseBook) -> list[dict[str, Any]]:
    """Run every rule; causes go into `book`, notes are returned."""
    notes: list[dict[str, Any]] = []
    rows = {r.fact: r for r in report.rows}
    for rule in (*facts.RULES, _env, _interfaces, _checks):
        rule(nodes, rows, book, notes, report)
    return notes


_ENV_FINDING: tuple[tuple[str, Finding | None], ...] = (  # first prefix that matches; None: a note
    ("NCCL_SOCKET_IFNAME", Finding.ENV_IFNAME_DIFFERS),
    ("GLOO_SOCKET_IFNAME", Finding.ENV_IFNAME_DIFFERS),
    ("NCCL_IB_", Finding.ENV_IB_DIFFERS),
    ("NCCL_NET", Finding.ENV_IB_DIFFERS),
    ("NCCL_P2P_", Finding.ENV_P2P_DIFFERS),
    ("NCCL_SHM_", Finding.ENV_P2P_DIFFERS),
    ("CUDA_VISIBLE_DEVICES", Finding.ENV_VISIBLE_DEVICES_DIFFERS),
    ("NCCL_", None),
    ("", Finding.ENV_FRAMEWORK_DIFFERS),
)


def _env(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    for name, n in nodes:
        env = n.facts.get("env") or {}
        ifname = env.get("NCCL_SOCKET_IFNAME")
        if ifname and n.facts.get("interfaces"):
            problem = ifadvice.check_setting(ifname, n.facts["interfaces"])
            if problem:
                book.found(
                    Finding.SOCKET_IFNAME_UNUSABLE,
                    0.8,
                    [ev(name, n, "NCCL_SOCKET_IFNAME", problem)],
                    {"nodes": name, "NCCL_SOCKET_IFNAME": ifname},
                )
        if env.get("NCCL_IB_DISABLE") == "1" and facts.ib_active(n):
            book.found(
                Finding.IB_DISABLED_WITH_ACTIVE_PORT,
                0.6,
                [
                    ev(
                        name,
                        n,
                        "NCCL_IB_DISABLE",
                        "NCCL_IB_DISABLE=1 while the node has an active IB port",
                    )
                ],
                {"nodes": name},
            )
    for fact, row in rows.items():
        if not (fact.startswith("env.") and row.differs):
            continue
        var = fact[4:]
        if var == "NCCL_SOCKET_IFNAME":
            continue  # may differ per node on purpose; checked against interfaces above
        finding = next(f for prefix, f in _ENV_FINDING if var.startswith(prefix))
        if finding is None:
            notes.append(
                {
                    "id": "env-differs",
                    "text": f"{var} differs: {spread(row)}.",
                    "evidence": [
                        ev(name, n, var, f"{var} = {row.shown[name]}") for name, n in nodes
                    ],
                }
            )
            continue
        book.found(
            finding,
            0.4,
            [ev(name, n, var, f"{var} = {row.shown[name]}") for name, n in nodes],
            {"variable": var, "values": spread(row)},
        )


def _interfaces(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    with_ifaces = {name: n.facts["interfaces"] for name, n in nodes if n.facts.get("interfaces")}
    if not with_ifaces:
        return
    adv = ifadvice.advise(with_ifaces)
    report.advice = adv
    if not adv.ok and len(with_ifaces) > 1:
        where = dict(nodes)
        items = [
            ev(name, where[name], "interfaces", problem)
            for name, problem in zip(adv.nodes_without_nic, adv.problems, strict=False)
        ] or [evidence(nodes[0][1].file, nodes[0][1].line_of("interfaces"), adv.problems[0])]
        book.found(Finding.NO_COMMON_NIC, 0.7, items, {"nodes": ", ".join(adv.nodes_without_nic)})


def _checks(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    for name, n in nodes:
        for chk in n.checks:
            if chk.get("status") == "fail" and chk.get("cause"):
                key = f"check:{chk['id']}"
                text = chk.get("finding") or next(
                    iter((chk.get("output") or "").strip().splitlines()), ""
                )
                book.add(
                    str(chk["cause"]),
                    0.9,
                    [ev(name, n, key, f"check {chk['id']} failed: {text}")],
                    {"nodes": name},
                )
    for fact, row in rows.items():
        if fact.startswith("check:") and row.differs:
            cause = next(
                (
                    c.get("cause")
                    for _, n in nodes
                    for c in n.checks
                    if f"check:{c.get('id')}" == fact and c.get("cause")
                ),
                None,
            )
            if cause:
                book.add(
                    str(cause),
                    0.7,
                    [ev(name, n, fact, f"{fact[6:]} = {row.shown[name]}") for name, n in nodes],
                    {"values": spread(row)},
                )
