"""The consistency table: facts as rows, nodes as columns, and which rows differ.

Most facts must be equal on every node (versions, drivers, OFED, limits, topology);
the hostname must differ; interfaces are shown but never compared (addresses
differ by design).  `build.build_report` turns the table into differences and, through
`kb.cluster.report.rules`, into causes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.cluster.report.load import Node
from kb.cluster.survey.facts import FACTS
from kb.cluster.survey.software import of_the_stack
from kb.sysinfo import ifadvice

UNIQUE = ("hostname",)
SHOWN = ("interfaces",)
# every other fact the survey reports must agree across nodes; the environment is
# compared variable by variable, and boot ids tell machines apart, so neither is here
SAME = tuple(f for f in FACTS if f not in (*UNIQUE, *SHOWN, "env", "boot_id"))


@dataclass
class Row:
    fact: str
    values: dict[str, Any]  # node -> raw value (None when unavailable)
    shown: dict[str, str]  # node -> text for a table cell
    policy: str  # "same", "unique" or "shown"
    differs: bool = False


@dataclass
class Report:
    nodes: list[str]
    sources: dict[str, str]
    rows: list[Row]
    causes: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    advice: ifadvice.Advice | None = None
    unreachable: list[dict[str, str]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)

    @property
    def differences(self) -> list[dict[str, Any]]:
        return [
            {"fact": r.fact, "values": {n: _plain(r.values[n]) for n in self.nodes}}
            for r in self.rows
            if r.differs
        ]

    @property
    def problem(self) -> bool:
        return bool(self.differences or self.causes or self.unreachable)

    @property
    def no_host_answered(self) -> str | None:
        """Why nothing can be compared (one line), when every node was unreachable."""
        if not self.nodes or len(self.unreachable) < len(self.nodes):
            return None
        first = self.unreachable[0]
        why = f" ({first['node']}: {first['error']})" if first["error"] else ""
        return f"no host answered: all {len(self.nodes)} node(s) were unreachable{why}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "nodes": list(self.nodes),
            "differences": self.differences,
            "causes": self.causes,
            "notes": self.notes,
            "facts": [
                {
                    "fact": r.fact,
                    "values": {n: _plain(r.values[n]) for n in self.nodes},
                    "differs": r.differs,
                }
                for r in self.rows
            ],
            "sources": dict(self.sources),
            "interface_advice": self.advice.to_json() if self.advice else None,
            "unreachable": list(self.unreachable),
        }
        if self.errors:
            out["errors"] = list(self.errors)
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return show(value)


def show(value: Any, fact: str = "") -> str:
    """A table cell for a fact value."""
    if value is None:
        return "n/a"
    if fact == "gpu_topology" or (isinstance(value, dict) and "matrix" in value):
        return str(value.get("summary") or "")
    if fact == "interfaces" or (
        isinstance(value, list) and value and isinstance(value[0], dict) and "routable" in value[0]
    ):
        parts = [
            f"{i['name']}{'*' if i.get('virtual') else ''}"
            + (f" {i['routable'][0]}" if i.get("routable") else "")
            for i in value
        ]
        return ", ".join(parts) if parts else "none"
    if isinstance(value, list) and value and isinstance(value[0], dict) and "device" in value[0]:
        return ", ".join(
            f"{p['device']}:{p['port']} {p.get('state', '')} {p.get('rate', '')}".strip()
            for p in value
        )
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def comparable(value: Any, fact: str) -> Any:
    """What equality means for a fact: ports by device and state, topology by its matrix."""
    if fact == "ib_devices" and isinstance(value, list):
        return sorted(
            (p.get("device"), p.get("port"), p.get("state"), p.get("rate"), p.get("link_layer"))
            for p in value
        )
    if fact == "gpu_topology" and isinstance(value, dict):
        return repr(sorted((a, sorted(r.items())) for a, r in (value.get("matrix") or {}).items()))
    if isinstance(value, list):
        return repr(sorted(map(str, value)))
    if isinstance(value, dict):
        return repr(sorted(value.items()))
    return value


def column_names(nodes: list[Node]) -> list[str]:
    """Node labels, made unique (two files that both say host 'vm' stay apart)."""
    names: list[str] = []
    for n in nodes:
        label = n.host
        if label in names:
            label = f"{n.host} [{Path(n.file).name}]"
        k = 2
        base = label
        while label in names:
            label, k = f"{base}#{k}", k + 1
        names.append(label)
    return names


def build_rows(nodes: list[Node], names: list[str]) -> list[Row]:
    facts: list[str] = []
    for n in nodes:
        for f in n.facts:
            if f not in facts and f != "env" and not f.startswith("check:"):
                facts.append(f)
    order = [f for f in (*UNIQUE, *SAME, *SHOWN) if f in facts]
    # only the stack's variables (a survey of an older version kept Terraform's TF_*)
    env_keys = sorted({k for n in nodes for k in (n.facts.get("env") or {}) if of_the_stack(k)})
    check_keys = sorted({k for n in nodes for k in n.facts if k.startswith("check:")})
    rows = []
    live = [name for name, n in zip(names, nodes, strict=True) if n.error is None or n.facts]
    for fact in [*order, *(f"env.{k}" for k in env_keys), *check_keys]:
        values = {name: _value(n, fact) for name, n in zip(names, nodes, strict=True)}
        policy = "unique" if fact in UNIQUE else "shown" if fact in SHOWN else "same"
        row = Row(fact, values, {k: show(v, fact) for k, v in values.items()}, policy)
        if policy == "same" and len(live) > 1:
            row.differs = len({repr(comparable(values[k], fact)) for k in live}) > 1
        rows.append(row)
    return rows


def _value(node: Node, fact: str) -> Any:
    if fact.startswith("env."):
        env = node.facts.get("env")
        return None if env is None else env.get(fact[4:])
    return node.facts.get(fact)


def answered(node: Node) -> bool:
    """Whether a node told us anything: an unreachable host whose checks all came back
    empty (`error`, `skipped`) is no node of the report, only a line saying so."""
    return node.error is None or any(v is not None for v in node.facts.values())
