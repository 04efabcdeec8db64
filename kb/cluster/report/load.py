"""Reading per-node inputs for the consistency report: survey JSON or `check --json` output.

A cluster's own launcher writes the inputs (`srun ... survey --json`), so a file may
hold one survey, a list of them, several concatenated documents or JSON lines,
or the `check --json` document with one entry per host.  Every node remembers the
file and the line of each fact, so the report's evidence points at them.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.util.errors import UserError


@dataclass
class Node:
    """One node's facts as read from an input file."""

    host: str
    file: str
    facts: dict[str, Any] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # fact (or env variable) -> line
    error: str | None = None  # an unreachable host in `check --json`
    checks: list[dict[str, Any]] = field(default_factory=list)
    first_line: int = 1

    def line_of(self, key: str) -> int:
        return self.lines.get(key, self.first_line)


class LineIndex:
    """Line numbers of offsets in a text, without rescanning it for every lookup."""

    def __init__(self, text: str) -> None:
        self.breaks = [m.start() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self.breaks, offset) + 1


def read_documents(text: str, name: str) -> list[tuple[Any, int, int]]:
    """Every JSON document in `text` (one, several concatenated, or JSON lines): (doc, start, end)."""
    dec = json.JSONDecoder()
    out = []
    pos = 0
    while True:
        m = re.compile(r"\S").search(text, pos)
        if not m:
            break
        try:
            doc, end = dec.raw_decode(text, m.start())
        except json.JSONDecodeError as exc:
            raise UserError(f"not JSON: {exc.msg}", f"{name}:{exc.lineno}") from None
        out.append((doc, m.start(), end))
        pos = end
    if not out:
        raise UserError("empty file: expected survey or check JSON", name)
    return out


def load_text(text: str, name: str) -> list[Node]:
    """Nodes from the text of one input file (`name` is how errors and evidence refer to it)."""
    nodes: list[Node] = []
    index = LineIndex(text)
    for doc, start, end in read_documents(text, name):
        items = doc if isinstance(doc, list) else [doc]
        for item in items:
            nodes.extend(_nodes_of(item, text, start, end, name, index))
    if not nodes:
        raise UserError("no nodes found: expected `survey --json` or `check --json` output", name)
    return nodes


def load_file(path: str) -> list[Node]:
    """Nodes from one file (`-` reads standard input)."""
    import sys

    if path == "-":
        return load_text(sys.stdin.read(), "-")
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", path) from None
    return load_text(text, path)


def _nodes_of(doc: Any, text: str, start: int, end: int, name: str, index: LineIndex) -> list[Node]:
    line0 = index.line(start)
    if isinstance(doc, dict) and isinstance(doc.get("facts"), dict):
        node = Node(
            str(doc.get("host") or doc["facts"].get("hostname") or "unknown"),
            name,
            dict(doc["facts"]),
            dict(doc.get("unavailable") or {}),
            first_line=line0,
        )
        node.error = doc.get("error")
        keys = [*node.facts, *(node.facts.get("env") or {})]
        node.lines = _lines_of(text, start, end, keys, index)
        return [node]
    if isinstance(doc, dict) and isinstance(doc.get("hosts"), list):
        return [
            _node_from_check(h, text, start, end, name, index)
            for h in doc["hosts"]
            if isinstance(h, dict)
        ]
    where = f"{name}:{line0}"
    raise UserError(
        "this JSON is neither `survey --json` (a 'facts' object) nor "
        "`check --json` (a 'hosts' list)",
        where,
    )


def _node_from_check(
    host: dict[str, Any], text: str, start: int, end: int, name: str, index: LineIndex
) -> Node:
    label = str(host.get("host") or host.get("address") or "unknown")
    node = Node(label, name)
    span_start = text.find(f'"{label}"', start, end)
    node.first_line = index.line(span_start if span_start >= 0 else start)
    if host.get("ok") is False:
        node.error = str(host.get("error") or "unreachable")
    if isinstance(host.get("facts"), dict):  # `check` ran the survey too
        node.facts.update(host["facts"])
        node.unavailable.update(host.get("unavailable") or {})
        keys = [*host["facts"], *(host["facts"].get("env") or {})]
        node.lines.update(_lines_of(text, max(span_start, start), end, keys, index))
    for chk in host.get("checks") or []:
        if not isinstance(chk, dict) or not chk.get("id"):
            continue
        node.checks.append(chk)
        status = chk.get("status")
        key = f"check:{chk['id']}"
        if status in ("pass", "fail"):
            node.facts[key] = chk.get("finding") or status
        else:
            node.facts[key] = None
            node.unavailable[key] = f"check {status}: {(chk.get('output') or '').strip()[:120]}"
        found = text.find(f'"{chk["id"]}"', max(span_start, start), end)
        if found >= 0:
            node.lines[key] = index.line(found)
        if chk["id"] == "hostname" and chk.get("finding"):
            node.facts["hostname"] = chk["finding"]
    return node


def _lines_of(text: str, start: int, end: int, keys: list[str], index: LineIndex) -> dict[str, int]:
    out = {}
    for key in keys:
        found = text.find(f'"{key}"', start, end)
        if found >= 0:
            out[key] = index.line(found)
    return out
