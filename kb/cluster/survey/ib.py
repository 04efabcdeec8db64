"""InfiniBand / RoCE devices and port states, from sysfs (printed like `ibstatus`) or `ibstat`.

The survey reads `/sys/class/infiniband/*/ports/*` itself, because `ibstat` is often
missing in containers while the kernel still exposes the HCA: the frequent failure
is then "device visible, userspace (`/dev/infiniband/uverbs*`, OFED) missing".
"""

from __future__ import annotations

import re
from typing import Any

SYSFS_SHELL = r"""
for p in /sys/class/infiniband/*/ports/*; do
  [ -d "$p" ] || continue
  d=${p%/ports/*}; d=${d##*/}; n=${p##*/}
  printf "Infiniband device '%s' port %s status:\n" "$d" "$n"
  printf '\tstate:\t\t %s\n' "$(cat "$p/state" 2>/dev/null)"
  printf '\tphys state:\t %s\n' "$(cat "$p/phys_state" 2>/dev/null)"
  printf '\trate:\t\t %s\n' "$(cat "$p/rate" 2>/dev/null)"
  printf '\tlink_layer:\t %s\n' "$(cat "$p/link_layer" 2>/dev/null)"
done
echo "@@part uverbs"
ls /dev/infiniband 2>&1
if command -v ibstat >/dev/null 2>&1 && [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
  echo "@@part ibstat"; ibstat 2>&1
fi
true
"""

_DEV = re.compile(r"^Infiniband device '(?P<dev>[^']+)' port (?P<port>\d+) status:")
_FIELD = re.compile(r"^\s+(?P<key>state|phys state|rate|link_layer):\s*(?P<val>.*?)\s*$")


def _strip_code(value: str) -> str:
    """`4: ACTIVE` -> `ACTIVE`; `5: LinkUp` -> `LinkUp`."""
    return re.sub(r"^\d+:\s*", "", value).strip()


def parse_ibstatus(text: str) -> list[dict[str, Any]]:
    """`ibstatus` output (and our sysfs listing, printed the same way)."""
    ports: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for line in text.splitlines():
        m = _DEV.match(line.strip())
        if m:
            cur = _new_port(m["dev"], int(m["port"]))
            ports.append(cur)
            continue
        f = _FIELD.match(line)
        if f and cur is not None:
            key = f["key"].replace(" ", "_")
            val = f["val"]
            cur[key] = _strip_code(val) if key in ("state", "phys_state") else val
    for p in ports:
        p["state"] = p["state"].upper()
    return ports


def _new_port(device: str, port: int) -> dict[str, Any]:
    """An IB port record with the fields both parsers fill."""
    return {
        "device": device,
        "port": port,
        "state": "",
        "phys_state": "",
        "rate": "",
        "link_layer": "",
    }


_CA = re.compile(r"^CA '(?P<dev>[^']+)'")
_PORT = re.compile(r"^\s+Port (?P<port>\d+):\s*$")
_KV = re.compile(r"^\s+(?P<key>State|Physical state|Rate|Link layer):\s*(?P<val>.*?)\s*$")


def parse_ibstat(text: str) -> list[dict[str, Any]]:
    """`ibstat` output: one entry per CA port."""
    ports: list[dict[str, Any]] = []
    dev = None
    cur: dict[str, Any] | None = None
    keys = {
        "State": "state",
        "Physical state": "phys_state",
        "Rate": "rate",
        "Link layer": "link_layer",
    }
    for line in text.splitlines():
        m = _CA.match(line)
        if m:
            dev, cur = m["dev"], None
            continue
        p = _PORT.match(line)
        if p and dev:
            cur = _new_port(dev, int(p["port"]))
            ports.append(cur)
            continue
        kv = _KV.match(line)
        if kv and cur is not None:
            cur[keys[kv["key"]]] = kv["val"]
    for port in ports:
        port["state"] = port["state"].upper()
        if port["rate"].isdigit():
            port["rate"] = f"{port['rate']} Gb/sec"
    return ports


def parse_ib_section(text: str) -> dict[str, Any]:
    """Our `ib` section: ports (sysfs or ibstat) and the verbs device nodes."""
    parts = split_parts(text)
    ports = parse_ibstatus(parts.get("", ""))
    if not ports and "ibstat" in parts:
        ports = parse_ibstat(parts["ibstat"])
    uverbs_text = parts.get("uverbs", "")
    nodes = [] if "No such file" in uverbs_text else uverbs_text.split()
    return {"ib_devices": ports, "ib_verbs_devices": nodes}


def split_parts(text: str) -> dict[str, str]:
    """Cut a section at `@@part NAME` lines; the text before the first is under ''."""
    parts: dict[str, list[str]] = {"": []}
    name = ""
    for line in text.splitlines():
        if line.startswith("@@part "):
            name = line[len("@@part ") :].strip()
            parts[name] = []
        else:
            parts[name].append(line)
    return {k: "\n".join(v) for k, v in parts.items()}


def active_ports(ports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in ports if p.get("state") == "ACTIVE"]
