"""Each pattern's line-level hyperscan database comes from the disk cache in a later
process, finds the same lines, and a damaged cache file is rebuilt, never trusted.

Why: a log needs about a hundred of them and building them cost seconds per process;
the cache must never change which lines are found."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.diagnosis.reader import Block
from kb.diagnosis.scanner import Pattern, Scanner

pytest.importorskip("hyperscan")

LINES = [
    "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
    "step 10 loss 0.5",
    "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> with status=12",
    "NCCL INFO Channel 01/0 : 1[1] -> 0[0] via P2P/IPC",
]
PATTERNS = [Pattern(r"Channel \d+/\d+ : \d+\[\d+\]"), Pattern(r"status=(?:12|5)\b")]


def _block() -> Block:
    data = ("\n".join(LINES) + "\n").encode()
    return Block(data, 0, len(data), 1, len(LINES), len(data))


def _lines(scanner: Scanner) -> dict[int, list[int]]:
    return {
        pid: [n for n, _start, pids in scanner.candidates(_block(), lambda _p: True) if pid in pids]
        for pid in range(len(PATTERNS))
    }


def test_a_cached_line_database_finds_the_same_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = _lines(Scanner(PATTERNS))
    assert first == {0: [1, 4], 1: [3]}
    cached = sorted((tmp_path / "dlperf-help").glob("scan-line-*.hsdb"))
    assert len(cached) == 2  # one per pattern
    assert _lines(Scanner(PATTERNS)) == first  # a new scanner: read back from the cache


def test_a_damaged_cache_file_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = _lines(Scanner(PATTERNS))
    for path in (tmp_path / "dlperf-help").glob("scan-line-*.hsdb"):
        path.write_bytes(b"0\nnot a database")
    assert _lines(Scanner(PATTERNS)) == first
    for path in (tmp_path / "dlperf-help").glob("scan-line-*.hsdb"):
        assert b"not a database" not in path.read_bytes()  # written again, whole
