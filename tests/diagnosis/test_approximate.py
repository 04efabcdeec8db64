"""Fuzzy and partial input, for real (issue 9, part 2).

A user types a line from memory (`NCCL WARN Connect to fe80`), lower-cased, without its
punctuation, cut short, or pastes it re-wrapped. When no signature fires on such a short
input, the closest known messages (the rules' examples, the message catalogue) answer,
marked `basis: approximate`, the known message beside the user's text with a score.
Measured on hand-typed lines across causes: the right cause is in the top 3 for at
least 90 % of them; random prose and ordinary healthy lines match nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis.approximate import SHORT_LINES, approximate_causes, shape
from kb.diagnosis.engine import diagnose_text

# typed from memory: cut short, lower-cased, punctuation and numbers dropped, re-wrapped
TYPED = [
    ("NCCL WARN Connect to fe80", "nccl-wrong-interface"),
    ("nccl warn connect to fe80 failed network is unreachable", "nccl-wrong-interface"),
    ("posix_fallocate failed no space left on device", "nccl-shm-too-small"),
    ("NCCL WARN Error while creating shared memory segment", "nccl-shm-too-small"),
    ("got completion with error 12 vendor err 129", "nccl-ib-fabric-error"),
    (
        "NCCL WARN NET/IB : Got completion from peer\nwith error 12, opcode 0, len 0, vendor err 129",
        "nccl-ib-fabric-error",
    ),
    ("Call to ibv_reg_mr failed Cannot allocate memory", "memlock-limit"),
    ("libibverbs warning RLIMIT_MEMLOCK is 32768 bytes", "memlock-limit"),
    ("cuda failure 217 peer access is not supported between these two devices", "nccl-p2p-failure"),
    ("Test CUDA failure common.cu invalid device ordinal", "gpu-rank-mapping"),
    ("failed to open CUDA IPC handle 30 unknown error", "duplicate-hostname"),
    ("libnccl.so.2 cannot open shared object file", "nccl-missing-or-mismatch"),
    ("undefined symbol ncclCommRegister", "nccl-missing-or-mismatch"),
    ("cuda driver version is insufficient for cuda runtime", "cuda-driver-too-old"),
    ("libcudart.so.10.1 cannot open shared object file no such file", "cuda-lib-missing"),
    ("CUDA out of memory tried to allocate 512 MiB", "gpu-out-of-memory"),
    ("OOM when allocating tensor with shape", "gpu-out-of-memory"),
    ("there are not enough slots available in the system to satisfy", "mpi-launch-failure"),
    ("Permission denied (publickey,password)", "ssh-passwordless-missing"),
    (
        "the server socket has failed to bind to 0.0.0.0:29500 address already in use",
        "port-in-use",
    ),
    ("No module named 'official'", "pythonpath-missing"),
    ("module tensorflow has no attribute contrib", "code-version-mismatch"),
    ("Mismatched collective detected please check your collective calls", "nccl-timeout-hang"),
    ("watchdog caught collective operation timeout", "nccl-timeout-hang"),
    ("Out of memory: Killed process 1234 (python)", "host-out-of-memory"),
    ("DataLoader worker is killed by signal Killed", "host-out-of-memory"),
    ("fatal error numa.h no such file or directory", "mpi-build-deps"),
    ("cuda failure 802 system not yet initialized", "nccl-nvls-fabric"),
    ("Bind to port 22 on 0.0.0.0 failed address in use", "docker-network-mode"),
    ("bootstrap no socket interface found", "nccl-wrong-interface"),
]

PROSE = [
    "The quick brown fox jumps over the lazy dog",
    "I think my training is slower today than it was yesterday, any idea why?",
    "We bought some milk and bread at the store on the corner",
    "The meeting was moved to Thursday afternoon at the main office",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor",
    "my cat is sleeping on the keyboard again",
    "Please help me, my job does not work",
    "Epoch 1/10 loss 0.2312 acc 0.91",
    "step 100/1000 loss 2.1 lr 0.001",
    "worker group successfully finished",
    "Training completed in 3 hours, all ranks finished",
]


@pytest.mark.slow
def test_typed_lines_get_the_right_cause_in_the_top_3(shipped: Any) -> None:
    top3 = approximate = 0
    misses = []
    for text, want in TYPED:
        diag = diagnose_text(shipped, text + "\n")
        ids = [c.id for c in diag.causes[:3]]
        top3 += want in ids
        approximate += bool(diag.causes) and diag.causes[0].basis == "approximate"
        if want not in ids:
            misses.append((text, want, ids))
    assert len(TYPED) >= 20
    assert top3 >= 0.9 * len(TYPED), misses
    # most of them fire no signature: the approximate path is what answers them
    assert approximate >= len(TYPED) // 2


def test_an_approximate_answer_shows_the_known_message_and_a_score(shipped: Any) -> None:
    out = diagnose_text(shipped, "NCCL WARN Connect to fe80\n").to_json()
    first = out["causes"][0]
    assert first["id"] == "nccl-wrong-interface"
    assert first["basis"] == "approximate"
    near = first["approximate"]
    assert near["text"] == "NCCL WARN Connect to fe80"
    assert "Connect to fe80::" in near["known"] and "Network is unreachable" in near["known"]
    assert 72 <= near["score"] <= 100
    assert near["source"].startswith(("rules/", "catalogue/"))
    assert first["confidence"] < 0.5  # below what a signature proves
    assert "failure" not in out


@pytest.mark.parametrize("text", PROSE)
def test_random_prose_matches_nothing(shipped: Any, text: str) -> None:
    diag = diagnose_text(shipped, text + "\n")
    assert diag.causes == [] and diag.failure is None


def test_masking_makes_numbers_addresses_and_paths_alike() -> None:
    a = shape("Connect to 10.0.0.2<43211> failed : /opt/nccl/lib/libnccl.so.2 0x7f3a")
    b = shape("connect to 172.17.0.5<9> failed /usr/lib/libnccl.so.2 0xdead")
    assert a == b


def test_a_longer_excerpt_compares_only_its_error_lines(shipped: Any) -> None:
    """In a paste longer than `SHORT_LINES`, a plain line (no error word) is prose or
    output, not a typed message: it answers nothing, where alone it would."""
    line = "there are not enough slots available in the system to satisfy\n"
    assert diagnose_text(shipped, line).causes[0].id == "mpi-launch-failure"
    filler = "".join(f"epoch {i} started\n" for i in range(SHORT_LINES))
    diag = diagnose_text(shipped, filler + line)
    assert all(c.basis != "approximate" for c in diag.causes)
    assert diag.causes == []


def test_an_error_line_in_a_longer_excerpt_is_compared(shipped: Any) -> None:
    """A title that is the error with the user's words in place of its errno, above a
    traceback cut before its exception: the closest known message
    (c10d's `The server socket has failed to bind to ...`) answers."""
    text = (  # OpenRLHF/OpenRLHF#618, its title and traceback
        "The server socket has failed to bind to [::]:29500, deepspeed 端口被占用，"
        "使用的是8张H100，切换deepspeed 端口同样会有占用\n"
        "Traceback (most recent call last):\n"
        '  File "train_sft.py", line 252, in <module>\n'
        "    train(args)\n"
        '  File "deepspeed/comm/torch.py", line 142, in init_process_group\n'
        "    torch.distributed.init_process_group(backend,\n"
    )
    diag = diagnose_text(shipped, text)
    assert diag.causes and diag.causes[0].id == "port-in-use"
    assert diag.causes[0].basis == "approximate"
    assert diag.causes[0].approximate is not None
    assert "failed to bind to" in diag.causes[0].approximate.known


@pytest.mark.slow
def test_the_word_index_keeps_every_message_the_full_scan_finds(shipped: Any) -> None:
    """The index only skips messages that score 0: on real lines of every kind, each
    message a full scan scores above 0 is among its candidates."""
    from kb.diagnosis.approximate import (
        _spans,
        cut_ends,
        known_messages,
        score,
        word_index,
        words_of,
    )
    from kb.diagnosis.failure import load_catalogue

    corpus = known_messages(shipped, load_catalogue())
    index = word_index(corpus)
    lines = [*(t for t, _ in TYPED), *PROSE]
    lines += [  # cut at both ends, a one-word line, a Chinese title
        "annot open shared object file: No such file or director",
        "ncclSystemError ncclSystemError ncclSystemError",
        "运行报错：NCCL WARN NET/IB : Got completion from peer with error 12",
    ]
    compared = 0
    for text in lines:
        for line_shape in _spans(text):
            words, ends = words_of(line_shape), cut_ends(line_shape)
            full = {i for i, k in enumerate(corpus) if score(line_shape, words, k, ends) > 0}
            assert full <= set(index.candidates(words, ends)), text
            compared += bool(full)
    assert compared >= len(TYPED) // 2  # most lines do have close messages


def test_an_info_line_is_setup_not_a_typed_error(shipped: Any) -> None:
    got = approximate_causes(
        shipped, [("-", 1, "gpu01:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled")], {}
    )
    assert got == []


@pytest.mark.slow
def test_cli_prints_the_typed_line_beside_the_known_one(cli: Any, tmp_path: Path) -> None:
    proc = cli("diagnose", "-", input="nccl warn connect to fe80\n", rules=None)
    assert proc.returncode == 1, proc.stderr
    assert "approximate match" in proc.stdout
    assert "You wrote:     nccl warn connect to fe80" in proc.stdout
    assert "Known message: " in proc.stdout and "% alike" in proc.stdout
    data = json.loads(
        cli("diagnose", "--json", "-", input="nccl warn connect to fe80\n", rules=None).stdout
    )
    assert data["causes"][0]["basis"] == "approximate"


def test_a_message_that_only_shares_a_frame_with_a_known_one_is_not_it(shipped) -> None:
    """`NCCL error in: ProcessGroupNCCL.cpp:N, unhandled cuda error` shares c10d's frame with
    a known `..., internal error ... Call to bind failed : Address already in use`
    (port-in-use), but each has words the other lacks: that is another message, and the
    NCCL error's own kind ranks its causes."""
    line = (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
        "unhandled cuda error, NCCL version 2.14.3\n"
    )
    diag = diagnose_text(shipped, line)
    assert diag.causes and all(c.basis != "approximate" for c in diag.causes)
    assert "port-in-use" not in [c.id for c in diag.causes]


def test_an_examples_context_lines_are_no_known_messages(shipped) -> None:
    """Of a multi-line `match` example, only the lines the rule's matchers fire on stand
    for its cause (a traceback's frames above the error say nothing alone)."""
    from kb.diagnosis.approximate import evidence_lines

    node = shipped.causes["port-in-use"]
    example = (
        '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 190\n'
        "RuntimeError: Address already in use\n"
    )
    assert evidence_lines(example, node) == ["RuntimeError: Address already in use"]
    assert evidence_lines("OSError: [Errno 98] Address already in use", node) == [
        "OSError: [Errno 98] Address already in use"
    ]
