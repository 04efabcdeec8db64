"""How evidence becomes a ranked, explained confidence: location, generic words, generic
causes, notes, several logs at once and the first failure across ranks."""

from __future__ import annotations

from pathlib import Path

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.ranking import LIKELY
from tests import corpora_loader as corpora

CUDA = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"


def test_a_tracebacks_final_exception_counts_more_than_an_info_line(rules) -> None:
    final = diagnose_text(rules, 'Traceback (most recent call last):\n  File "x", line 1\n' + CUDA)
    info = diagnose_text(
        rules,
        "I1129 12:00:00.1 loader.cc:9] INFO retry: libcudart.so.10.1: "
        "cannot open shared object file",
    )
    assert final.causes[0].confidence > info.causes[0].confidence
    assert "traceback's final exception" in final.causes[0].explanation
    assert "info line" in info.causes[0].explanation


def test_one_generic_word_never_makes_a_diagnosis(rules) -> None:
    diag = diagnose_text(rules, "ERROR: something went wrong\nerror again\nanother error\n")
    assert diag.causes == []


def test_a_supporting_signature_alone_is_a_note_not_a_cause(rules) -> None:
    diag = diagnose_text(rules, "vm:1:1 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>\n")
    assert diag.causes == []
    assert [n.id for n in diag.notes] == ["nccl-wrong-interface/virtual-interface-chosen"]
    assert diag.notes[0].text == "NCCL chose a virtual interface."
    assert diag.notes[0].evidence[0].line == 1


def test_a_log_scope_veto_silences_the_signature(rules) -> None:
    diag = diagnose_text(
        rules,
        "vm:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to x\n"
        "vm:1:1 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>\n",
    )
    assert diag.notes == []


def test_a_generic_cause_alone_is_reported(rules) -> None:
    diag = diagnose_text(
        rules,
        "[Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=5, OpType=ALLREDUCE)\n",
    )
    assert [c.id for c in diag.causes] == ["nccl-timeout-hang"]
    assert diag.causes[0].params["seq"] == "5"
    assert diag.causes[0].confidence >= LIKELY


def test_reworded_line_matches_fuzzily(rules) -> None:
    # another NCCL version, address and port; the regex needs "Network is unreachable"
    line = "gpu7:99:101 [3] NCCL WARN Connect to 10.1.2.3%eth0<6000> failed: Network unreachable"
    diag = diagnose_text(rules, line + "\n")
    assert [c.id for c in diag.causes] == ["nccl-wrong-interface"]


def test_several_logs_are_diagnosed_together_with_the_first_failure(rules, tmp_path: Path) -> None:
    r0 = tmp_path / "rank0.log"
    r1 = tmp_path / "rank1.log"
    r0.write_text(
        "[2026-11-29 10:00:05] gpu1:11:11 [0] NCCL WARN Connect to 10.0.0.2<4000> "
        "failed : Network is unreachable\n"
    )
    r1.write_text(
        "hello\n[2026-11-29 10:00:02] gpu2:22:22 [1] NCCL WARN Connect to 10.0.0.1"
        "<4001> failed : Network is unreachable\n"
    )
    diag = diagnose_paths(rules, [r0, r1])
    assert diag.stats.files == 2
    cause = diag.causes[0]
    assert {e.file for e in cause.evidence} == {str(r0), str(r1)}
    assert diag.first_failure == {
        "file": str(r1),
        "line": 2,
        "host": "gpu2",
        "rank": 1,
        "time": "2026-11-29 10:00:02",
    }


def test_no_first_failure_from_a_single_timestamped_line(rules) -> None:
    diag = diagnose_text(rules, "[2026-11-29 10:00:05] " + CUDA + "\n")
    assert diag.first_failure is None


def test_torchrun_root_cause_names_the_first_failure(rules) -> None:
    text = "\n".join(
        [
            CUDA,
            "Root Cause (first observed failure):",
            "[0]:",
            "  time      : 2026-11-29_19:54:46",
            "  host      : node7",
            "  rank      : 3 (local_rank: 3)",
        ]
    )
    diag = diagnose_text(rules, text, name="launcher.log")
    assert diag.first_failure == {
        "file": "launcher.log",
        "line": 2,
        "host": "node7",
        "rank": 3,
        "time": "2026-11-29_19:54:46",
    }


def test_json_evidence_is_cut_around_the_match(rules) -> None:
    diag = diagnose_text(rules, "x" * 3000 + " " + CUDA + "\n")
    shown = diag.causes[0].evidence[0].to_json()["text"]
    assert len(shown) == 500
    assert "libcudart.so.10.1: cannot open shared object file" in shown


def test_the_first_failure_is_a_specific_causes_line_not_a_later_timeout(
    rules, tmp_path: Path
) -> None:
    unreachable = "NCCL WARN Connect to 10.0.0.9<4000> failed : Network is unreachable"
    r0 = tmp_path / "rank0.log"
    r1 = tmp_path / "rank1.log"
    r0.write_text(
        "[2026-11-29 10:00:01] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=9, OpType=ALLREDUCE)\n"
        f"[2026-11-29 10:00:09] gpu1:11:11 [0] {unreachable}\n"
    )
    r1.write_text(f"[2026-11-29 10:00:03] gpu2:22:22 [1] {unreachable}\n")
    diag = diagnose_paths(rules, [r0, r1])
    assert [c.id for c in diag.causes] == ["nccl-wrong-interface", "nccl-timeout-hang"]
    assert diag.first_failure is not None
    assert (diag.first_failure["file"], diag.first_failure["line"]) == (str(r1), 1)


def test_a_workaround_that_points_at_a_failure_outranks_a_slow_topology(rules) -> None:
    # PCIe topology (PXB/PIX/SYS), "the rest will result in hanging", P2P_DISABLE=1 works
    path = corpora.path("batch-2026-11-29", "p2p-nccl-667-hang-pxb-pix-p2p-disable-workaround.log")
    diag = diagnose_paths(rules, [path])
    ids = [c.id for c in diag.causes]
    assert ids[0] == "nccl-p2p-failure"
    topology = {c.id: c for c in diag.causes}.get("gpu-topology-slow")
    if topology is not None:  # still worth reading, below the failure
        assert "cause of slowness only below a specific failure" in topology.explanation
        assert topology.confidence < diag.causes[0].confidence


def test_a_slow_job_keeps_the_topology_in_its_own_rank(rules) -> None:
    topo = (
        "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n"
        "GPU0\t X \tSYS\tSYS\tSYS\t0-11\nGPU1\tSYS\t X \tSYS\tSYS\t0-11\n"
        "GPU2\tSYS\tSYS\t X \tSYS\t12-23\nGPU3\tSYS\tSYS\tSYS\t X \t12-23\n"
    )
    workaround = "Setting NCCL_P2P_DISABLE=1 did workaround but got really low speed.\n"
    table = "| GPUs | Throughput (img/s) |\n|---|---|\n| 1 | 320 |\n| 4 | 500 |\n"
    hang = diagnose_text(rules, topo + workaround)
    slow = diagnose_text(rules, topo + workaround + table)
    assert hang.causes[0].id == "nccl-p2p-failure"
    by_id = {c.id: c.confidence for c in slow.causes}
    assert [c.id for c in slow.causes] == sorted(by_id, key=lambda i: -by_id[i])
    assert "capped" not in " ".join(c.explanation for c in slow.causes)
