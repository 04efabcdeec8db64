"""The one definition of matching (kb.diagnosis.matching) and the prefilter in front of it
(kb.diagnosis.scanner): the prefilter must never lose a line a matcher would fire on,
with hyperscan or without it."""

from __future__ import annotations

import pytest

from kb.diagnosis.matching import (
    CompiledMatcher,
    MatcherSpec,
    SignatureMatcher,
    SignatureSpec,
    anchors_of,
    run_signatures,
    signature_spec,
)
from kb.diagnosis.plan import prefilter
from kb.diagnosis.reader import Block
from kb.diagnosis.scanner import Pattern, Scanner
from kb.util.regexlit import literal

LINES = [
    "plain line",
    "vm:1:1 [0] NCCL WARN Connect to 10.0.0.2<4000> failed : Network is unreachable",
    "ANOTHER ONE WITH CAPITALS: NETWORK IS UNREACHABLE",
    "tab\tseparated\tcolumns",
    "specials [x] (y) {z} a+b*c? ^$ | \\ back, aab",
    "  GPU0\tX\tSYS\tNV4",
    "unicode: 设备 ümlaut naïve",
    "",
    "x" * 300 + " needle at the end",
]
SPECS = [
    MatcherSpec(type="regex", pattern=r"Connect to (?P<a>[\d.]+)<(?P<p>\d+)> failed"),
    MatcherSpec(type="regex", pattern=r"^\s*GPU\d+\s+X\s+SYS"),
    MatcherSpec(type="regex", pattern=r"network is unreachable", ignore_case=True),
    MatcherSpec(type="regex", pattern=r"columns$"),
    MatcherSpec(type="regex", pattern=r"设备 \S+"),
    MatcherSpec(type="regex", pattern=r"\pL+ naïve"),
    MatcherSpec(type="regex", pattern=r"(?U)a+b"),
    MatcherSpec(type="substring", text="[x] (y) {z} a+b*c? ^$ | \\ back"),
    MatcherSpec(type="substring", text="NEEDLE", ignore_case=True),
    MatcherSpec(type="fuzzy", text="NCCL WARN Connect to 1.2.3.4<1> failed : Network unreachable"),
    MatcherSpec(type="regex", pattern=r"x*"),  # matches everywhere, even empty lines
]


def _block(lines: list[str]) -> Block:
    data = ("\n".join(lines) + "\n").encode()
    return Block(data, 0, len(data), 1, len(lines), len(data))


@pytest.mark.parametrize("use_hyperscan", [True, False])
def test_prefilter_keeps_every_line_a_matcher_fires_on(use_hyperscan: bool) -> None:
    patterns = [prefilter(s) for s in SPECS]
    scanner = Scanner(patterns, use_hyperscan=use_hyperscan)
    found: dict[int, set[int]] = {}
    for line_no, _start, pids in scanner.candidates(_block(LINES), lambda _pid: True):
        for pid in pids:
            found.setdefault(pid, set()).add(line_no)
    for i, spec in enumerate(SPECS):
        m = CompiledMatcher(spec)
        want = {n for n, line in enumerate(LINES, start=1) if m.search(line)}
        assert want <= found.get(i, set()), (spec, want, found.get(i))
        assert want, f"test data should exercise {spec}"


def test_hyperscan_takes_ascii_patterns_and_leaves_the_rest_to_re2() -> None:
    scanner = Scanner([Pattern("foo"), Pattern("设备"), Pattern(r"\pL+x"), Pattern("(?U)a+")])
    assert scanner.engine == "hyperscan+utf8+re2"
    assert scanner._hs_ids == {0}  # byte mode: ASCII patterns only
    assert scanner._utf8_set_ids == [1]  # UTF-8 mode, RE2 where a block is not UTF-8
    assert scanner._set_ids == [2, 3]  # what hyperscan cannot read as RE2 does


@pytest.mark.parametrize("broken", [False, True], ids=["utf-8", "invalid-utf-8"])
def test_a_non_ascii_pattern_finds_its_lines_in_any_block(broken: bool) -> None:
    # the seed notes' Chinese wording, in a log that may carry a stray Latin-1 byte
    lines = ["NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>", "容器使用桥接模式，多机无法通信"]
    data = ("\n".join(lines) + "\n").encode()
    if broken:
        data = b"caf\xe9 au lait\n" + data
    block = Block(data, 0, len(data), 1, len(lines) + broken, len(data))
    for chars in ("桥接模式", "桥接.式", "[桥]接模式"):  # a literal, a dot, a class
        scanner = Scanner([Pattern("NET/Socket"), Pattern(chars)])
        got = {
            pid: n
            for n, _start, pids in scanner.candidates(block, lambda _pid: True)
            for pid in pids
        }
        assert got == {0: 1 + broken, 1: 2 + broken}, chars


def test_literal_escapes_every_regex_character() -> None:
    import re2

    text = "a.b*c+d?e(f)[g]{h}|i^j$k\\l/m#n-o"
    assert re2.search(literal(text), "xx" + text + "yy")
    assert not re2.search(literal("a.b"), "axb")


def test_fuzzy_anchor_words_skip_common_log_words() -> None:
    assert anchors_of("NCCL WARN Connect to fe80::1%13<45166> failed : Network is unreachable") == (
        "connect",
        "network",
        "unreachable",
    )
    fuzzy = CompiledMatcher(MatcherSpec(type="fuzzy", text="NCCL WARN Call to ibv_reg_mr failed"))
    assert fuzzy.search("node1:2:3 [0] NCCL WARN Call to ibv_reg_mr failed (retry 3)")
    assert fuzzy.search("NCCL WARN Call to failed") is None  # no anchor word


def test_fuzzy_verdicts_are_shared_by_lines_that_differ_in_numbers() -> None:
    fuzzy = CompiledMatcher(MatcherSpec(type="fuzzy", text="Connection reset by peer on rank 3"))
    assert fuzzy.search("Connection reset by peer on rank 12")
    assert fuzzy.search("Connection reset by peer on rank 45")
    assert len(fuzzy._by_shape) == 1


def test_pydantic_signatures_and_specs_behave_the_same() -> None:
    from kb.rules.schema.models import Signature

    sig = Signature.model_validate(
        {
            "id": "s",
            "weight": 0.7,
            "alone": False,
            "note": {"en": "seen", "zh": "见"},
            "matchers": [{"type": "regex", "pattern": r"port (?P<port>\d+)"}],
            "unless": [{"type": "substring", "text": "ignored", "scope": "line"}],
            "extract": {"host": r"host=(\w+)"},
        }
    )
    spec = signature_spec(sig)
    assert spec == SignatureSpec.from_json(spec.to_json())
    assert spec.note == "seen"
    lines = ["host=a1 port 80", "port 81 ignored", "nothing"]
    by_model = run_signatures([sig], lines)[0]
    by_spec = run_signatures([spec], lines)[0]
    assert [h.line_no for h in by_model.hits] == [h.line_no for h in by_spec.hits] == [1]
    assert by_model.params == by_spec.params == {"port": "80", "host": "a1"}


def test_and_condition_needs_every_matcher_in_the_same_log() -> None:
    spec = SignatureSpec(
        "both",
        (MatcherSpec(type="substring", text="alpha"), MatcherSpec(type="substring", text="beta")),
        condition="and",
    )
    m = SignatureMatcher(spec)
    m.feed(1, "alpha")
    assert m.result() is None
    m.feed(2, "beta")
    got = m.result()
    assert got is not None and [h.line_no for h in got.hits] == [1, 2]
    m.reset()
    assert m.result() is None


@pytest.mark.slow
def test_a_pattern_too_large_for_hyperscan_is_prefiltered_by_it_when_lines_are_confirmed() -> None:
    # "warm-up longer than the iterations", digit by digit: hyperscan says "too large"
    alts = [
        rf"{d}\d{{{k}}}\b.*--[\w-]*(?:iter|batches)[\w-]*[= ][1-{d - 1}]\d{{{k}}}\b"
        for k in range(1, 5)
        for d in range(2, 10)
    ]
    big = "--warm[_-]?up[= ](?:" + "|".join(alts) + ")"
    lines = ["train --warmup 500 --num_iters 100 x", "train --warmup 500 --iters 900", "noise"]
    exact = Scanner([Pattern(big)])
    approx = Scanner([Pattern(big)], approximate=frozenset({0}))
    assert exact._set_ids == [0]  # the slow RE2 fallback
    assert approx._set_ids == [] and approx.engine == "hyperscan"
    found = {n for n, _s, _p in approx.candidates(_block(lines), lambda _pid: True)}
    m = CompiledMatcher(MatcherSpec(type="regex", pattern=big))
    assert {n for n, line in enumerate(lines, start=1) if m.search(line)} == {1} <= found
