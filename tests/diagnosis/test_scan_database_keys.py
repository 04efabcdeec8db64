"""The scanner's block-level hyperscan databases, named by the scan plan's key, are read
back in a later process without digesting a thousand patterns again, and find the same
lines; the RE2 fallback for non-UTF-8 blocks is compiled only when such a block comes.

Why: a warm start spent milliseconds hashing every pattern three times and compiling an
RE2 Set that a UTF-8 log never uses; neither may change which lines are found."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from kb.diagnosis import scanner as scanner_module
from kb.diagnosis.plan import SignaturePart
from kb.diagnosis.reader import Block
from kb.diagnosis.scanner import Pattern, Scanner

pytest.importorskip("hyperscan")

LINES = [
    "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
    "step 10 loss 0.5",
    "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> with status=12",
    "RuntimeError: 设备 busy",
]
PATTERNS = [
    Pattern(r"Channel \d+/\d+ : \d+\[\d+\]"),
    Pattern(r"status=(?:12|5)\b"),
    Pattern("设备"),  # non-ASCII: hyperscan in UTF-8 mode, RE2 for a block that is not UTF-8
    Pattern(r"loss \d", lazy=True),
]


def _block(data: bytes) -> Block:
    return Block(data, 0, len(data), 1, data.count(b"\n"), len(data))


def _found(scanner: Scanner, data: bytes) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for line_no, _start, pids in scanner.candidates(_block(data), lambda _p: True):
        for pid in pids:
            out.setdefault(pid, []).append(line_no)
    return out


TEXT = ("\n".join(LINES) + "\n").encode()
EXPECTED = {0: [1], 1: [3], 2: [4], 3: [2]}


def _block_dbs(cache: Path) -> set[str]:
    return {p.name for p in cache.glob("scan-*.hsdb") if not p.name.startswith("scan-line-")}


def test_keyed_databases_are_read_back_and_find_the_same_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "dlperf-help"
    plain = Scanner(PATTERNS)
    assert _found(plain, TEXT) == EXPECTED
    by_content = _block_dbs(cache)
    assert len(by_content) == 3  # eager, lazy, UTF-8
    keyed = Scanner(PATTERNS, key="k1")  # finds them by content, and keeps them by its key
    assert _found(keyed, TEXT) == EXPECTED
    named = _block_dbs(cache) - by_content
    assert len(named) == 3
    for path in by_content:
        (cache / path).unlink()  # from now on only the keyed files can answer
    again = Scanner(PATTERNS, key="k1")
    assert again.hs_db is not None and again.hs_lazy is not None and again.hs_utf8 is not None
    assert _found(again, TEXT) == EXPECTED and _block_dbs(cache) == named
    Scanner(PATTERNS, key="k2")  # another key: its own databases
    assert len(_block_dbs(cache) - named) == 3


def test_a_damaged_keyed_database_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    Scanner(PATTERNS, key="k1")
    for path in (tmp_path / "dlperf-help").glob("scan-*.hsdb"):
        path.write_bytes(b"0\nnot a database")
    assert _found(Scanner(PATTERNS, key="k1"), TEXT) == EXPECTED


def test_the_re2_fallback_is_compiled_for_the_first_block_that_is_not_utf8(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    scanner = Scanner(PATTERNS)
    assert _found(scanner, TEXT) == EXPECTED
    assert scanner._utf8_fallback is None  # a UTF-8 log never compiles it
    broken = TEXT.replace(b"busy", b"\xff busy")
    assert _found(scanner, broken) == EXPECTED  # RE2 reads the non-UTF-8 block instead
    assert scanner._utf8_fallback is not None and scanner._utf8_set_ids == [2]


def test_the_plan_part_digest_follows_its_patterns_and_is_cached_with_it() -> None:
    def part(patterns: tuple[Pattern, ...]) -> SignaturePart:
        return SignaturePart(patterns, tuple(() for _ in patterns), (), (), {})

    a, b = part(tuple(PATTERNS)), part((*PATTERNS[:-1], Pattern(r"loss \d", lazy=False)))
    assert a.digest == part(tuple(PATTERNS)).digest and a.digest != b.digest
    assert pickle.loads(pickle.dumps(a)).digest == a.digest  # read back, not recomputed


def test_a_line_database_is_named_by_its_pattern_not_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule edit moves the patterns after it: their line databases must stay usable,
    rather than one new file per pattern per edit (the cache grew without bound)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "dlperf-help"
    first = _found(Scanner(PATTERNS), TEXT)
    lines = {p.name for p in cache.glob("scan-line-*.hsdb")}
    moved = [Pattern(r"never \d+ here"), *PATTERNS]  # every pattern one place further
    found = _found(Scanner(moved), TEXT)
    assert found == {pid + 1: lines_of for pid, lines_of in first.items()}
    assert {p.name for p in cache.glob("scan-line-*.hsdb")} == lines  # none written anew


def test_a_keyed_database_is_named_by_the_scanner_code_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan's key stands for the patterns; which of them go to which database, with
    which flags, is this module's code: another version of it never reads them back."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "dlperf-help"
    Scanner(PATTERNS, key="k1")
    before = _block_dbs(cache)
    monkeypatch.setattr(scanner_module, "_SOURCE_KEY", ["another version of scanner.py"])
    again = Scanner(PATTERNS, key="k1")
    assert _found(again, TEXT) == EXPECTED
    assert len(_block_dbs(cache) - before) == 3  # its own, not the other code's
