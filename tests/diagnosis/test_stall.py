"""A log that ends where progress should have started is a hang at start-up.

The last meaningful line of a log (blank lines, code fences, `...`, `^C` aside) that a
working run always follows with more output (TensorFlow's `Started server with target:
grpc://`, Lightning's `Initializing distributed`, a launcher waiting for workers) gives
the symptom `rendezvous-fails`; its causes then compete on what the logs show. A log
ending in NCCL's init lines is only a note: healthy start-ups are pasted that way too.
"""

from __future__ import annotations

import pytest

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.model import BASIS_SYMPTOM

from .conftest import DATA_CORPUS, HELDOUT

TF_SERVER = (
    "2019-03-18 11:31:10.910716: I tensorflow/core/distributed_runtime/rpc/"
    "grpc_server_lib.cc:391] Started server with target: grpc://localhost:2225"
)


def test_the_real_tf_log_stuck_after_its_server_started(rules) -> None:
    diag = diagnose_paths(rules, [DATA_CORPUS / "tfdist-adanet-76-stuck-started-server.log"])
    assert diag.symptoms == ["rendezvous-fails"]
    first = diag.causes[0]
    assert (first.id, first.basis) == ("tf-distribution-strategy", BASIS_SYMPTOM)
    assert "the logs show tensorflow: x2" in first.explanation
    assert first.evidence[0].line == 1
    # the Paddle cause, as likely a priori, falls behind in a TensorFlow log
    ids = [c.id for c in diag.causes]
    assert "paddle-launch-mode" not in ids[:1]


@pytest.mark.parametrize(
    "last",
    [
        TF_SERVER,
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4",
        "[INFO] Waiting for the workers to join...",
        "2023-01-01 10:00:00 I0101 master.py:88] waiting for 3 nodes",
        "CreateSession still waiting for response from worker: /job:worker/replica:0/task:1",
    ],
)
def test_start_up_lines_at_the_end_of_a_log_are_a_hang(rules, last: str) -> None:
    noise = "\n```\n\n...\n^C\n"
    diag = diagnose_text(rules, "python train.py --workers 2\n" + last + noise)
    assert diag.symptoms == ["rendezvous-fails"], last
    assert diag.causes and all(c.basis == BASIS_SYMPTOM for c in diag.causes)
    assert diag.causes[0].evidence[0].line == 2


def test_start_up_followed_by_progress_is_fine(rules) -> None:
    diag = diagnose_text(rules, TF_SERVER + "\nStep 100: loss = 0.3\nStep 200: loss = 0.2\n")
    assert diag.causes == [] and diag.symptoms == []


def test_only_the_end_of_each_log_counts(rules, tmp_path) -> None:
    stuck, fine = tmp_path / "worker1.log", tmp_path / "worker0.log"
    stuck.write_text("booting\n" + TF_SERVER + "\n")
    fine.write_text(TF_SERVER + "\nStep 1: loss = 0.9\n")
    assert diagnose_paths(rules, [fine]).causes == []
    both = diagnose_paths(rules, [fine, stuck])
    assert both.symptoms == ["rendezvous-fails"]
    assert both.causes[0].evidence[0].file == str(stuck)


def test_a_log_ending_in_nccl_init_is_a_note_not_a_cause(rules) -> None:
    lines = [
        f"gpu01:1:{t} [{r}] NCCL INFO Channel 00/0 : {r}[{r}] -> {r + 1}[{r + 1}] via P2P/IPC"
        for t, r in enumerate(range(3))
    ]
    diag = diagnose_text(rules, "\n".join(lines) + "\n")
    assert diag.causes == []
    assert [n.id for n in diag.notes] == ["log-ends-in-nccl-init"]
    done = "gpu01:1:9 [0] NCCL INFO comm 0x1 rank 0 nranks 4 cudaDev 0 - Init COMPLETE"
    assert diagnose_text(rules, "\n".join([done, *lines]) + "\n").notes == []
    trace = "gpu01:1:9 [0] NCCL INFO misc/socket.cc:573 -> 3"  # an error's trace, not init
    assert diagnose_text(rules, "\n".join([*lines, trace]) + "\n").notes == []


def test_healthy_snippets_that_end_in_nccl_init_stay_clean(shipped) -> None:
    for name in (
        "healthy-nccl-1357-h100-ib-sharp-init-start.log",
        "healthy-deepspeed-4715-two-node-ibext-p2p-channels.log",
    ):
        assert diagnose_paths(shipped, [HELDOUT / name]).causes == [], name
