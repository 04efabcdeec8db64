"""The labelled real logs under `corpora/`, read one way for every test.

Why one module: each corpus used to carry its own copy of "read labels.csv, find the log
beside it or in logs/, pick the healthy rows". Layout (corpora/README.md):

- `corpora/<name>/labels.csv` and its logs: the failures (and `other`) of one corpus;
- `corpora/healthy/<name>/labels.csv` and its logs: that corpus's healthy logs (`none`),
  kept together as the gate that must stay clean.

A corpus is addressed by its name (`dev`, `batch-2026-11-29`, ...); `rows(name)` gives its
failures and its healthy logs, wherever each now lives. Nothing here imports `kb`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "corpora"
HEALTHY_ROOT = ROOT / "healthy"
COLUMNS = ["file", "cause_id", "source", "evidence"]
NOT_A_CAUSE = frozenset({"none", "other"})
DEV = ("dev", "dev-h200", "dev-launch", "dev-nccl", "dev-h200-nccl")  # rules written from these
# the held-out batches of the first rounds, in the order they were collected
# (once tests/heldout, tests/heldout2 ... tests/heldout5)
BATCHES_2026_11 = (
    "batch-2026-11-29",
    "batch-2026-11-30a",
    "batch-2026-11-30b",
    "batch-2026-11-30c",
    "batch-2026-11-30d",
)


@dataclass(frozen=True)
class Labelled:
    """One row of a labels.csv, with the log it names."""

    corpus: str
    file: str
    cause_id: str
    source: str
    evidence: str
    path: Path

    @property
    def healthy(self) -> bool:
        return self.cause_id == "none"


def _read(folder: Path, corpus: str) -> list[Labelled]:
    labels = folder / "labels.csv"
    if not labels.is_file():
        return []
    with labels.open(newline="", encoding="utf-8") as fh:
        return [
            Labelled(
                corpus,
                row["file"],
                (row.get("cause_id") or "").strip(),
                (row.get("source") or "").strip(),
                (row.get("evidence") or "").strip(),
                folder / row["file"],
            )
            for row in csv.DictReader(fh)
        ]


def header(folder: Path) -> list[str]:
    """The column names of `folder/labels.csv`."""
    with (folder / "labels.csv").open(newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh))


@cache
def names() -> tuple[str, ...]:
    """Every scored corpus (a folder of `corpora/` or `corpora/healthy/` with file labels)."""
    found = {
        p.parent.name
        for p in [*ROOT.glob("*/labels.csv"), *HEALTHY_ROOT.glob("*/labels.csv")]
        if p.parent != HEALTHY_ROOT and header(p.parent)[:1] == ["file"]
    }
    return tuple(sorted(found))


def folders(name: str) -> list[Path]:
    """The folders that hold corpus `name`: its own and its part of the healthy gate."""
    return [f for f in (ROOT / name, HEALTHY_ROOT / name) if (f / "labels.csv").is_file()]


@cache
def rows(name: str) -> tuple[Labelled, ...]:
    """Every labelled log of corpus `name` (failures, `other` and healthy)."""
    if name not in names():
        raise KeyError(f"no corpus named {name!r} under {ROOT}")
    return tuple(r for f in folders(name) for r in _read(f, name))


def path(name: str, file: str) -> Path:
    """The log `file` of corpus `name`, in its own folder or in the healthy gate."""
    for r in rows(name):
        if r.file == file:
            return r.path
    raise KeyError(f"{file} is not labelled in corpus {name}")


def healthy(*corpora: str) -> list[Path]:
    """The healthy logs of the named corpora (all corpora when none is named)."""
    return [r.path for n in corpora or names() for r in rows(n) if r.healthy]


def failures(*corpora: str) -> list[Labelled]:
    """The rows of the named corpora labelled with a cause (not `none`, not `other`)."""
    return [r for n in corpora or names() for r in rows(n) if r.cause_id not in NOT_A_CAUSE]


def logs(name: str) -> list[Path]:
    """Every log file of corpus `name`, labelled or not, sorted by file name."""
    return sorted((p for f in folders(name) for p in f.glob("*.log")), key=lambda p: p.name)


@dataclass(frozen=True)
class Corpus:
    """A corpus by name: `Corpus("dev") / "x.log"` is that log, wherever it lives."""

    name: str

    def __truediv__(self, file: str) -> Path:
        return path(self.name, file)

    def rows(self) -> tuple[Labelled, ...]:
        return rows(self.name)

    def logs(self) -> list[Path]:
        return logs(self.name)
