"""Which nodes to check, from the ways people already write host lists.

`--host [user@]name[:port]` (`:N` is the SSH port; `[v6addr]:port` for IPv6), `-H
h1:4,h2:4` and MPI hostfiles (`node1 slots=8`; there `:N` means slots, as in mpirun),
Slurm expressions such as `gpu[01-04]` (expanded by python-hostlist, the library Slurm
sites use), then `~/.ssh/config` for aliases, HostName, Port, User, IdentityFile and
ProxyJump, as `ssh` itself would.  Every name, user and port is checked against a
strict pattern here, because they end up in commands run on the nodes.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.util.errors import UserError

HOSTNAME = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?$")
USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}\$?$")
IFACE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,14}$")
MAX_EXPANSION = 10_000


@dataclass(frozen=True)
class HostSpec:
    """One node as written by the user, before ~/.ssh/config is applied."""

    name: str
    user: str | None = None
    port: int | None = None
    slots: int | None = None
    label: str = ""  # how to show it: the user's own words ([user@]name[:port])


@dataclass
class Target:
    """One node, ready to connect to."""

    label: str
    user: str
    hostname: str
    port: int = 22
    identity_files: list[Path] = field(default_factory=list)
    identities_only: bool = False
    proxy_jump: Target | None = None
    proxy_command: str | None = None
    host_key_alias: str | None = None
    slots: int | None = None


# ---------------------------------------------------------------- validation


def is_host(value: str) -> bool:
    """A DNS name or an IPv4/IPv6 address, nothing a shell could read twice."""
    try:
        ipaddress.ip_address(value)
        return True
    except ValueError:
        return bool(HOSTNAME.match(value)) and ".." not in value


def check_host(value: str, where: str) -> str:
    if not is_host(value):
        raise UserError(f"'{value}' is not a host name or address", where)
    return value


def check_user(value: str, where: str) -> str:
    if not USER.match(value):
        raise UserError(f"'{value}' is not a valid user name", where)
    return value


def check_port(value: str | int, where: str, what: str = "port") -> int:
    try:
        port = int(value)
    except (TypeError, ValueError):
        raise UserError(f"{what} '{value}' is not a number", where) from None
    if not 1 <= port <= 65535:
        raise UserError(f"{what} {port} is out of range (1-65535)", where)
    return port


def is_iface(value: str) -> bool:
    return bool(IFACE.match(value))


# ---------------------------------------------------------------- parsing


def expand(name: str, where: str) -> list[str]:
    """A Slurm-style expression (`gpu[01-04]`, `a,b[1-2]`) as names; a plain name as itself."""
    if "[" not in name and "," not in name:
        return [name]
    import hostlist

    try:
        names = hostlist.expand_hostlist(name)
    except hostlist.BadHostlist as exc:
        raise UserError(f"bad host list '{name}' ({exc})", where) from None
    if len(names) > MAX_EXPANSION:
        raise UserError(f"'{name}' expands to {len(names)} hosts (limit {MAX_EXPANSION})", where)
    return list(names)


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets: `gpu[01,03]:4,cpu1` -> [`gpu[01,03]:4`, `cpu1`]."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in [*parts, cur] if p.strip()]


def parse_host(text: str, where: str = "--host") -> list[HostSpec]:
    """`[user@]name[:port]`, where name may be a Slurm expression or `[ipv6]`."""
    user = None
    rest = text.strip()
    if "@" in rest:
        user, rest = rest.rsplit("@", 1)
        check_user(user, where)
    port = None
    bracket = re.fullmatch(r"\[([0-9A-Fa-f:.%]+)\](?::(\d+))?", rest)
    if bracket and ":" in bracket.group(1):
        names = [bracket.group(1)]
        port = check_port(bracket.group(2), where) if bracket.group(2) else None
    elif rest.count(":") > 1:  # a bare IPv6 address: no port
        names = [rest]
    else:
        name, sep, port_text = rest.rpartition(":") if ":" in rest else (rest, "", "")
        port = check_port(port_text, where) if sep else None
        names = expand(name, where)
    out = []
    for name in names:
        check_host(name, where)
        label = (f"{user}@" if user else "") + (name if ":" not in name else f"[{name}]")
        label += f":{port}" if port else ""
        out.append(HostSpec(name, user, port, None, label))
    return out


def parse_slots_list(text: str, where: str = "-H") -> list[HostSpec]:
    """mpirun/horovodrun `-H h1:4,h2:4`: `:N` is slots; names may be Slurm expressions."""
    out = []
    for item in _split_top(text):
        name, slots = item, None
        m = re.fullmatch(r"(.+?):(\d+)", item)
        if m and "]" not in m.group(2):
            name, slots = m.group(1), check_port(m.group(2), where, "slots")
        for host in expand(name, where):
            out.append(HostSpec(check_host(host, where), None, None, slots, host))
    return out


def parse_hostfile(path: Path) -> list[HostSpec]:
    """An MPI hostfile (`node1 slots=8 max_slots=8`, `node1:8`) or one host per line."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UserError(f"cannot read the hostfile ({exc.strerror})", str(path)) from None
    out: list[HostSpec] = []
    for number, raw in enumerate(text.splitlines(), 1):
        where = f"{path}:{number}"
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        first, *options = line.split()
        slots = None
        for opt in options:
            key, sep, value = opt.partition("=")
            if not sep or key.replace("-", "_") not in ("slots", "max_slots"):
                raise UserError(f"unexpected '{opt}' (expected slots=N or max_slots=N)", where)
            if key == "slots":
                slots = check_port(value, where, "slots")
        user = None
        if "@" in first:
            user, first = first.rsplit("@", 1)
            check_user(user, where)
        specs = parse_slots_list(first, where)
        out += [
            HostSpec(s.name, user, None, slots or s.slots, (f"{user}@" if user else "") + s.name)
            for s in specs
        ]
    return out


# ---------------------------------------------------------------- ~/.ssh/config


def targets(
    specs: Iterable[HostSpec],
    lookup: Callable[[str], dict[str, Any]] | None,
    default_port: int | None,
    default_user: str,
) -> list[Target]:
    """Apply ~/.ssh/config (`lookup`) and defaults; drop repeated labels, keep order."""
    seen: dict[str, Target] = {}
    for spec in specs:
        if spec.label not in seen:
            seen[spec.label] = _target(spec, lookup, default_port, default_user, 0)
    return list(seen.values())


def _target(
    spec: HostSpec,
    lookup: Callable[[str], dict[str, Any]] | None,
    default_port: int | None,
    default_user: str,
    depth: int,
) -> Target:
    where = f"host {spec.label}"
    if depth > 8:
        raise UserError("ProxyJump chain longer than 8 hops (a loop in the SSH config?)", where)
    cfg = lookup(spec.name) if lookup else {}
    hostname = check_host(str(cfg.get("hostname", spec.name)), where + " (HostName)")
    port = spec.port or default_port or check_port(cfg.get("port", 22), where + " (Port)")
    user = spec.user or check_user(str(cfg.get("user", default_user)), where + " (User)")
    jump = None
    proxy = str(cfg.get("proxyjump", "none"))
    if proxy.lower() != "none":
        hops = [h for p in _split_top(proxy) for h in parse_host(p, where + " (ProxyJump)")]
        for hop in hops:
            prev = jump
            jump = _target(hop, lookup, None, default_user, depth + 1)
            if prev is not None:
                jump.proxy_jump = prev
    command = cfg.get("proxycommand")
    return Target(
        label=spec.label,
        user=user,
        hostname=hostname,
        port=port,
        identity_files=[Path(p).expanduser() for p in cfg.get("identityfile", [])],
        identities_only=str(cfg.get("identitiesonly", "no")).lower() == "yes",
        proxy_jump=jump,
        proxy_command=None if command in (None, "none") else str(command),
        host_key_alias=cfg.get("hostkeyalias"),
        slots=spec.slots,
    )


def load_config(path: Path | None) -> Callable[[str], dict[str, Any]] | None:
    """The lookup of `path`, or of ~/.ssh/config when it exists (None: no config)."""
    explicit = path is not None
    path = path or Path.home() / ".ssh" / "config"
    if not path.is_file():
        if explicit and str(path) != "/dev/null":
            raise UserError("no such SSH config file", str(path))
        return None
    from kb.runners.sshconfig import load_ssh_config

    try:
        return load_ssh_config(path)
    except (OSError, ValueError) as exc:
        raise UserError(str(exc)) from None
