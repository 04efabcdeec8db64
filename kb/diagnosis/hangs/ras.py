"""NCCL's RAS report (`ncclras`, or `echo verbose status | nc localhost 28028`).

Since NCCL 2.24 every NCCL process runs a RAS thread; the report (format from
NCCL's `src/ras/client_support.cc`, 2.24 to 2.30) has a header (`NCCL version ...`),
a `Job summary`, a table of `Communicators`, then `Errors` and `Warnings` blocks:
`DEAD` (processes unreachable over the RAS network), `INCOMPLETE` (processes or
ranks that did not answer), `#<group>-<comm> (<hash>) MISMATCH` (ranks that launched
different numbers of collectives, or have different status), `... ERROR`. Outliers
are listed as `Rank 21 -- GPU 5 managed by process 3487984 on node 172.16.64.213`.
`statements` turns what shows a problem into one line each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kb.diagnosis.hangs.markers import RAS_MARKERS as MARKERS
from kb.diagnosis.hangs.markers import RAS_PREFIX as PREFIX
from kb.diagnosis.hangs.markers import looks_like_ras as looks_like
from kb.diagnosis.hangs.unpickle import printable
from kb.util.lazyre import LazyPattern

__all__ = ["MARKERS", "PREFIX", "looks_like", "statements", "version"]
_HOST = r"[A-Za-z0-9_.:%\[\]-]+"
HEADER = LazyPattern(r"^NCCL version (\S+) compiled with CUDA (\S+)", re.M)
_BLOCK = LazyPattern(r"^(DEAD|INCOMPLETE|TIMEOUT|#(\d+-\d+) \(([0-9a-f]+)\) ([A-Z,]+))\s*$")
_PROCESS = LazyPattern(rf"^\s+Process (\d+) on node ({_HOST}) managing GPUs? (.+?)\s*$")
_RANK = LazyPattern(
    rf"^\s+Rank (\d+)(?: (?P<what>has launched up to operation \d+|has not launched any "
    rf"operations|has status \w+|reported [^-]+?))? -- (?:GPU (?P<gpu>.+?) managed by process "
    rf"(?P<pid>\d+) on node (?P<host>{_HOST})|\[process information not found\])\s*$"
)
_GROUP = LazyPattern(
    r"^\s+(\d+) ranks? (?:have|has) (launched up to operation (\d+)|not launched any operations"
    r"|status (\w+))\s*$|^\s+(\d+) ranks? reported (.+?)\s*$"
)
_DIFFERENT = LazyPattern(r"^\s+Communicator ranks have different (?:(\w+) operation counts|status)")
_MISSING = LazyPattern(r"^\s+The missing ranks?: ([\d,]+)\s*$")
_OUTLIER_NODE = LazyPattern(rf"^\s+Node ({_HOST}) running process(?:es)? ([\d,]+)\s*$")


@dataclass
class _Group:
    count: int
    value: int | None  # operations launched; None: none launched (or a status group)
    label: str
    ranks: list[str] = field(default_factory=list)  # "rank 2 (process 9, host h, GPU 0)"
    rank_ids: list[int] = field(default_factory=list)


def version(text: str) -> str:
    m = HEADER.search(text)
    return printable(m.group(1), 40) if m else ""


def statements(text: str) -> list[str]:
    """One line for each problem the report shows."""
    out: list[str] = []
    lines = [printable(x, 400) for x in text.splitlines()]
    who: dict[str, str] = {}  # pid -> "rank 21 of communicator #0-0"
    for line in lines:
        m = _RANK.match(line)
        if m and m.group("pid") and not m.group("what"):
            who.setdefault(m.group("pid"), f"rank {m.group(1)}")
    block = ""
    comm = ""
    groups: list[_Group] = []
    op = ""
    error = ""
    outliers = False

    def flush() -> None:
        if groups:
            out.extend(_counts(comm, op, groups))
        groups.clear()

    for line in lines:
        b = _BLOCK.match(line)
        if b or not line.strip() or line in ("Errors", "Warnings"):
            flush()
            if b:
                block = b.group(4) or b.group(1)
                comm = f"communicator #{b.group(2)} ({b.group(3)})" if b.group(2) else ""
                op = error = ""
            elif line in ("Errors", "Warnings"):
                block = ""
            continue
        if line.startswith("The outlier node"):
            outliers = True
            continue
        m = _OUTLIER_NODE.match(line)
        if m and outliers:
            out.append(
                f"{PREFIX} node {m.group(1)} runs a different number of NCCL processes than "
                f"the other nodes (processes {m.group(2)})"
            )
            continue
        m = _PROCESS.match(line)
        if m and block in ("DEAD", "INCOMPLETE") and not comm:
            pid, host, gpu = m.groups()
            rank = f", {who[pid]}" if pid in who else ""
            desc = f"process {pid} on host {host} (GPU {gpu}{rank})"
            if block == "DEAD":
                out.append(f"{PREFIX} {desc} is considered dead: unreachable over the RAS network")
            else:
                out.append(f"{PREFIX} {desc} does not answer: no communicator data from it")
            continue
        if comm and "INCOMPLETE" in block:
            m = _MISSING.match(line)
            if m:
                for r in m.group(1).split(","):
                    out.append(f"{PREFIX} rank {r} of {comm} is missing: it does not answer")
                continue
            m = _RANK.match(line)
            if m and not m.group("what"):
                out.append(
                    f"{PREFIX} rank {m.group(1)}{_where(m)} of {comm} is missing: it does not answer"
                )
                continue
        if comm and "MISMATCH" in block:
            m = _DIFFERENT.match(line)
            if m:
                flush()
                op = m.group(1) or "status"
                continue
            g = _GROUP.match(line)
            if g and g.group(1):
                value = int(g.group(3)) if g.group(3) else None
                label = g.group(4) or ""
                groups.append(_Group(int(g.group(1)), value, label))
                continue
            m = _RANK.match(line)
            if m and m.group("what"):  # a group of one: "Rank 2 has launched up to operation 4"
                n = re.search(r"operation (\d+)|status (\w+)", m.group("what"))
                value = int(n.group(1)) if n and n.group(1) else None
                groups.append(_Group(1, value, (n.group(2) or "") if n else ""))
            if m and groups:
                groups[-1].ranks.append(f"rank {m.group(1)}{_where(m)}")
                groups[-1].rank_ids.append(int(m.group(1)))
                continue
        if comm and "ERROR" in block:
            g = _GROUP.match(line)
            if g and g.group(5):
                error = g.group(6)
                continue
            m = _RANK.match(line)
            what = m.group("what") if m else None
            if m and (what or error):
                said = what or f"reported {error}"
                out.append(f"{PREFIX} rank {m.group(1)}{_where(m)} of {comm} {said}")
    flush()
    return list(dict.fromkeys(out))


def _where(m: re.Match[str]) -> str:
    if not m.group("pid"):
        return ""
    return f" (process {m.group('pid')} on host {m.group('host')}, GPU {m.group('gpu')})"


def _counts(comm: str, op: str, groups: list[_Group]) -> list[str]:
    if op == "status" or any(g.value is None and g.label for g in groups):
        return [
            f"{PREFIX} {g_rank} of {comm} has status {g.label} while others differ"
            for g in groups
            for g_rank in g.ranks
            if g.label
        ]
    main = max(groups, key=lambda g: g.count)
    top = main.value or 0
    kind = f"{op} operations" if op and op != "collective" else "collective operations"
    out = []
    for g in groups:
        if g is main:
            continue
        n = g.value or 0
        for desc in g.ranks:
            if n < top:
                state = "it never reached the next collective (it is behind)"
            else:
                state = "it issued extra collectives (it is ahead)"
            out.append(
                f"{PREFIX} {desc} of {comm} launched {kind} up to {n} while {main.count} ranks "
                f"launched up to {top}: {state}"
            )
    if not out:
        desc = ", ".join(
            f"{g.count} rank{'s' if g.count > 1 else ''} up to {g.value or 0}" for g in groups
        )
        out.append(f"{PREFIX} the ranks of {comm} launched different numbers of {kind}: {desc}")
    return out
