"""NCCL RAS reports: the real ones captured during the hangs, and the documented 2.24 form."""

from __future__ import annotations

from pathlib import Path

from kb.diagnosis.hangs import ras

HERE = Path(__file__).resolve().parent


def test_the_sleeping_rank_is_behind_with_its_host_and_pid(corpus: Path) -> None:
    text = (corpus / "nccl-sleep" / "ras.txt").read_text()
    assert ras.looks_like(text) and ras.version(text) == "2.28.9"
    assert ras.statements(text) == [
        "dlperf-hang: nccl-ras: rank 2 (process 464 on host 127.0.0.1, GPU 0) of communicator "
        "#0-0 (bd9bf290e6996f53) launched AllReduce operations up to 4 while 2 ranks launched "
        "up to 5: it never reached the next collective (it is behind)"
    ]


def test_the_rank_with_an_extra_collective_is_ahead(corpus: Path) -> None:
    (line,) = ras.statements((corpus / "nccl-extra" / "ras.txt").read_text())
    assert "rank 2 (process 458 on host 127.0.0.1, GPU 0)" in line
    assert line.endswith(
        "up to 9 while 2 ranks launched up to 8: it issued extra collectives (it is ahead)"
    )


def test_the_killed_rank_does_not_answer_then_is_dead(corpus: Path) -> None:
    first = ras.statements((corpus / "nccl-kill" / "ras.txt").read_text())
    assert first == [
        "dlperf-hang: nccl-ras: process 470 on host 127.0.0.1 (GPU 0, rank 2) does not answer: "
        "no communicator data from it",
        "dlperf-hang: nccl-ras: rank 2 (process 470 on host 127.0.0.1, GPU 0) of communicator "
        "#0-0 (573d9a84c44ab7fd) is missing: it does not answer",
        "dlperf-hang: nccl-ras: rank 0 (process 466 on host 127.0.0.1, GPU 0) of communicator "
        "#0-0 (573d9a84c44ab7fd) reported Remote process error",
    ]
    later = ras.statements((corpus / "nccl-kill" / "ras_later.txt").read_text())  # +66 s
    assert later[0] == (
        "dlperf-hang: nccl-ras: process 470 on host 127.0.0.1 (GPU 0, rank 2) is considered "
        "dead: unreachable over the RAS network"
    )
    assert later[1:] == first[1:]


def test_the_2_24_form_of_the_nccl_documentation() -> None:
    """Assembled from the excerpts in NCCL's RAS documentation (2.24 header): DEAD with its
    process, `The missing rank: 21` (2.24 names no host there), and the
    operation counts of 2.24 (`collective operation counts`, several outliers listed)."""
    text = (HERE / "ras" / "nccl-2.24-docs-dead-and-mismatch.txt").read_text()
    assert ras.version(text) == "2.24.3+cuda12.6"
    lines = ras.statements(text)
    assert lines[0] == (
        "dlperf-hang: nccl-ras: process 3487984 on host 172.16.64.213 (GPU 5) is considered "
        "dead: unreachable over the RAS network"
    )
    assert lines[1] == (
        "dlperf-hang: nccl-ras: rank 21 of communicator #0-0 (cf264af53edbe986) is missing: it "
        "does not answer"
    )
    assert [x.split(" (process")[0][-6:] for x in lines[2:]] == ["rank 0", "rank 2"]
    assert all("up to 6649 while 26 ranks launched up to 6650" in x for x in lines[2:])


def test_a_healthy_report_states_nothing() -> None:
    text = """NCCL version 2.24.3+cuda12.6 compiled with CUDA 12.6
CUDA runtime version 12060, driver version 12080

Job summary
===========

  Nodes  Processes         GPUs  Processes     GPUs
(total)   per node  per process    (total)  (total)
      4          8            1         32       32

Communicators... (0.00s)
=============

Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors
    #  in group  per comm  per node  per comm  in group
    0         8         4         1         4        32   RUNNING      OK
"""
    assert ras.looks_like(text)
    assert ras.statements(text) == []


def test_a_small_job_with_unlisted_outliers_still_says_the_counts_differ() -> None:
    text = """#0-0 (27a079b828ff1a75) MISMATCH
  Communicator ranks have different AllReduce operation counts
  1 ranks have launched up to operation 6650
  1 ranks have launched up to operation 6649
"""
    assert ras.statements(text) == [
        "dlperf-hang: nccl-ras: the ranks of communicator #0-0 (27a079b828ff1a75) launched "
        "different numbers of AllReduce operations: 1 rank up to 6650, 1 rank up to 6649"
    ]
