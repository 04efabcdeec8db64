"""A job that builds communicators again and again prints the same NCCL channel lines
again (only the host:pid:tid prefix differs): each distinct line is parsed once
(`kb.diagnosis.analyzers.nccl_lines._channel`), and what the analyzer records must be
what parsing every line gives: one channel per distinct channel of each process, the
evidence of its first line, its printer (a line repeating a known channel adds
nothing: `State.add_channel`)."""

from __future__ import annotations

import pytest

from kb.diagnosis.analyzers import nccl_lines
from kb.diagnosis.analyzers.nccl import NcclInfo

from .conftest import HELDOUT

LOG = HELDOUT / "healthy-deepspeed-4715-two-node-ibext-p2p-channels.log"


def _channel_lines() -> list[str]:
    lines = LOG.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if " NCCL INFO Channel " in line and " via " in line]


def _read(lines: list[str]) -> NcclInfo:
    a = NcclInfo()
    a.start_file("job.log")
    for n, text in enumerate(lines, 1):
        a.deliver("channel", n, text)
    return a


def _facts(a: NcclInfo) -> list[tuple[object, ...]]:
    return [
        (c.a, c.b, c.via, c.proc, c.dev_a, c.dev_b, c.printer, c.ev.line, c.ev.start, c.ev.end)
        for c in a.s.channels
    ]


def _uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nccl_lines, "CHANNEL_CACHE", 0)
    monkeypatch.setattr(nccl_lines, "_CHANNELS", {})


def test_a_repeated_channel_line_gives_a_channel_with_its_own_evidence() -> None:
    real = _channel_lines()
    assert len(real) >= 10
    once = _read(real).s.channels
    distinct, moved = len(once), sum(1 for c in once if c.proc[1] == "32092")
    assert 0 < moved < distinct < len(real)  # channels 00 and 01 join ranks the same way
    again = [line.replace(":32092:32486 ", ":40001:40007 ") for line in real]
    a = _read(real + again)
    assert len(a.s.channels) == distinct + moved  # only the new process's are new
    for c in a.s.channels:
        assert c.ev.text[c.ev.start : c.ev.end] == c.via  # the span is this line's `via`
    first, second = a.s.channels[0], a.s.channels[distinct]
    assert (first.a, first.b, first.via, first.printer) == (1, 4, "NET/IBext/0", 1)
    assert (second.via, second.printer) == (first.via, first.printer)
    assert second.ev.line == len(real) + 1


def test_the_cache_changes_nothing_full_or_emptied(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _channel_lines() * 3 + ["h:1:1 [0] NCCL INFO Channel 00/0 : not a channel line"]
    monkeypatch.setattr(nccl_lines, "_CHANNELS", {})
    cached = _facts(_read(lines))
    monkeypatch.setattr(nccl_lines, "CHANNEL_CACHE", 4)  # emptied again and again
    monkeypatch.setattr(nccl_lines, "_CHANNELS", {})
    small = _facts(_read(lines))
    _uncached(monkeypatch)
    assert cached == small == _facts(_read(lines))
    # the copies and the line that is no channel add none
    assert cached == _facts(_read(_channel_lines()))


def test_a_rank_keeps_the_first_version_it_printed() -> None:
    a = NcclInfo()
    a.start_file("job.log")
    a.deliver("version", 1, "gpu1:7:7 [0] NCCL INFO NCCL version 2.18.3+cuda12.2")
    a.deliver("version", 2, "gpu1:7:7 [0] NCCL INFO NCCL version 2.21.5+cuda12.4")
    a.deliver("network", 3, "gpu1:7:7 [0] NCCL INFO Using network IB")
    a.deliver("network", 4, "gpu1:7:9 [0] NCCL INFO Using network IB")
    proc = a.s.procs[("gpu1", "7")]
    assert proc.version is not None
    assert (proc.version[0], proc.version[1].line) == ("2.18.3", 1)
    assert a.s.networks["IB"].line == 3
