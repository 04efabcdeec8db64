"""Healthy-run awareness: lines that describe the setup are not a diagnosis.

A run that completed (nccl-tests' `Out of bounds values : 0 OK`, a training summary,
`Init COMPLETE` followed by steady progress) is healthy even when its INFO lines say
that NCCL found no libibverbs or sends between nodes over sockets; such context never
outranks a cause shown by an error line either. Tested on the real logs of
batch-2026-11-30a (once tests/heldout2) with the fixture rules (whose nccl-ib-missing fires on those INFO and
warning lines, as the shipped rules once did).
"""

from __future__ import annotations

import pytest
import re2

from kb.diagnosis.analyzers.completion import PROGRESS_LINES, Completion
from kb.diagnosis.engine import diagnose_text
from tests import corpora_loader as corpora

HELDOUT2 = corpora.Corpus("batch-2026-11-30a")  # once tests/heldout2
AWS = (HELDOUT2 / "healthy-aws-g5-2node-tcp-libibverbs-missing-allreduce.log").read_text()


def _ids(diag) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.id for c in diag.causes]


def test_a_completed_tcp_run_without_ib_is_healthy(rules) -> None:
    """Two AWS g5 nodes over TCP: `Failed to open libibverbs.so`, `via NET/Socket`, a
    bus bandwidth of 0.3 GB/s, and `# Out of bounds values : 0 OK`."""
    for fast in (True, False):
        diag = diagnose_text(rules, AWS, fast=fast)
        assert diag.causes == []
        notes = {n.id: n for n in diag.notes}
        assert "nccl-inter-node-sockets" in notes  # said, as an observation
        assert "0.300212 GB/s" in notes["nccl-inter-node-sockets"].text
        done = notes["nccl-ib-missing/completed-run"]
        assert "Out of bounds values : 0 OK" in done.evidence[0].text


def test_the_same_lines_without_the_end_are_a_diagnosis(rules) -> None:
    """Cut before the run did anything, the same INFO lines are all there is."""
    head = "\n".join(AWS.splitlines()[:20]) + "\n"
    diag = diagnose_text(rules, head)
    assert _ids(diag) == ["nccl-ib-missing"]
    assert not any(n.id.endswith("/completed-run") for n in diag.notes)


def test_sockets_between_nodes_are_ib_missing_when_ib_was_expected(rules) -> None:
    """Low bandwidth over sockets is slow only for a job meant to use IB: with
    NCCL_IB_HCA set, the same completed run is diagnosed."""
    expected = AWS.replace("-x NCCL_DEBUG=INFO", "-x NCCL_DEBUG=INFO -x NCCL_IB_HCA=mlx5_0")
    diag = diagnose_text(rules, expected)
    assert _ids(diag) == ["nccl-ib-missing"]
    assert "InfiniBand/RoCE was expected" in diag.causes[0].explanation


def test_a_completed_run_keeps_a_cause_shown_by_a_failure_line(rules) -> None:
    failing = AWS + (
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, "
        "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600012 milliseconds\n"
    )
    assert "nccl-timeout-hang" in _ids(diagnose_text(rules, failing))


def test_a_common_warning_never_outranks_a_fatal_line(rules) -> None:
    """distrifuser#6: `libibverbs: Warning: couldn't open config directory` beside
    `[E ProcessGroupNCCL.cpp:1316] ... Heartbeat monitor timed out!`."""
    text = HELDOUT2 / "timeout-distrifuser-6-abort-heartbeat-monitor-libibverbs-warning.log"
    for fast in (True, False):
        diag = diagnose_text(rules, text.read_text(), fast=fast)
        assert _ids(diag) == ["nccl-timeout-hang", "nccl-ib-missing"]
        first, second = diag.causes
        assert second.confidence < first.confidence
        assert "below a cause shown by an error line" in second.explanation


def test_context_alone_is_still_diagnosed_when_nothing_fails(rules) -> None:
    diag = diagnose_text(rules, "libibverbs: Warning: couldn't open config directory '/etc/x'.\n")
    assert _ids(diag) == ["nccl-ib-missing"]


# ---------------------------------------------------------------- what "completed" means


def _completed(text: str) -> bool:
    c = Completion()
    c.start_file("log")
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        for tap in c.taps:
            if re2.search(tap.pattern, line) and c.wants(tap.id):
                c.deliver(tap.id, n, line)
    c.end_file(list(enumerate(lines, start=1))[-40:])
    facts: dict[str, object] = {}
    c.finish(facts)
    return "log" in facts["completed"]  # type: ignore[operator]


INIT = "node1:12:40 [0] NCCL INFO comm 0x55d rank 0 nranks 16 cudaDev 0 busId 1b000 - Init COMPLETE"


@pytest.mark.parametrize(
    "text",
    [
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 84.8558\n",
        "Training completed at Sat Nov 29 22:08:07 UTC 2025\n",
        "step 50/60 loss 2.35\nstep 60/60 loss 2.34 491942 samples/s\n```\n",
        "total images/sec: 2047.95\n",
        INIT + "\n" + "".join(f"iter {i} loss 0.{i} 120 img/s\n" for i in range(PROGRESS_LINES)),
    ],
)
def test_what_shows_a_run_completed(text: str) -> None:
    assert _completed(text)


@pytest.mark.parametrize(
    "text",
    [
        INIT + "\n" + "".join(f"iter {i} loss 0.{i}\n" for i in range(PROGRESS_LINES - 1)),
        "".join(f"iter {i} loss 0.{i}\n" for i in range(10)) + INIT + "\n",  # before NCCL
        "step 60/60 loss 2.34\nTraceback (most recent call last):\nRuntimeError: boom\n",
        "100%|████| 50/50 [00:01<00:00, 40.67it/s]\n[E ProcessGroupNCCL.cpp:1316] timed out\n",
    ],
)
def test_what_does_not(text: str) -> None:
    assert not _completed(text)
