"""Which machines the NCCL processes run on, and what their interfaces say.

NCCL decides which ranks share a node from the hostname (a hash of it), and which
interfaces carry bootstrap and socket traffic from its `Using` lists. From the map that
`nccl_lines` builds, this tells:
- how many nodes the job spans (facts for the other judgements);
- a socket interface list that holds virtual interfaces (bridges, veth, docker0, lo)
  next to real ones, or a virtual interface or shared address across nodes
  -> nccl-wrong-interface;
- two machines that NCCL took for one: one hostname with two addresses; `localhost`
  (or one name) on the ranks of a job the launcher spread over several hosts; two ranks
  on one GPU inside what NCCL joined as one node by P2P/SHM -> duplicate-hostname.
"""

from __future__ import annotations

import re

from kb.diagnosis.analyzers.base import Finding
from kb.diagnosis.analyzers.nccl_lines import Channel, State
from kb.diagnosis.model import Evidence

VIRTUAL_IFACE = re.compile(r"^(?:veth|docker|virbr|cni|flannel|br-|vxlan|tun|tap|ifb|lo$)")
_LOCALHOST = re.compile(r"^localhost(?:\.localdomain)?$", re.IGNORECASE)


def _loopback(addr: str) -> bool:
    return addr.startswith(("127.", "::1"))


def machines(s: State) -> set[tuple[str, str | None]]:
    """(hostname, address) of every process whose hostname is known."""
    return {(p.host, p.addr) for p in s.procs.values() if p.host}


def node_facts(s: State) -> tuple[list[str], list[str]]:
    """Why the job looks multi-node, and why it looks single-node (either may be empty)."""
    multi: list[str] = []
    single: list[str] = []
    hosts = {p.host for p in s.procs.values() if p.host}
    if len(hosts) > 1 and len(machines(s)) > 1:
        multi.append(f"NCCL processes run on {len(hosts)} hosts")
    for comm, n in s.nnodes.items():
        if n > 1:
            multi.append(f"NCCL reports nNodes {n}")
        elif n == 1 and comm is not None:
            single.append("NCCL reports nNodes 1")
    channel_hosts = {s.procs[ch.proc].host for ch in s.channels}
    if (
        len(channel_hosts) == 1
        and "" not in channel_hosts
        and not any(ch.via.startswith(("NET", "COLLNET")) for ch in s.channels)
    ):
        single.append(f"NCCL joins every rank on {next(iter(channel_hosts))} by P2P/SHM")
    tests = {h for (comm, _), (h, _) in s.ranks.items() if comm == "nccl-tests"}
    tested = sum(1 for comm, _ in s.ranks if comm == "nccl-tests")
    if len(tests) == 1 and tested > 1:
        single.append(f"all {tested} nccl-tests ranks run on {next(iter(tests))}")
    return multi, single


def interface_findings(s: State, multi_node: bool, single_node: bool) -> list[Finding]:
    out: list[Finding] = []
    mixed = [
        lst
        for lst in s.lists
        if len(lst.ifaces) > 1 and any(VIRTUAL_IFACE.match(i) for i, _, _ in lst.ifaces)
    ]
    if mixed and not single_node:
        lst = mixed[0]
        listed = [(i, a, e) for i, a, e in lst.ifaces if VIRTUAL_IFACE.match(i)]
        names = ", ".join(i for i, _, _ in listed[:4]) + (", ..." if len(listed) > 4 else "")
        out.append(
            Finding(
                "socket-list-with-virtual-interfaces",
                "socket-list-with-virtual-interfaces",
                0.55,
                f"NCCL's {lst.kind} list holds {len(listed)} virtual interface(s) ({names}) "
                f"beside real ones: traffic to other nodes through them cannot arrive",
                [lst.ifaces[0][2], *(e for _, _, e in listed[:2])],
                {"iface": listed[0][0], "address": listed[0][1]},
            )
        )
        return out
    virtual = [(h, i, a, ev) for h, i, a, ev in s.ifaces if VIRTUAL_IFACE.match(i)]
    if multi_node and virtual:
        h, i, a, _ = virtual[0]
        out.append(
            Finding(
                "virtual-interface-across-nodes",
                "virtual-interface-across-nodes",
                0.75,
                f"a multi-node job uses the virtual interface {i} ({a}) on {h}",
                [v[3] for v in virtual[:3]],
                {"iface": i, "address": a, "host": h},
            )
        )
    elif multi_node:
        by_addr: dict[str, set[str]] = {}
        for h, _i, a, _ev in s.ifaces:
            if h:
                by_addr.setdefault(a, set()).add(h)
        shared = [a for a, hs in by_addr.items() if len(hs) > 1]
        if shared:
            ev = [x[3] for x in s.ifaces if x[2] == shared[0]][:3]
            out.append(
                Finding(
                    "address-shared-by-hosts",
                    "address-shared-by-hosts",
                    0.8,
                    f"different hosts use the same address {shared[0]}: NCCL picked an "
                    "interface (a bridge or loopback) that is not the nodes' real network",
                    ev,
                    {"address": shared[0]},
                )
            )
    return out


def duplicate_hostname_findings(s: State, launcher_hosts: set[str]) -> list[Finding]:
    for judge in (_two_addresses, _one_gpu_twice):
        found = judge(s)
        if found is not None:
            return [found]
    found = _localhost(s, launcher_hosts)
    return [found] if found is not None else []


def _two_addresses(s: State) -> Finding | None:
    """One hostname whose processes use two addresses on one interface: two machines."""
    seen: dict[tuple[str, str], dict[str, Evidence]] = {}
    for host, iface, addr, ev in s.ifaces:
        if host and not _loopback(addr):
            seen.setdefault((host, iface), {}).setdefault(addr, ev)
    for (host, iface), addrs in sorted(seen.items()):
        if len(addrs) > 1:
            a, b = sorted(addrs)[:2]
            return Finding(
                "one-hostname-two-addresses",
                "one-hostname-two-addresses",
                0.8,
                f"processes on '{host}' use two addresses on {iface} ({a}, {b}): two "
                "machines share the hostname, so NCCL takes them for one node",
                [addrs[a], addrs[b]],
                {"host": host, "address_a": a, "address_b": b},
            )
    return None


def _intra(ch: Channel) -> bool:
    return not ch.via.startswith(("NET", "COLLNET"))


def _groups(s: State, channels: list[Channel]) -> dict[int, int] | None:
    """Rank -> a representative of its node as NCCL sees it (the ranks whose processes
    print one hostname, and the ranks it joins to them by P2P/SHM); None when the
    channels give a rank two devices (several communicators mixed)."""
    dev: dict[int, str] = {}
    for ch in channels:
        for rank, d in ((ch.a, ch.dev_a), (ch.b, ch.dev_b)):
            if d and dev.setdefault(rank, d) != d:
                return None
    parent = {r: r for r in dev}

    def root(r: int) -> int:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    by_host: dict[str, int] = {}
    for ch in channels:
        host = _host_of(s, ch)
        if host and ch.printer in parent:
            parent[root(ch.printer)] = root(by_host.setdefault(host, ch.printer))
        if _intra(ch) and ch.a in parent and ch.b in parent:
            parent[root(ch.a)] = root(ch.b)
    return {r: root(r) for r in dev}


def _host_of(s: State, ch: Channel) -> str:
    """The hostname of the rank that printed the channel line ("" when unclear)."""
    if ch.printer is None:
        return ""
    known = s.ranks.get((ch.comm, ch.printer))
    proc = s.procs.get(known) if known else s.procs.get(ch.proc)
    return proc.host if proc else ""


def _one_gpu_twice(s: State) -> Finding | None:
    """Two ranks on one GPU inside a group that NCCL joined by P2P/SHM (its idea of one
    node): the group spans two machines that NCCL could not tell apart."""
    by_comm: dict[str | None, list[Channel]] = {}
    for ch in s.channels:
        by_comm.setdefault(ch.comm, []).append(ch)
    for channels in by_comm.values():
        hosts = {s.procs[ch.proc].host for ch in channels}
        group = _groups(s, channels)
        dev = {r: d for ch in channels for r, d in ((ch.a, ch.dev_a), (ch.b, ch.dev_b)) if d}
        if group is None or len(hosts) != 1 or len(set(dev.values())) < 2:
            continue  # one device everywhere: each rank sees only its own GPU
        seen: dict[tuple[int, str], int] = {}
        for r in sorted(group):
            other = seen.setdefault((group[r], dev[r]), r)
            if other == r:
                continue
            ev = [c.ev for c in channels if _intra(c) and r in (c.a, c.b)][:1]
            ev += [c.ev for c in channels if _intra(c) and other in (c.a, c.b)][:1]
            host = next(iter(hosts))
            return Finding(
                "two-ranks-one-gpu-in-one-node",
                "two-ranks-one-gpu-in-one-node",
                0.8,
                f"ranks {other} and {r} both use GPU [{dev[r]}] on what NCCL takes for "
                f"one node '{host}' and joins by P2P/SHM: two machines share the hostname",
                ev,
                {"host": host},
            )
    return None


def _localhost(s: State, launcher_hosts: set[str]) -> Finding | None:
    """Every NCCL process calls its host `localhost` in a job that the launcher spread
    over several hosts."""
    hosts = {p.host for p in s.procs.values() if p.host}
    if len(hosts) != 1 or len(launcher_hosts) < 2:
        return None
    host = next(iter(hosts))
    if not _LOCALHOST.match(host):
        return None
    ev = [e for h, _i, _a, e in s.ifaces if h == host][:2]
    ev += [p.version[1] for p in s.procs.values() if p.version][:1]
    if not ev:
        ev = [c.ev for c in s.channels][:1]
    return Finding(
        "one-hostname-on-several-hosts",
        "one-hostname-on-several-hosts",
        0.75,
        f"the launcher starts ranks on {len(launcher_hosts)} hosts "
        f"({', '.join(sorted(launcher_hosts)[:4])}) but every NCCL process calls its host "
        f"'{host}': NCCL takes them all for one node",
        ev,
        {"host": host},
    )
