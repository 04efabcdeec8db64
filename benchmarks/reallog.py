"""Logs of any size made of real logs: the healthy runs of corpora/ as the noise, one
labelled failing log of corpora/ planted in it.

Why: a generator's own lines (benchmarks/loggen.py) are the shapes someone thought of;
these are the lines real jobs printed (NCCL INFO from H200, A100, A800, EKS, WSL runs,
training progress, launcher chatter), so a scanner tuned on them is tuned for what
people paste. Two kinds:

- *dense*: the `NCCL INFO` lines of every healthy log, replayed as 64 ranks under
  `mpirun --tag-output` would print them (each rank's copy prefixed `[1,R]<stdout>:`);
- *sparse*: the other lines of the healthy logs (progress, warnings, launcher output),
  with a stretch of NCCL INFO now and then.

The failing log's lines go in whole at 60 % of the file; `PLANTED[kind]` names it and
its label (corpora/*/labels.csv), the cause the diagnosis must find. Nothing here is
written to the repository: the files go where the caller says (the benchmark: /tmp).
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
RANKS = 64
PLANT_AT = 0.6
PLANTED = {  # kind: (labelled failing log of corpora/, the cause it is labelled with)
    "dense": ("ib-fabric-nccl-1405-status12-vendor129.log", "nccl-ib-fabric-error"),
    "sparse": ("timeout-pytorch-118369-progress-then-watchdog.log", "nccl-timeout-hang"),
}


def healthy_lines() -> tuple[list[str], list[str]]:
    """(NCCL INFO lines, other non-blank lines) of every healthy log of corpora/."""
    info: list[str] = []
    other: list[str] = []
    for path in sorted((CORPORA / "healthy").rglob("*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            (info if "NCCL INFO" in line else other).append(line)
    return info, other


def planted(kind: str) -> tuple[Path, str, list[str]]:
    """(the failing log, its label, its lines) planted in a log of `kind`."""
    name, label = PLANTED[kind]
    for labels in sorted(CORPORA.rglob("labels.csv")):
        with open(labels, encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if row.get("file") == name:
                    if row.get("cause_id") != label:
                        raise SystemExit(f"{labels}: {name} is labelled {row.get('cause_id')}")
                    path = labels.parent / name
                    return path, label, path.read_text(encoding="utf-8").splitlines()
    raise SystemExit(f"no labelled log {name} under {CORPORA}")


def _chunks(kind: str, rng: random.Random) -> list[str]:
    """Pieces of text (about 256 KB each) the log is made of, in several variants."""
    info, other = healthy_lines()
    out = []
    for rank in range(RANKS):
        prefix = f"[1,{rank}]<stdout>:"
        if kind == "dense":
            lines = [prefix + line for line in info] + [
                prefix + line for line in rng.sample(other, max(1, len(other) // 20))
            ]
        else:
            lines = [prefix + line for line in other]
            if rank % 16 == 0:  # a communicator now and then
                lines += [prefix + line for line in info[: len(info) // 8]]
        text = "\n".join(lines) + "\n"
        out.append(text * max(1, (256 * 1024) // len(text)))
    return out


def generate(kind: str, path: Path, size_bytes: int, seed: int = 17) -> Path:
    """Write a `kind` log of about `size_bytes` to `path` (kept when it already has that
    size and the same planted log)."""
    _source, _label, fail = planted(kind)
    if path.exists() and abs(path.stat().st_size - size_bytes) < size_bytes * 0.05:
        return path
    rng = random.Random(seed)
    chunks = _chunks(kind, rng)
    tmp = path.with_suffix(".part")
    written, placed = 0, False
    with open(tmp, "w", encoding="utf-8", buffering=1 << 20) as fh:
        while written < size_bytes:
            if not placed and written >= PLANT_AT * size_bytes:
                text = "\n".join(fail) + "\n"
                placed = True
            else:
                text = rng.choice(chunks)
            fh.write(text)
            written += len(text)
        if not placed:
            fh.write("\n".join(fail) + "\n")
    tmp.replace(path)
    return path
