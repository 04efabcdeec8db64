"""Shared pieces of the report's rules: evidence lines, how a differing row is told, and
the rule that makes a differing fact a finding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kb.cluster.findings import Finding
from kb.cluster.report.causes import CauseBook, evidence
from kb.cluster.report.compare import Report, Row
from kb.cluster.report.load import Node

Pairs = list[tuple[str, Node]]


def ev(name: str, node: Node, key: str, text: str) -> dict[str, Any]:
    return evidence(node.file, node.line_of(key), f"{name}: {text}")


def spread(row: Row) -> str:
    """'2.7.3 on gpu01, gpu02; 2.6.4 on gpu04'."""
    groups: dict[str, list[str]] = {}
    for node, cell in row.shown.items():
        groups.setdefault(cell, []).append(node)
    return "; ".join(
        f"{v} on {', '.join(ns)}" for v, ns in sorted(groups.items(), key=lambda kv: -len(kv[1]))
    )


def odd(row: Row) -> list[str]:
    """Nodes whose value differs from the most common one."""
    groups: dict[str, list[str]] = {}
    for node, cell in row.shown.items():
        groups.setdefault(cell, []).append(node)
    common = max(groups.values(), key=len)
    return [n for n in row.shown if n not in common]


def diff_finding(finding: Finding, conf: float, fact: str, why: str) -> Callable[..., None]:
    """A rule: `fact` differing between nodes is `finding`, odd nodes named."""

    def rule(
        nodes: Pairs,
        rows: dict[str, Row],
        book: CauseBook,
        notes: list[dict[str, Any]],
        report: Report,
    ) -> None:
        row = rows.get(fact)
        if row is None or not row.differs:
            return
        odd_nodes = odd(row)
        items = [ev(name, n, fact, f"{fact} = {row.shown[name]}") for name, n in nodes]
        book.found(
            finding,
            conf,
            items,
            {"fact": fact, "values": spread(row), "nodes": ", ".join(odd_nodes), "why": why},
        )

    return rule
