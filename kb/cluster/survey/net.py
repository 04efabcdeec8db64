"""Network interfaces with their addresses, each flagged physical or virtual, and why.

NCCL, Gloo and Open MPI pick a NIC by name; a node with a veth, docker0 or virbr0
can hand them an address the other nodes cannot reach.  Names can lie (a
container's `eth0` is one end of a veth pair), so sysfs is asked too: a real NIC
sits under a bus (`/sys/devices/pci.../net/eth0`), a virtual one under
`/sys/devices/virtual/net/`.  Without `ip`, addresses come from `/proc/net`.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
import socket
import struct
from dataclasses import dataclass, field
from typing import Any

from kb.cluster.survey.ib import split_parts

SHELL = r"""
if command -v ip >/dev/null 2>&1; then echo "@@part ip"; ip addr show 2>&1
else
  echo "@@part route"; cat /proc/net/route 2>/dev/null
  echo "@@part if_inet6"; cat /proc/net/if_inet6 2>/dev/null
  echo "@@part fib_trie"; head -n 4000 /proc/net/fib_trie 2>/dev/null
fi
echo "@@part sys"
for d in /sys/class/net/*; do
  n=${d##*/}
  printf '%s|%s|%s|%s|%s|%s\n' "$n" "$(readlink -f "$d")" "$(cat "$d/operstate" 2>/dev/null)" \
    "$(cat "$d/type" 2>/dev/null)" "$(sed -n 's/^DEVTYPE=//p' "$d/uevent" 2>/dev/null)" \
    "$(cat "$d/address" 2>/dev/null)"
done
true
"""

# Names that container engines, hypervisors, overlays and traffic shaping create.
VIRTUAL_PREFIXES = (
    ("veth", "veth"),
    ("docker", "docker bridge"),
    ("br-", "docker network bridge"),
    ("virbr", "libvirt bridge"),
    ("cni", "CNI bridge"),
    ("flannel", "flannel overlay"),
    ("cali", "Calico"),
    ("tunl", "IP-in-IP tunnel"),
    ("vxlan", "VXLAN overlay"),
    ("weave", "Weave overlay"),
    ("kube-", "Kubernetes"),
    ("cilium", "Cilium"),
    ("lxcbr", "LXC bridge"),
    ("lxdbr", "LXD bridge"),
    ("podman", "podman bridge"),
    ("ifb", "traffic-shaping (ifb)"),
    ("dummy", "dummy"),
    ("vnet", "VM tap"),
    ("tap", "tap"),
    ("tun", "tunnel"),
    ("genev_sys", "Geneve overlay"),
    ("nodelocaldns", "Kubernetes DNS"),
)
AGGREGATE_DEVTYPES = {"bond": "bond", "team": "team", "vlan": "VLAN", "bridge": "bridge"}


@dataclass
class Iface:
    name: str
    state: str = ""
    flags: list[str] = field(default_factory=list)
    mtu: int | None = None
    mac: str = ""
    link: str = ""  # ether / infiniband / loopback / none
    master: str = ""
    peer: str = ""  # what follows `@` in `ip` output: the other end of a veth
    addresses: list[str] = field(default_factory=list)
    scopes: dict[str, str] = field(default_factory=dict)
    sys_path: str = ""
    devtype: str = ""
    arphrd: int | None = None


_HEAD = re.compile(r"^(?P<idx>\d+):\s+(?P<name>[^\s:@]+)(?:@(?P<peer>[^\s:]+))?:?\s+(?P<rest>.*)$")
_ADDR = re.compile(r"^(?P<fam>inet6?)\s+(?P<addr>\S+)(?:.*?\bscope\s+(?P<scope>\w+))?")


def parse_ip_addr(text: str) -> dict[str, Iface]:
    """`ip addr show` (also `ip -o addr`, `ip -o link`), as printed or pasted."""
    ifaces: dict[str, Iface] = {}
    cur: Iface | None = None
    lines: list[str] = []
    for raw in text.splitlines():
        lines.extend(part for part in raw.split("\\") if part.strip())  # `-o` joins with '\'
    for raw in lines:
        line = raw.strip()
        m = _HEAD.match(line)
        if m:
            cur = ifaces.setdefault(m["name"], Iface(m["name"]))
            if m["peer"]:
                cur.peer = m["peer"]
            line = m["rest"]
            if line.startswith("<"):
                _read_link_header(cur, line)
                continue
        if cur is None:
            continue
        if line.startswith("link/"):
            kind, _, rest = line.partition(" ")
            cur.link = kind[len("link/") :]
            cur.mac = rest.split()[0] if rest.split() else ""
            continue
        a = _ADDR.match(line)
        if a:
            addr = a["addr"]
            if "/" not in addr:
                addr += "/32" if a["fam"] == "inet" else "/128"
            if addr not in cur.addresses:
                cur.addresses.append(addr)
                cur.scopes[addr] = a["scope"] or ""
    return ifaces


def _read_link_header(cur: Iface, line: str) -> None:
    flags, _, rest = line[1:].partition(">")
    cur.flags = [f for f in flags.split(",") if f]
    words = rest.split()
    for key, value in itertools.pairwise(words):
        if key == "mtu" and value.isdigit():
            cur.mtu = int(value)
        elif key == "state":
            cur.state = value
        elif key == "master":
            cur.master = value


def parse_sys_net(text: str) -> dict[str, dict[str, Any]]:
    """Our sysfs lines (`name|path|operstate|type|devtype|mac`) or an `ls -l /sys/class/net`."""
    out: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        if line.count("|") >= 4:
            name, path, oper, typ, devtype, *rest = line.split("|")
            out[name] = {
                "path": path,
                "operstate": oper,
                "type": int(typ) if typ.isdigit() else None,
                "devtype": devtype,
                "mac": rest[0] if rest else "",
            }
            continue
        m = re.search(r"\s(?P<name>[^\s/]+) -> (?P<path>\S*devices/\S+)$", line)
        if m:
            out.setdefault(m["name"], {}).update(path=m["path"])
            continue
        m2 = re.match(r"^(?P<name>\S+) operstate=(?P<op>\S*) mtu=\S* type=(?P<type>\d*)", line)
        if m2:
            info = out.setdefault(m2["name"], {})
            info.update(operstate=m2["op"], type=int(m2["type"]) if m2["type"] else None)
    return out


def parse_proc_net(route: str, if_inet6: str, fib_trie: str) -> dict[str, Iface]:
    """Addresses without `ip`: IPv4 from the FIB's local /32 entries mapped onto routes."""
    ifaces: dict[str, Iface] = {}
    routes: list[tuple[str, ipaddress.IPv4Network]] = []
    for line in route.splitlines()[1:]:
        cells = line.split()
        if len(cells) >= 8:
            try:
                dest = socket.inet_ntoa(struct.pack("<I", int(cells[1], 16)))
                mask = socket.inet_ntoa(struct.pack("<I", int(cells[7], 16)))
                net = ipaddress.IPv4Network(f"{dest}/{mask}", strict=False)
            except (ValueError, struct.error):
                continue
            ifaces.setdefault(cells[0], Iface(cells[0]))
            if net.prefixlen:
                routes.append((cells[0], net))
    locals_: list[str] = []
    lines = fib_trie.splitlines()
    for prev, line in itertools.pairwise(lines):
        m = re.match(r"^\s*\|-- (\d+\.\d+\.\d+\.\d+)$", prev)
        if m and line.strip() == "/32 host LOCAL" and m[1] not in locals_:
            locals_.append(m[1])
    for addr in locals_:
        ip = ipaddress.IPv4Address(addr)
        if ip.is_loopback:
            ifaces.setdefault("lo", Iface("lo")).addresses.append(f"{addr}/8")
            continue
        best = max((r for r in routes if ip in r[1]), key=lambda r: r[1].prefixlen, default=None)
        if best:
            cidr = f"{addr}/{best[1].prefixlen}"
            ifaces[best[0]].addresses.append(cidr)
            ifaces[best[0]].scopes[cidr] = "global"
    scope_names = {"00": "global", "20": "link", "10": "host", "40": "site"}
    for line in if_inet6.splitlines():
        cells = line.split()
        if len(cells) == 6 and len(cells[0]) == 32:
            addr = str(ipaddress.IPv6Address(bytes.fromhex(cells[0])))
            cidr = f"{addr}/{int(cells[2], 16)}"
            iface = ifaces.setdefault(cells[5], Iface(cells[5]))
            iface.addresses.append(cidr)
            iface.scopes[cidr] = scope_names.get(cells[3], cells[3])
    return ifaces


def classify(it: Iface) -> tuple[str, bool, str]:
    """(kind, virtual, why) for one interface."""
    path = it.sys_path
    if it.name == "lo" or it.link == "loopback" or it.arphrd == 772 or "LOOPBACK" in it.flags:
        return "loopback", True, "loopback: only reaches this node"
    for prefix, label in VIRTUAL_PREFIXES:
        if it.name.startswith(prefix) and (
            prefix != "br-" or re.fullmatch(r"br-[0-9a-f]{12}", it.name)
        ):
            return prefix.rstrip("-"), True, f"{label} interface (virtual, by its name)"
    dev_kind = AGGREGATE_DEVTYPES.get(it.devtype)
    if dev_kind is None:
        if re.fullmatch(r"bond\d+", it.name):
            dev_kind = "bond"
        elif re.fullmatch(r"\S+\.\d+", it.name):
            dev_kind = "VLAN"
    if dev_kind:
        return dev_kind.lower(), False, f"{dev_kind} over physical NICs"
    if it.peer and (it.peer.startswith("if") or "/devices/virtual/" in path):
        return (
            "veth",
            True,
            (
                f"one end of a veth pair (peer {it.peer}): a container's "
                f"network, not a NIC other nodes can reach directly"
            ),
        )
    if "/devices/virtual/" in path:
        return "virtual", True, "a software device (sysfs: /sys/devices/virtual/net)"
    if path:
        kind = "ipoib" if (it.link == "infiniband" or it.arphrd == 32) else "physical"
        return kind, False, "a NIC on a bus (sysfs: " + path.split("/net/")[0] + ")"
    if it.link == "infiniband" or it.name.startswith("ib"):
        return "ipoib", False, "IP over InfiniBand (by its link type; sysfs not read)"
    return "physical", False, "assumed physical (name and link type; sysfs not read)"


def routable(addr: str, scope: str = "") -> bool:
    """An address another node can use: not loopback, not link-local."""
    try:
        ip = ipaddress.ip_interface(addr).ip
    except ValueError:
        return False
    if scope in ("host", "link"):
        return False
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)


def is_up(it: Iface) -> bool:
    if it.flags:
        return "UP" in it.flags and ("LOWER_UP" in it.flags or it.state in ("UP", "UNKNOWN"))
    return it.state.upper() in ("UP", "UNKNOWN", "")


def parse_net_section(text: str) -> list[dict[str, Any]]:
    """Our `net` section -> the `interfaces` fact."""
    parts = split_parts(text)
    sysinfo = parse_sys_net(parts.get("sys", ""))
    if "ip" in parts:
        ifaces = parse_ip_addr(parts["ip"])
    else:
        ifaces = parse_proc_net(
            parts.get("route", ""), parts.get("if_inet6", ""), parts.get("fib_trie", "")
        )
        for name in sysinfo:
            ifaces.setdefault(name, Iface(name))
    return interfaces_fact(ifaces, sysinfo)


def interfaces_fact(
    ifaces: dict[str, Iface], sysinfo: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    out = []
    for it in ifaces.values():
        info = sysinfo.get(it.name, {})
        it.sys_path = it.sys_path or info.get("path", "")
        it.devtype = it.devtype or info.get("devtype", "")
        it.arphrd = it.arphrd if it.arphrd is not None else info.get("type")
        it.mac = it.mac or info.get("mac", "")
        if not it.state and info.get("operstate"):
            it.state = str(info["operstate"]).upper()
        kind, virtual, why = classify(it)
        good = [a for a in it.addresses if routable(a, it.scopes.get(a, ""))]
        out.append(
            {
                "name": it.name,
                "kind": kind,
                "virtual": virtual,
                "state": it.state or "",
                "up": is_up(it),
                "mac": it.mac,
                "mtu": it.mtu,
                "master": it.master or None,
                "addresses": list(it.addresses),
                "routable": good,
                "why": why,
            }
        )
    return out
