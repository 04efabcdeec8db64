"""The consistency report seen from a hang: the causes found on the host the hang names.

Why: a hang's evidence names the rank that died, stalled or diverged and its host
(`kb.diagnosis.hangs.focus`); the survey of that host then decides between the hang's
causes (a different NCCL version, a NIC that is down, a small /dev/shm there). A report
cause names the focus node when its odd nodes (`nodes`) include it, or when all of its
evidence comes from that node's file. Those causes go first, with a line that says why.
"""

from __future__ import annotations

from typing import Any

from kb.cluster.report.compare import Report, column_names
from kb.cluster.report.load import Node
from kb.diagnosis.hangs.focus import Focus, node_matches


def node_names(node: Node) -> list[str]:
    """What a hang may call a node: its label, hostname and interface addresses."""
    names = [node.host, str(node.facts.get("hostname") or "")]
    for iface in node.facts.get("interfaces") or []:
        if isinstance(iface, dict):
            names.extend(str(a) for a in iface.get("addresses") or [])
    return [n for n in names if n]


def focus_node(nodes: list[Node], focus: Focus) -> tuple[str, Node] | None:
    """The (label, node) of the focus host among the surveyed nodes, if it was surveyed."""
    if focus.host is None:
        return None
    for label, node in zip(column_names(nodes), nodes, strict=True):
        if node_matches(focus.host, node_names(node), len(nodes) == 1):
            return label, node
    return None


def _names_node(cause: dict[str, Any], label: str, node: Node) -> bool:
    odd = [n.strip() for n in str(cause.get("params", {}).get("nodes", "")).split(",")]
    if any(odd):
        return label in odd
    files = {e.get("file") for e in cause.get("evidence", [])}
    return files == {node.file}


def causes_on(report: Report, nodes: list[Node], focus: Focus) -> list[dict[str, Any]]:
    """The report's causes found on the focus host, each with a line naming the hang."""
    found = focus_node(nodes, focus)
    if found is None:
        return []
    label, node = found
    out = []
    for cause in report.causes:
        if _names_node(cause, label, node):
            why = {"file": node.file, "line": node.first_line, "text": f"{label}: {focus.says()}"}
            out.append({**cause, "evidence": [why, *cause["evidence"]]})
    return out


def put_first(report: Report, nodes: list[Node], focus: Focus) -> list[str]:
    """Reorder `report.causes`: those found on the focus host first; returns their ids."""
    on = causes_on(report, nodes, focus)
    ids = [c["id"] for c in on]
    report.causes = on + [c for c in report.causes if c["id"] not in ids]
    return ids
