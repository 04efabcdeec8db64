"""Lines that flood a matcher without ever counting: the scan must stop looking at them.

A signature whose line-scope `unless` rejects every line its matcher fires on (an
sshd log of a million `kex_exchange_identification` lines) used to be fed every one
of them. Once it has rejected `VETO_FLOOD` lines, the session scans for its pattern in
a copy of each block without the lines its veto rejects (found by automaton), so the
flood costs no Python work per line; a real hit after the flood is still found, and
the result is the reference path's. A fuzzy text's anchor words count only as words
(`connect` is not in `connection`), so chatter with longer words is not a candidate.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.diagnosis import pipeline, reader
from kb.diagnosis.engine import diagnose_paths
from kb.diagnosis.matching import CompiledMatcher, MatcherSpec
from kb.diagnosis.pipeline import VETO_FLOOD, Session

SERVER = "Nov 29 10:00:{s:02d} gw sshd[{pid}]: error: kex_exchange_identification: Connection closed by remote host"
CLIENT = "kex_exchange_identification: Connection closed by remote host"


def _flood(tmp_path: Path, n: int, real_at: int | None) -> Path:
    lines = [SERVER.format(s=i % 60, pid=1000 + i) for i in range(n)]
    if real_at is not None:
        lines.insert(real_at, CLIENT)
    path = tmp_path / "auth.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _comparable(diag) -> dict:  # type: ignore[no-untyped-def,type-arg]
    out = diag.to_json(explain=True)
    out["stats"].pop("seconds")
    return out


@pytest.mark.parametrize("real_at", [None, 19_990])
@pytest.mark.slow
def test_a_veto_flood_gives_the_reference_result(rules, tmp_path, monkeypatch, real_at) -> None:
    monkeypatch.setattr(reader, "CHUNK", 64 * 1024)
    path = _flood(tmp_path, 20_000, real_at)
    fast = _comparable(diagnose_paths(rules, [path]))
    ref = _comparable(diagnose_paths(rules, [path], fast=False))
    assert fast == ref
    found = [c["id"] for c in fast["causes"]]
    assert found == ([] if real_at is None else ["ssh-port-unreachable"])
    if real_at is not None:
        assert fast["causes"][0]["evidence"][0]["line"] == real_at + 1


@pytest.mark.slow
def test_after_the_flood_the_vetoed_lines_are_not_fed(rules, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(reader, "CHUNK", 64 * 1024)
    path = _flood(tmp_path, 20_000, None)
    session = Session(rules)
    session.run([(str(path), lambda: reader.open_input(str(path)))])
    flooded = [sm for sm in session._matchers.values() if sm.line_vetoed]
    assert len(flooded) == 1
    per_block = 64 * 1024 // len(SERVER) + 1
    assert VETO_FLOOD <= flooded[0].line_vetoed <= VETO_FLOOD + per_block  # not 20 000


def test_without_the_flood_switch_every_line_is_fed(rules, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(reader, "CHUNK", 64 * 1024)
    monkeypatch.setattr(pipeline, "VETO_FLOOD", 10**9)
    path = _flood(tmp_path, 5_000, None)
    session = Session(rules)
    session.run([(str(path), lambda: reader.open_input(str(path)))])
    assert max(sm.line_vetoed for sm in session._matchers.values()) == 5_000


def test_fuzzy_anchor_words_count_only_as_whole_words() -> None:
    fuzzy = CompiledMatcher(
        MatcherSpec(
            type="fuzzy", text="NCCL WARN Connect to 1.2.3.4<1> failed : Network unreachable"
        )
    )
    assert fuzzy.search(
        "gpu1:2:3 [0] NCCL WARN Connect to 10.0.0.9<4000> failed : Network unreachable"
    )
    before = dict(fuzzy._by_key)
    assert fuzzy.search("sshd[1]: Connection closed by remote host connectivity ok") is None
    assert fuzzy._by_key == before  # rejected by its anchor words, before any comparison
