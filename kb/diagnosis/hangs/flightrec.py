"""PyTorch Flight Recorder dumps: read them safely and say where the ranks parted.

A dump is one rank's ring buffer of its last collectives (`entries`: process group,
`collective_seq_id`, `profiling_name` such as `nccl:all_reduce`, `input_sizes`,
`state`/`retired`, Python `frames`), written by PyTorch to
`$TORCH_FR_DUMP_TEMP_FILE<rank>` (older: `$TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>`,
default `/tmp/nccl_trace_rank_<rank>`) when a collective times out, as a pickle or,
with the JSON dump API, as JSON. The rank is the file name's trailing number, as in
PyTorch's own analyzer (`torch/distributed/flight_recorder/fr_trace.py`).

`analyze` compares the ranks' sequences the way that analyzer does, collective by
collective, and states the first place where they part: a rank that left no dump
(dead), a rank that never reached the collective the others wait in (stuck), ranks
that issued different collectives or called them from different code (desync).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kb.diagnosis.hangs.markers import FLIGHT_RECORDER_PREFIX as PREFIX
from kb.diagnosis.hangs.markers import RANK as _RANK
from kb.diagnosis.hangs.markers import rank_of, sniff
from kb.diagnosis.hangs.unpickle import RefusedPickle, loads_plain, printable

__all__ = ["PREFIX", "DumpError", "RankDump", "analyze", "rank_of", "read_all", "read_dump"]
__all__ += ["sniff"]
MAX_DUMP_BYTES = 512 * 1024 * 1024
_STACK_FRAMES = 4


class DumpError(Exception):
    """A dump that cannot be read; the message is one line naming the file."""


@dataclass(frozen=True)
class Entry:
    seq: int
    pg: str
    pg_desc: str
    op: str
    sizes: str
    dtypes: str
    done: bool
    frames: tuple[tuple[str, str, int], ...]  # (function, file, line), innermost first

    def what(self) -> str:
        return f"{self.op}, sizes {self.sizes}, process group {self.pg_label()}"

    def pg_label(self) -> str:
        return f"{self.pg} {self.pg_desc}".strip() if self.pg_desc else self.pg

    def call_site(self) -> str:
        """The first frame outside torch: where the user's code issued the collective."""
        for func, file, line in self.frames:
            if "/torch/" not in file.replace("\\", "/"):
                return f"{os.path.basename(file)}:{line} ({func})"
        return ""

    def stack(self) -> str:
        return " < ".join(
            f"{f} ({os.path.basename(p)}:{n})" for f, p, n in self.frames[:_STACK_FRAMES]
        )


@dataclass
class RankDump:
    rank: int
    file: str
    version: str
    comm_lib: str
    entries: list[Entry]
    pg_ranks: dict[str, list[int]] = field(default_factory=dict)


def read_dump(path: str) -> RankDump:
    """One rank's dump; `DumpError` (one line) for anything that is not a plain dump."""
    name = printable(path, 200)
    m = _RANK.search(os.path.basename(path))
    if not m:
        raise DumpError(f"{name}: no rank number at the end of the name (rank_<N>)")
    try:
        if os.path.getsize(path) > MAX_DUMP_BYTES:
            raise DumpError(f"{name}: larger than a Flight Recorder dump can be")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise DumpError(f"{name}: {exc.strerror or exc}") from None
    if not data.strip():
        raise DumpError(f"{name}: empty Flight Recorder dump")
    if data.lstrip()[:1] == b"{":
        try:
            obj: Any = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise DumpError(f"{name}: damaged JSON dump ({str(exc)[:80]})") from None
    else:
        try:
            obj = loads_plain(data)
        except RefusedPickle as exc:
            raise DumpError(f"{name}: {exc}") from None
    return _dump(int(m.group(1)), path, obj, name)


def _dump(rank: int, path: str, obj: Any, name: str) -> RankDump:
    if not isinstance(obj, dict) or not isinstance(obj.get("entries"), list):
        raise DumpError(f"{name}: not a Flight Recorder dump (no list of 'entries')")
    pg_ranks: dict[str, list[int]] = {}
    config = obj.get("pg_config")
    if isinstance(config, dict):
        for key, pg in config.items():
            if isinstance(pg, dict):
                ranks = _ranks(pg.get("ranks"))
                for label in {str(key), str(pg.get("name", ""))} - {""}:
                    pg_ranks[label] = ranks
                pg_ranks.setdefault("", ranks) if key == "" else None
    entries = [e for e in (_entry(x) for x in obj["entries"]) if e is not None]
    return RankDump(
        rank,
        path,
        printable(obj.get("version", ""), 20),
        printable(obj.get("comm_lib_version", ""), 40),
        entries,
        pg_ranks,
    )


def _ranks(value: Any) -> list[int]:
    if isinstance(value, str):
        return [int(x) for x in re.findall(r"\d+", value)]
    if isinstance(value, list | tuple):
        return [int(x) for x in value if isinstance(x, int)]
    return []


def _entry(x: Any) -> Entry | None:
    if not isinstance(x, dict) or x.get("is_p2p"):
        return None
    seq = x.get("collective_seq_id")
    if not isinstance(seq, int) or isinstance(seq, bool):
        return None
    pg = x.get("process_group")
    pg_name, pg_desc = ("", "")
    if isinstance(pg, list | tuple) and pg:
        pg_name = printable(pg[0], 40)
        pg_desc = printable(pg[1], 40) if len(pg) > 1 else ""
    if not pg_name:
        pg_name = printable(x.get("pg_id", ""), 40)
    op = printable(x.get("profiling_name", "?"), 60).split(":")[-1] or "?"
    state = x.get("state")
    frames: list[tuple[str, str, int]] = []
    for fr in x.get("frames") or []:
        if isinstance(fr, dict):
            line = fr.get("line")
            frames.append(
                (
                    printable(fr.get("name", "?"), 60),
                    printable(fr.get("filename", "?"), 200),
                    line if isinstance(line, int) else 0,
                )
            )
    return Entry(
        seq,
        pg_name,
        pg_desc,
        op,
        _plain_list(x.get("input_sizes")),
        _plain_list(x.get("input_dtypes")).replace('"', ""),
        state == "completed" or x.get("retired") is True,
        tuple(frames),
    )


def _plain_list(value: Any) -> str:
    return printable(json.dumps(value, separators=(",", ":"), default=str), 80)


def _ranks_text(ranks: Iterable[int]) -> str:
    rs = sorted(ranks)
    return (
        ("rank " if len(rs) == 1 else "ranks ")
        + ",".join(str(r) for r in rs[:16])
        + (",…" if len(rs) > 16 else "")
    )


def analyze(dumps: list[RankDump], unreadable: set[int] | None = None) -> list[str]:
    """Statements (one line each) about where the dumped ranks part, first place first.
    Ranks in `unreadable` left a dump that could not be read: they are not missing."""
    if not dumps:
        return []
    out: list[str] = []
    by_rank = {d.rank: d for d in dumps}
    world = set(by_rank)
    for d in dumps:
        for ranks in d.pg_ranks.values():
            world.update(ranks)
    versions = _groups({d.rank: d.version for d in dumps if d.version})
    if len(versions) > 1:
        desc = "; ".join(f"version {v} ({_ranks_text(rs)})" for v, rs in versions.items())
        out.append(f"{PREFIX} the dumps are of different Flight Recorder versions: {desc}")
    libs = _groups({d.rank: d.comm_lib for d in dumps if d.comm_lib})
    if len(libs) > 1:
        desc = "; ".join(f"{v} on {_ranks_text(rs)}" for v, rs in libs.items())
        out.append(f"{PREFIX} ranks run different NCCL versions: {desc}")
    missing = sorted(world - set(by_rank) - (unreadable or set()))
    pgs = sorted({e.pg for d in dumps for e in d.entries})
    waits: list[str] = []
    for pg in pgs:
        found, wait = _compare(pg, by_rank, missing)
        out.extend(found)
        if wait:
            waits.append(wait)
        if found:
            break
    if missing:
        where = f"while {waits[0]}" if waits else _last_common(dumps)
        verb = f"left no dump {where}: it died or was killed before the others dumped"
        out.insert(0, f"{PREFIX} {_ranks_text(missing)} {verb}")
    return out


def _last_common(dumps: list[RankDump]) -> str:
    """What the dumped ranks issued last, in the process group of their latest entry."""
    lasts = {d.rank: max(d.entries, key=lambda e: e.seq) for d in dumps if d.entries}
    if not lasts:
        return f"({_ranks_text(d.rank for d in dumps)} dumped no collective)"
    e = max(lasts.values(), key=lambda e: e.seq)
    at = [r for r, x in lasts.items() if x.seq == e.seq and x.pg == e.pg]
    return f"while {_ranks_text(at)} had issued collective #{e.seq} ({e.what()})"


def _groups(values: dict[int, str]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for r, v in sorted(values.items()):
        groups.setdefault(v, []).append(r)
    return groups


def _compare(pg: str, by_rank: dict[int, RankDump], missing: list[int]) -> tuple[list[str], str]:
    """The first disagreement in one process group, and (for a dead rank's statement)
    what the others wait in."""
    seqs: dict[int, dict[int, Entry]] = {}
    for r, d in by_rank.items():
        m = {e.seq: e for e in d.entries if e.pg == pg}
        if m:
            seqs[r] = m
    if not seqs:
        return [], ""
    lo = max(min(m) for m in seqs.values())
    hi = max(max(m) for m in seqs.values())
    last = {r: max(m) for r, m in seqs.items()}
    for s in range(lo, hi + 1):
        have = {r: m[s] for r, m in seqs.items() if s in m}
        lacking = [r for r in seqs if s not in seqs[r]]
        kinds = _groups({r: f"{e.op} {e.sizes} {e.dtypes}" for r, e in have.items()})
        if len(kinds) > 1:
            return _disagree(s, have, kinds, last), ""
        sites = _groups({r: e.call_site() for r, e in have.items() if e.call_site()})
        if len(sites) > 1 and _diverged_later(seqs, s, hi):
            return _desync(s, have, sites, seqs, last), ""
        if have and lacking:
            return _behind(s, have, lacking, seqs, last), ""
        pending = [r for r, e in have.items() if not e.done]
        if pending and len(pending) == len(have):
            e = next(iter(have.values()))
            wait = f"{_ranks_text(have)} wait in collective #{s} ({e.what()})"
            if missing:
                return [], wait
            return [
                f"{PREFIX} every dumped rank waits in collective #{s} ({e.what()}): none completed it"
            ], ""
    return [], ""


def _diverged_later(seqs: dict[int, dict[int, Entry]], s: int, hi: int) -> bool:
    """Different call sites matter when the ranks' sequences also end differently."""
    ends = {max(m) for m in seqs.values()}
    pend = {any(not e.done for e in m.values()) for m in seqs.values()}
    return len(ends) > 1 or len(pend) > 1 or hi > s


def _odd(groups: dict[str, list[int]], last: dict[int, int]) -> tuple[list[int], list[int]]:
    """The ranks that went their own way (the smaller group; on a tie, the one ahead)."""
    ordered = sorted(groups.values(), key=lambda rs: (len(rs), -max(last[r] for r in rs)))
    odd = ordered[0]
    rest = [r for rs in ordered[1:] for r in rs]
    return odd, rest


def _disagree(
    s: int, have: dict[int, Entry], kinds: dict[str, list[int]], last: dict[int, int]
) -> list[str]:
    odd, rest = _odd(kinds, last)
    e_odd, e_rest = have[odd[0]], have[rest[0]]
    if len(odd) == len(rest) and last[odd[0]] == last[rest[0]]:  # two halves: no odd one
        each = "; ".join(
            f"{_ranks_text(rs)} issued {have[rs[0]].op} sizes {have[rs[0]].sizes} "
            f"{have[rs[0]].dtypes}"
            for rs in kinds.values()
        )
        return [
            f"{PREFIX} the ranks disagree on collective #{s} (process group "
            f"{e_odd.pg_label()}): {each}",
            *_stacks(s, odd, have, rest),
        ]
    out = [
        f"{PREFIX} {_ranks_text(odd)} issued a different collective #{s}: "
        f"{e_odd.op} sizes {e_odd.sizes} {e_odd.dtypes}, while {_ranks_text(rest)} issued "
        f"{e_rest.op} sizes {e_rest.sizes} {e_rest.dtypes} (process group {e_odd.pg_label()})"
    ]
    out.extend(_stacks(s, odd, have, rest))
    return out


def _desync(
    s: int,
    have: dict[int, Entry],
    sites: dict[str, list[int]],
    seqs: dict[int, dict[int, Entry]],
    last: dict[int, int],
) -> list[str]:
    odd, rest = _odd(sites, last)
    e_odd, e_rest = have[odd[0]], have[rest[0]]
    r = odd[0]
    now = seqs[r][last[r]]
    state = "waits in" if not now.done else "is at"
    others = max(last[x] for x in rest)
    out = [
        f"{PREFIX} {_ranks_text(odd)} issued a different collective #{s}: called from "
        f"{e_odd.call_site()}, while {_ranks_text(rest)} called #{s} from {e_rest.call_site()}"
        f" ({e_odd.what()}); {_ranks_text(odd)} {state} #{last[r]} ({now.op}), "
        f"{_ranks_text(rest)} reached #{others}"
    ]
    out.extend(_stacks(s, odd, have, rest))
    return out


def _behind(
    s: int,
    have: dict[int, Entry],
    lacking: list[int],
    seqs: dict[int, dict[int, Entry]],
    last: dict[int, int],
) -> list[str]:
    e = next(iter(have.values()))
    waiting = [r for r, x in have.items() if not x.done]
    lack_idle = all(x.done for r in lacking for x in seqs[r].values())
    if len(have) < len(lacking) and lack_idle and waiting:
        return [
            f"{PREFIX} {_ranks_text(have)} issued an extra collective #{s} ({e.what()}) that "
            f"{_ranks_text(lacking)} never issued: they completed #{s - 1} and wait in no "
            "collective"
        ]
    r = lacking[0]
    prev = seqs[r][last[r]]
    state = "completed" if prev.done else "still pending"
    who = f"; {_ranks_text(waiting)} wait in it" if waiting else ""
    return [
        f"{PREFIX} {_ranks_text(lacking)} never reached collective #{s} ({e.what()}){who}; "
        f"the last collective of rank {r} was #{last[r]} ({prev.op}, {state})"
    ]


def _stacks(s: int, odd: list[int], have: dict[int, Entry], rest: list[int]) -> list[str]:
    out = []
    for r in [odd[0], rest[0]]:
        stack = have[r].stack()
        if stack:
            out.append(f"{PREFIX} stack of rank {r} at collective #{s}: {stack}")
    return out


def read_all(paths: list[str]) -> tuple[list[RankDump], list[tuple[str, str]]]:
    """The dumps among `paths` (one per rank), and (path, one-line error) for the others."""
    dumps: dict[int, RankDump] = {}
    errors: list[tuple[str, str]] = []
    for p in paths:
        try:
            d = read_dump(p)
        except DumpError as exc:
            errors.append((p, str(exc)))
            continue
        if d.rank in dumps:
            errors.append(
                (
                    p,
                    f"{printable(p, 200)}: a second dump of rank {d.rank} "
                    f"(first: {printable(dumps[d.rank].file, 200)}); ignored",
                )
            )
            continue
        dumps[d.rank] = d
    return [dumps[r] for r in sorted(dumps)], errors
