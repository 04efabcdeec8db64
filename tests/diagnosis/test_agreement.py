"""The fast path (prefilter, candidate lines only, saturation) gives exactly what the
reference path (every signature on every line) gives: on every real log we have, with
the shipped rules, with hyperscan and without it, and across block boundaries."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis import reader
from kb.diagnosis.engine import diagnose_paths

from .conftest import DATA_CORPUS, DEV_CORPUS, H200_FIXTURES

REAL_LOGS = sorted([*DEV_CORPUS.logs(), *DATA_CORPUS.logs(), *H200_FIXTURES.glob("*.txt")])


def _comparable(diag: Any) -> dict[str, Any]:
    out = diag.to_json(explain=True)
    out["stats"].pop("seconds")
    return out


def test_there_are_real_logs_to_compare() -> None:
    assert len(REAL_LOGS) >= 20


@pytest.mark.slow
def test_fast_and_reference_paths_agree_on_every_real_log(shipped) -> None:
    for path in REAL_LOGS:
        fast = _comparable(diagnose_paths(shipped, [path]))
        ref = _comparable(diagnose_paths(shipped, [path], fast=False))
        assert fast == ref, path.name


@pytest.mark.slow
def test_without_hyperscan_the_result_is_the_same(shipped) -> None:
    for path in REAL_LOGS:
        with_hs = _comparable(diagnose_paths(shipped, [path]))
        without = _comparable(diagnose_paths(shipped, [path], use_hyperscan=False))
        assert with_hs == without, path.name


def _stress_log(tmp_path: Path) -> Path:
    """Real lines shuffled into noise, with CRLF, ANSI codes, long lines and repeats."""
    rng = random.Random(3)
    real = [line for p in REAL_LOGS for line in p.read_text(errors="replace").splitlines()]
    noise = [
        f"step {i} loss {rng.random():.4f} lr 0.1 time 0.{rng.randrange(999)}" for i in range(3000)
    ]
    lines = noise + rng.sample(real, min(len(real), 1500))
    rng.shuffle(lines)
    out = []
    for line in lines:
        r = rng.random()
        if r < 0.05:
            line = f"\x1b[3{rng.randrange(8)}m{line}\x1b[0m"
        elif r < 0.08:
            line = line + " " + "z" * rng.randrange(5000, 20000)
        out.append(line + ("\r\n" if rng.random() < 0.1 else "\n"))
    path = tmp_path / "stress.log"
    path.write_text("".join(out), encoding="utf-8", errors="replace")
    return path


@pytest.mark.parametrize("chunk", [4096, 65536])
@pytest.mark.slow
def test_agreement_across_block_boundaries(shipped, tmp_path: Path, monkeypatch, chunk) -> None:
    path = _stress_log(tmp_path)
    whole = _comparable(diagnose_paths(shipped, [path]))
    monkeypatch.setattr(reader, "CHUNK", chunk)
    fast = _comparable(diagnose_paths(shipped, [path]))
    ref = _comparable(diagnose_paths(shipped, [path], fast=False))
    assert fast == ref
    assert fast == whole
    assert fast["stats"]["lines"] == whole["stats"]["lines"] > 4000
