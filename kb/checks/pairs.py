"""Node-to-node probes: can every node SSH to every other, route to it, ping it with big packets.

The failures in the user's notes happen *between* nodes (horovodrun/mpirun log in from
node to node with `BatchMode`, NCCL connects node to node), so checking from the
laptop is not enough.  Each node gets one command per probe that tries all its peers,
a few at a time (sshd's MaxStartups drops bursts of new connections, so the peers are
also visited in a rotated order per node), and prints one tagged line per peer that is
parsed back here.  Every peer value comes from a validated `Target` and is shell-quoted.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

AT_ONCE = 4  # peers probed at the same time from one node (at least; more for many peers)
PROBE_BUDGET = 45.0  # seconds a whole probe may take: the caller's deadline is 60 s


@dataclass(frozen=True)
class Peer:
    index: int
    label: str
    user: str
    host: str
    port: int  # the job's SSH port on that peer


def rotated(peers: list[Peer], me: int) -> list[Peer]:
    """Peers other than `me`, starting after it, so nodes do not all hit the same peer first."""
    others = [p for p in peers if p.index != me]
    cut = sum(1 for p in others if p.index < me)
    return others[cut:] + others[:cut]


def at_once(peers: int, worst: float, budget: float = PROBE_BUDGET) -> int:
    """How many peers to probe at a time so that every group, each as slow as `worst`
    seconds, fits the budget: with 32 nodes, 4 at a time took 88 s and the whole probe
    timed out on every node."""
    groups = max(1, int(budget // max(worst, 0.1)))
    return max(AT_ONCE, -(-peers // groups))


def _in_groups(lines: list[str], size: int = AT_ONCE) -> list[str]:
    out = []
    for i, line in enumerate(lines, 1):
        out.append(line + " &")
        if i % size == 0:
            out.append("wait")
    return [*out, "wait"]


def ssh_probe(peers: list[Peer], connect_timeout: int = 5) -> str:
    """From one node: `ssh -o BatchMode=yes -p PORT user@peer true` to every peer."""
    q = shlex.quote
    head = [
        "command -v ssh >/dev/null 2>&1 || { echo NOSSH; exit 0; }",
        "_p() { for _try in 1 2; do "
        f"_o=$(ssh -n -o BatchMode=yes -o ConnectTimeout={connect_timeout} -o LogLevel=ERROR "
        '-p "$3" -l "$2" -- "$4" true 2>&1 </dev/null); _r=$?; '
        'case "$_o" in *kex_exchange_identification*|*"Connection closed"*|*"Connection reset"*) '
        "sleep 1;; *) break;; esac; done; "
        "printf 'PEER %s %s %s\\n' \"$1\" \"$_r\" \"$(printf '%s' \"$_o\" | tr '\\r\\n' '  ' "
        '| cut -c1-300)"; }',
    ]
    calls = [f"_p {p.index} {q(p.user)} {p.port} {q(p.host)}" for p in peers]
    size = at_once(len(calls), 2 * connect_timeout + 1)  # two tries and a pause
    return "\n".join(head + _in_groups(calls, size))


SSH_ERRORS = [
    ("refused", re.compile(r"Connection refused")),
    ("timeout", re.compile(r"timed out", re.I)),
    (
        "host-key",
        re.compile(
            r"Host key verification failed|HOST IDENTIFICATION HAS CHANGED|"
            r"host key is known|No \S+ host key is known"
        ),
    ),
    ("auth", re.compile(r"Permission denied|Too many authentication failures")),
    ("dns", re.compile(r"Could not resolve hostname|Name or service not known")),
    ("unreachable", re.compile(r"No route to host|Network is unreachable")),
    ("closed", re.compile(r"kex_exchange_identification|Connection closed|Connection reset")),
]


def ssh_status(code: int, message: str) -> str:
    if code == 0:
        return "ok"
    for status, rx in SSH_ERRORS:
        if rx.search(message):
            return status
    return "failed"


def parse_lines(output: str, tag: str, peers: list[Peer]) -> dict[str, tuple[int, str]]:
    """`TAG index code message` lines -> {peer label: (code, message)}."""
    by_index = {p.index: p for p in peers}
    out = {}
    for line in output.splitlines():
        parts = line.split(" ", 3)
        if len(parts) >= 3 and parts[0] == tag and parts[1].isdigit():
            peer = by_index.get(int(parts[1]))
            if peer is not None:
                code = int(parts[2]) if parts[2].lstrip("-").isdigit() else 255
                out[peer.label] = (code, parts[3].strip() if len(parts) > 3 else "")
    return out


def parse_ssh_probe(
    output: str, peers: list[Peer], unanswered: str = "error"
) -> dict[str, str] | None:
    """{peer label: ok|refused|timeout|auth|host-key|dns|unreachable|closed|failed}; None: no ssh.

    A peer without a line gets `unanswered` (`timeout` when the probe ran out of time:
    the peers that answered before are real results and are kept)."""
    if output.strip().startswith("NOSSH"):
        return None
    found = parse_lines(output, "PEER", peers)
    return {p.label: ssh_status(*found[p.label]) if p.label in found else unanswered for p in peers}


def net_probe(peers: list[Peer], big: int = 10240) -> str:
    """Interfaces, the route to each peer, and `ping -c 3 -s 10240` to each peer."""
    q = shlex.quote
    lines = [
        "if command -v ip >/dev/null 2>&1; then",
        "  ip -o addr show 2>&1 | sed 's/^/ADDR /'",
        "  _a() { _x=$(getent hosts \"$2\" 2>/dev/null | awk '{print $1; exit}'); "
        'printf \'ROUTE %s 0 %s\\n\' "$1" "$(ip -o route get "${_x:-$2}" 2>&1 | head -n 1 '
        "| sed 's/\\\\//g; s/  */ /g')\"; }",
        *[f"  _a {p.index} {q(p.host)}" for p in peers],
        "else echo NOIP; fi",
        "if command -v ping >/dev/null 2>&1; then",
        f'_g() {{ _o=$(ping -c 3 -i 0.2 -W 2 -s {big} -- "$2" 2>&1); _r=$?; '
        'printf \'PING %s %s %s\\n\' "$1" "$_r" "$(printf \'%s\' "$_o" | grep -E '
        "'packet loss|unknown|nreachable|not permitted|too long|invalid' | tr '\\n' ' ' "
        '| cut -c1-300)"; }',
        *_in_groups(
            [f"_g {p.index} {q(p.host)}" for p in peers], at_once(len(peers), 3 * 0.2 + 2 + 1)
        ),
        "else echo NOPING; fi",
    ]
    return "\n".join(lines)


def ping_status(code: int, message: str) -> str:
    loss = re.search(r"(\d+(?:\.\d+)?)% packet loss", message)
    if code == 0 and (loss is None or float(loss.group(1)) == 0):
        return "ok"
    if loss is not None:
        return "no-reply" if float(loss.group(1)) >= 100 else f"loss {loss.group(1)}%"
    return "error"


def parse_net_probe(
    output: str, peers: list[Peer], unanswered: str = "error"
) -> tuple[dict[str, list[str]] | None, dict[str, str] | None, dict[str, str] | None]:
    """(interfaces {name: [addr/prefix]}, routes {peer: route}, ping {peer: status}); None: tool missing."""
    interfaces: dict[str, list[str]] | None = None
    routes: dict[str, str] | None = None
    if "NOIP" not in output.splitlines():
        interfaces, routes = {}, {}
        for line in output.splitlines():
            m = re.match(r"ADDR \d+:\s+(\S+?)(?:@\S+)?\s+inet6?\s+(\S+)", line)
            if m:
                interfaces.setdefault(m.group(1), []).append(m.group(2))
        routes = {label: msg for label, (_, msg) in parse_lines(output, "ROUTE", peers).items()}
    ping = None
    if "NOPING" not in output.splitlines():
        found = parse_lines(output, "PING", peers)
        ping = {
            p.label: ping_status(*found[p.label]) if p.label in found else unanswered for p in peers
        }
    return interfaces, routes, ping
