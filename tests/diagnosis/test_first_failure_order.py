"""`first_failure` does not depend on the order the logs are given in (issue 14).

Two real torchrun failures on an H200 host, each with its launcher's `Root Cause (first
observed failure)` block: the earlier by the block's time is the first failure, in either
order; with the times cut out, a stable rule (file name, then line) decides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.cli.main import main

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
EARLY = CORPORA / "dev-h200" / "h200-nccl-socket-ifname-missing.log"  # 19:54:46
LATE = CORPORA / "dev" / "h200-mismatched-collective-detail.log"  # 21:54:48


def _first(capsys: pytest.CaptureFixture[str], *logs: Path) -> dict[str, object]:
    main(["diagnose", "--json", *map(str, logs)])
    ff = json.loads(capsys.readouterr().out).get("first_failure")
    assert isinstance(ff, dict)
    return ff


def test_by_the_launchers_time_in_either_order(capsys: pytest.CaptureFixture[str]) -> None:
    one = _first(capsys, EARLY, LATE)
    other = _first(capsys, LATE, EARLY)
    assert one == other
    assert one["file"] == str(EARLY) and one["time"] == "2026-11-29_19:54:46"


def test_without_times_by_a_stable_rule(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def untimed(src: Path, name: str) -> Path:
        lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
        out = tmp_path / name
        out.write_text("".join(ln for ln in lines if "  time  " not in ln), encoding="utf-8")
        return out

    a = untimed(LATE, "a-node.log")
    b = untimed(EARLY, "b-node.log")
    one, other = _first(capsys, a, b), _first(capsys, b, a)
    assert one == other and one["file"] == str(a)
