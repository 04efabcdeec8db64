"""The catalogue's one-pass literal prefilter and its packed cache give the very answers
of the plain way: every literal tried with `in`, every message made from its row (issue 13).

Why: a pasted log where no rule fires is read against all 26,000 catalogue messages; the
prefilter (hyperscan, or an index of the literals' first characters) and the packed cache
(rows decoded one by one when a line needs them) are there only for speed."""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue, Message, load_catalogue
from kb.rules.catalogue import catalogue as module
from kb.rules.catalogue.literals import LiteralFilter
from kb.rules.catalogue.loader import load_raw, rows_file
from kb.util.re2syntax import compile_re2
from tests.catalogue.entry_label import catalogue_folder

ROOT = Path(__file__).resolve().parents[2]
BATCH = ROOT / "corpora" / "batch-2026-12-01g"


def _lines() -> list[str]:
    """Real log lines of every kind: a corpus batch's logs, and lines cut or odd."""
    lines = [ln for p in sorted(BATCH.glob("*.log")) for ln in p.read_text().splitlines()]
    return [
        *dict.fromkeys(lines),
        "NCCL WARN Connect to 10.0.0.2<43211> failed : Connection refused",
        "",
        "é ünïcode — 错误: NCCL WARN NET/IB : Got completion from peer with error 12",
    ]


ODD = "a lone surrogate \udcff then: Connection refused"  # read with surrogateescape


def _naive(literals: list[str], line: str) -> list[int]:
    return [j for j, lit in enumerate(literals) if lit in line]


def _by_literal(messages: tuple[Message, ...]) -> dict[str, list[Message]]:
    by_literal: dict[str, list[Message]] = {}
    for m in messages:
        if m.usable and m.pattern:
            by_literal.setdefault(m.literal, []).append(m)
    return by_literal


def _plain_match(by_literal: dict[str, list[Message]], line: str) -> list[Message]:
    """`Catalogue.match` as it was: each literal (in the order of its first usable row)
    tried with `in`, its rows' patterns run, the longest template first."""
    found = [
        m
        for lit, ms in by_literal.items()
        if lit in line
        for m in ms
        if compile_re2(m.pattern).search(line)
    ]
    found.sort(key=lambda m: -len(m.template))
    return found


@pytest.fixture(scope="module")
def shipped_literals(cat: Catalogue) -> list[str]:
    return list(cat._prefilter().literals)


def test_both_engines_find_exactly_the_literals_in_a_line(
    cat: Catalogue, shipped_literals: list[str]
) -> None:
    hyperscan = cat._prefilter()
    if importlib.util.find_spec("hyperscan") is not None:
        assert hyperscan.engine == "hyperscan"
    grams = LiteralFilter(shipped_literals)  # no key: nothing to cache by, the gram index
    assert grams.engine == "grams"
    lines = [*_lines(), ODD]
    found = 0
    for line in lines:
        want = _naive(shipped_literals, line)
        assert grams.present(line) == want, line
        assert hyperscan.present(line) == want, line
        found += bool(want)
    assert found > len(lines) // 4  # most real lines do hold some literal


def test_short_empty_and_unicode_literals() -> None:
    literals = ["ab", "", "abcd", "bcde", "错误", "abcdef", "é ü", "x"]
    f = LiteralFilter(literals)
    for line in ["abcdefg", "", "é ünï 错误", "xyz", "ab"]:
        assert f.present(line) == _naive(literals, line), line


def test_the_shipped_catalogue_matches_as_the_plain_way_did(cat: Catalogue) -> None:
    by_literal = _by_literal(cat.messages)
    for line in _lines():
        assert cat.match(line) == _plain_match(by_literal, line), line


LIBRARY = """\
library: demo
source: demo 1.0
versions: "1.0"
messages:
- template: "Cannot open the rendezvous store at %s: %s"
  level: error
  file: store.cc
  versions: "1.0"
  class: cause
  cause: rendezvous-port
- template: "Lost the connection to the training coordinator at %s"
  level: warn
  file: client.cc
  versions: "1.0"
  class: benign
- template: "too short"
  level: warn
  file: client.cc
  versions: "1.0"
  class: benign
"""


def test_a_packed_catalogue_reads_back_its_rows_and_sees_a_changed_file(tmp_path: Path) -> None:
    """The rows come back from the cache as compiled, one by one or all; and the key the
    stat shortcut records never hides an edit (same size, seconds later)."""
    root = catalogue_folder(tmp_path, LIBRARY)
    module._load.cache_clear()
    try:
        line = "Cannot open the rendezvous store at node1:29500: refused"
        cat = load_catalogue(root)
        assert [m.cause for m in cat.match(line)] == ["rendezvous-port"]
        raw = [Message(*row) for row in load_raw(root)["messages"]]
        assert cat.messages == tuple(raw)
        time.sleep(2.2)  # older than the racy window: the next load records the stat key
        module._load.cache_clear()
        assert load_catalogue(root).messages == tuple(raw)
        module._load.cache_clear()
        assert load_catalogue(root).match(line)  # read through the recorded key
        (root / "demo.yaml").write_text(LIBRARY.replace("rendezvous-port", "rendezvous-hop"))
        module._load.cache_clear()
        assert [m.cause for m in load_catalogue(root).match(line)] == ["rendezvous-hop"]
    finally:
        module._load.cache_clear()


def test_rows_removed_while_in_use_are_read_again_from_the_files(tmp_path: Path) -> None:
    """The cache pruned (or removed by hand) after the catalogue was loaded: the rows come
    back from the files, never a catalogue without messages (the compiled rules would be
    cached without its signatures)."""
    root = catalogue_folder(tmp_path, LIBRARY)
    module._load.cache_clear()
    try:
        load_catalogue(root)  # writes the cache
        module._load.cache_clear()
        cat = load_catalogue(root)  # reads it: the rows stay in their file
        assert cat._blob is None
        os.remove(rows_file(cat.key))
        line = "Cannot open the rendezvous store at node1:29500: refused"
        assert [m.cause for m in cat.match(line)] == ["rendezvous-port"]
        assert len(cat.messages) == 3
    finally:
        module._load.cache_clear()
