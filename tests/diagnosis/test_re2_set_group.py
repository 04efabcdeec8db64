"""The scanner's RE2 fallback (no hyperscan) holds any number of patterns: when one Set
would pass RE2's memory budget, the patterns are split over several Sets that match as
one would (kb.diagnosis.scanner._SetGroup)."""

from __future__ import annotations

import re

import pytest

from kb.diagnosis import scanner

PATTERNS = [rf"(?m)error {i}: (?:[a-z]+ ){{1,8}}failed at \w+\.cc:\d+" for i in range(300)]
DATA = b"error 7: the thing failed at x.cc:12\nerror 250: a b c failed at y.cc:3\nok\n"


def test_a_small_budget_splits_the_patterns_and_matches_the_same(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(scanner, "SET_MAX_MEM", 1 << 17)
    group = scanner._SetGroup([p.encode() for p in PATTERNS])
    assert len(group.sets) > 1
    expected = [i for i, p in enumerate(PATTERNS) if re.search(p, DATA.decode())]
    assert sorted(group.Match(DATA)) == expected == [7, 250]


def test_the_default_budget_holds_them_in_one_set() -> None:
    group = scanner._SetGroup([p.encode() for p in PATTERNS])
    assert len(group.sets) == 1
    assert sorted(group.Match(DATA)) == [7, 250]


@pytest.mark.slow
def test_the_shipped_rules_scan_alike_without_hyperscan(shipped) -> None:  # type: ignore[no-untyped-def]
    from kb.diagnosis.engine import diagnose_text

    text = "NCCL WARN NET/IB : No device found.\nRuntimeError: CUDA error: out of memory\n"
    a = diagnose_text(shipped, text).to_json()
    b = diagnose_text(shipped, text, use_hyperscan=False).to_json()
    a["stats"].pop("seconds"), b["stats"].pop("seconds")
    assert a == b and a["causes"]


def test_a_pattern_re2_refuses_is_left_out_and_the_others_keep_their_places() -> None:
    exprs = [b"(?m)alpha \\d+", b"(?m)(a)\\1", b"(?m)gamma"]  # RE2 has no backreferences
    group = scanner._SetGroup(exprs)
    assert group.kept == [0, 2]
    assert sorted(group.kept[i] for i in group.Match(b"x\ngamma\nalpha 3\n")) == [0, 2]
