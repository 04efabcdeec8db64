"""Which network interface NCCL, Gloo and Open MPI should use, computed from every node.

`NCCL_SOCKET_IFNAME` is one value for the whole job and NCCL reads it as a list of
name *prefixes* (`eth` matches eth0 and eth1; `^docker` excludes; a leading `=`
switches to exact names).  A prefix that matches a veth or docker0 on one node,
or nothing on another, breaks the job.  `GLOO_SOCKET_IFNAME` and Open MPI's
`btl_tcp_if_include` take exact names (Open MPI also takes a CIDR), so they get a
per-node value.  `advise()` finds a value that selects a physical NIC with a
routable address on every node and nothing else, preferring the network that
all nodes share, or says why none exists.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


def usable(iface: Mapping[str, Any]) -> bool:
    """A physical (or bond/VLAN/IPoIB) NIC that is up and has an address other nodes can reach."""
    return bool(not iface.get("virtual") and iface.get("up", True) and iface.get("routable"))


def nccl_matches(value: str, names: Sequence[str]) -> list[str]:
    """The names NCCL would accept for `NCCL_SOCKET_IFNAME=value` (prefixes, `^`, `=`)."""
    exclude = value.startswith("^")
    spec = value[1:] if exclude else value
    exact = spec.startswith("=")
    spec = spec[1:] if exact else spec
    items = [s.split(":")[0] for s in spec.split(",") if s]

    def hit(name: str) -> bool:
        return any(name == i if exact else name.startswith(i) for i in items)

    return [n for n in names if hit(n) != exclude]


def _networks(iface: Mapping[str, Any]) -> set[str]:
    nets = set()
    for addr in iface.get("routable") or []:
        try:
            nets.add(str(ipaddress.ip_interface(addr).network))
        except ValueError:
            continue
    return nets


def _hazard(iface: Mapping[str, Any]) -> bool:
    """NCCL lists every interface that has any address, link-local ones included."""
    return bool(iface.get("addresses"))


@dataclass
class Advice:
    ok: bool
    nccl_socket_ifname: str | None = None
    per_node: dict[str, dict[str, Any]] = field(default_factory=dict)
    shared_network: str | None = None
    explanation: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    nodes_without_nic: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "nccl_socket_ifname": self.nccl_socket_ifname,
            "per_node": self.per_node,
            "shared_network": self.shared_network,
            "explanation": list(self.explanation),
            "problems": list(self.problems),
            "nodes_without_nic": list(self.nodes_without_nic),
        }

    def commands(self) -> list[str]:
        """Shell lines that apply the advice (empty when there is none)."""
        if not self.ok or not self.nccl_socket_ifname:
            return []
        out = [f"export NCCL_SOCKET_IFNAME={self.nccl_socket_ifname}"]
        glo = {v["gloo_socket_ifname"] for v in self.per_node.values()}
        if len(glo) == 1:
            name = glo.pop()
            out += [
                f"export GLOO_SOCKET_IFNAME={name}",
                f"mpirun ... -mca btl_tcp_if_include {name} ...",
            ]
        elif self.shared_network:
            out.append(f"mpirun ... -mca btl_tcp_if_include {self.shared_network} ...")
        return out


def advise(nodes: Mapping[str, Sequence[Mapping[str, Any]]]) -> Advice:
    """The interface advice for a job spanning `nodes` (node -> its `interfaces` fact)."""
    good = {n: [i for i in ifaces if usable(i)] for n, ifaces in nodes.items()}
    missing = [n for n, g in good.items() if not g]
    if missing:
        return _none(nodes, missing)
    nets = {id(i): _networks(i) for g in good.values() for i in g}
    per_node_nets = {n: set().union(*(nets[id(i)] for i in g)) for n, g in good.items()}
    shared = set.intersection(*per_node_nets.values()) if per_node_nets else set()
    preferred = {n: [i for i in g if nets[id(i)] & shared] or list(g) for n, g in good.items()}
    ok_names = {n: {i["name"] for i in p} for n, p in preferred.items()}
    all_names = {
        n: [i["name"] for i in ifaces if _hazard(i) or i["name"] in ok_names[n]]
        for n, ifaces in nodes.items()
    }
    value = _pick(ok_names, all_names)
    if value is None:
        adv = Advice(
            False,
            problems=[
                "no single NCCL_SOCKET_IFNAME value selects a good NIC on every node without also "
                "selecting a bad one (the same name is a good NIC on one node and a virtual or "
                "unreachable one on another)"
            ],
        )
        adv.explanation.append(
            "Set NCCL_SOCKET_IFNAME per node instead (in /etc/nccl.conf or "
            "~/.nccl.conf on each node): "
            + ", ".join(f"{n}: ={sorted(v)[0]}" for n, v in ok_names.items())
        )
        return adv
    net = _shared_cidr(shared)
    adv = Advice(True, value, shared_network=net)
    for n in nodes:
        chosen = [nm for nm in nccl_matches(value, all_names[n]) if nm in ok_names[n]]
        first = next(i for i in preferred[n] if i["name"] == chosen[0])
        adv.per_node[n] = {
            "matches": chosen,
            "gloo_socket_ifname": chosen[0],
            "btl_tcp_if_include": chosen[0],
            "address": first["routable"][0],
            "kind": first.get("kind", ""),
        }
    adv.explanation = _explain(adv, nodes, shared)
    return adv


def _pick(ok: Mapping[str, set[str]], names: Mapping[str, list[str]]) -> str | None:
    """A prefix list (or an exact `=` list) that covers every node and touches nothing bad."""
    tokens: list[str] = []
    for n_ok in ok.values():
        for name in sorted(n_ok):
            stem = re.match(r"[A-Za-z]+", name)
            for t in ([stem.group(0)] if stem else []) + [name]:
                if t not in tokens:
                    tokens.append(t)

    def safe(value: str) -> bool:
        return all(set(nccl_matches(value, names[n])) <= ok[n] for n in ok)

    def covers(value: str, n: str) -> bool:
        return bool(set(nccl_matches(value, names[n])) & ok[n])

    for mark in ("", "="):  # prefixes first; exact names (`=`) when prefixes catch a bad NIC
        cands = [t for t in tokens if safe(mark + t)]
        for t in cands:  # one token for every node, stems first
            if all(covers(mark + t, n) for n in ok):
                return mark + t
        chosen: list[str] = []
        left = set(ok)
        while left:
            gains = {t: sum(covers(mark + t, n) for n in left) for t in cands}
            best = max(gains, key=lambda t: gains[t], default=None)
            if best is None or gains[best] == 0:
                break
            chosen.append(best)
            left -= {n for n in left if covers(mark + best, n)}
        if not left:
            return mark + ",".join(chosen)
    return None


def _shared_cidr(shared: set[str]) -> str | None:
    v4 = sorted(s for s in shared if ":" not in s)
    return v4[0] if v4 else (sorted(shared)[0] if shared else None)


def _explain(
    adv: Advice, nodes: Mapping[str, Sequence[Mapping[str, Any]]], shared: set[str]
) -> list[str]:
    value = adv.nccl_socket_ifname or ""
    out = [
        f"NCCL_SOCKET_IFNAME={value}: NCCL reads it as "
        + ("exact interface names" if value.startswith("=") else "name prefixes")
        + "; on every node it selects only "
        + "; ".join(
            f"{n}: {', '.join(v['matches'])} ({v['address']})" for n, v in adv.per_node.items()
        )
        + "."
    ]
    if adv.shared_network:
        out.append(f"All nodes have an address on {adv.shared_network}; the chosen NICs are on it.")
    else:
        out.append("The nodes share no subnet: make sure the chosen addresses route to each other.")
    skipped = sorted(
        {
            f"{i['name']} ({i.get('kind')})"
            for ifaces in nodes.values()
            for i in ifaces
            if i.get("virtual") and i.get("addresses")
        }
    )
    if skipped:
        out.append("Not used, because other nodes cannot reach them: " + "; ".join(skipped) + ".")
    names = {v["gloo_socket_ifname"] for v in adv.per_node.values()}
    if len(names) == 1:
        out.append(
            f"GLOO_SOCKET_IFNAME and Open MPI's btl_tcp_if_include take exact names: "
            f"{names.pop()} on every node."
        )
    else:
        out.append(
            "GLOO_SOCKET_IFNAME and btl_tcp_if_include take exact names, which differ "
            "between nodes: set them per node"
            + (
                f", or give Open MPI the network: -mca btl_tcp_if_include {adv.shared_network}"
                if adv.shared_network
                else ""
            )
            + "."
        )
    return out


def _none(nodes: Mapping[str, Sequence[Mapping[str, Any]]], missing: list[str]) -> Advice:
    adv = Advice(False, nodes_without_nic=list(missing))
    for n in missing:
        have = [
            f"{i['name']} ({i.get('why') or i.get('kind')})"
            for i in nodes[n]
            if i.get("addresses") and not usable(i)
        ]
        adv.problems.append(
            f"{n}: no physical NIC that is up with a routable address"
            + (f"; it has only {', '.join(have)}" if have else "")
            + ". Run the job with the host's network (docker --net=host) or "
            "give the node a reachable NIC."
        )
    adv.explanation.append(
        "No NCCL_SOCKET_IFNAME value can work while a node has no NIC that "
        "the other nodes can reach."
    )
    return adv


def check_setting(value: str, interfaces: Sequence[Mapping[str, Any]]) -> str | None:
    """What is wrong with a node's NCCL_SOCKET_IFNAME (None when it selects only good NICs)."""
    names = [i["name"] for i in interfaces if _hazard(i)]
    hits = nccl_matches(value, names)
    if not hits:
        return f"NCCL_SOCKET_IFNAME={value} matches no interface with an address on this node"
    bad = [i["name"] for i in interfaces if i["name"] in hits and not usable(i)]
    if bad:
        return f"NCCL_SOCKET_IFNAME={value} also selects {', '.join(bad)}, which other nodes cannot reach"
    return None


def to_markdown(adv: Advice) -> str:
    lines = ["### Network interface for NCCL, Gloo and Open MPI", ""]
    if adv.ok:
        lines += ["```bash", *adv.commands(), "```", ""]
        lines += [
            "| node | NCCL selects | GLOO_SOCKET_IFNAME | btl_tcp_if_include | address |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {n} | {', '.join(v['matches'])} | {v['gloo_socket_ifname']} | "
            f"{v['btl_tcp_if_include']} | {v['address']} |"
            for n, v in adv.per_node.items()
        ]
        lines.append("")
    else:
        lines += ["**No value works for every node.**", ""] + [f"- {p}" for p in adv.problems]
        lines.append("")
    lines += [f"- {e}" for e in adv.explanation]
    return "\n".join(lines) + "\n"
