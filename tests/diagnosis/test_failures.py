"""A failure is never healthy (issue 9, part 3).

A crash that no rule names (a segmentation fault, an illegal memory access, a rank
killed by signal 9, a plain Python exception, a watchdog timeout...) used to be answered
"no known problem found", exit 0. Now it is a `failure` (what, where, which rank first),
exit 1, with the symptom's likeliest causes (`basis: symptom`) and a next step; a cause
the log proves still ranks first. Healthy logs stay clean: every healthy log of every
corpus is a case here, and the usual false alarms (`exitcode: 0`, "Killed" in prose, a
traceback that the training survived) are asserted too. Shipped rules, real log shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from tests import corpora_loader as corpora

from .conftest import agreed

CHILD_FAILED_SEGV = """\
[2024-05-02 10:00:01,112] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -11) local_rank: 1 (pid: 4128) of binary: /usr/bin/python
Traceback (most recent call last):
  File "/usr/local/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py", line 812, in main
    run(args)
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-05-02_10:00:01
  host      : gpu02
  rank      : 1 (local_rank: 1)
  exitcode  : -11 (pid: 4128)
  error_file: <N/A>
  traceback : Signal 11 (SIGSEGV) received by PID 4128
============================================================
"""

PLAIN_EXCEPTION = """\
Epoch 0: loading the data
Traceback (most recent call last):
  File "train.py", line 88, in <module>
    main()
  File "train.py", line 61, in main
    images, labels = next(it)
ValueError: too many values to unpack (expected 2)
"""

# (the log, the failure's kind, the symptom that says so)
CRASHES = [
    ("Segmentation fault (core dumped)", "crash", "process-crash"),
    ("/bin/sh: line 1:  2231 Segmentation fault      python train.py", "crash", "process-crash"),
    (
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "crash",
        "gpu-kernel-fault",
    ),
    ("RuntimeError: CUDA error: device-side assert triggered", "crash", "gpu-kernel-fault"),
    ("  traceback : Signal 9 (SIGKILL) received by PID 30512", "killed", "process-killed"),
    (
        "WARNING:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) "
        "local_rank: 3 (pid: 30512) of binary: /opt/conda/bin/python",
        "killed",
        "process-killed",
    ),
    ("Killed", "killed", "process-killed"),
    (CHILD_FAILED_SEGV, "crash", "process-crash"),
    (PLAIN_EXCEPTION, "exception", "python-exception"),
    (
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  NCCL error: unhandled system error\nAborted (core dumped)",
        "crash",
        "process-crash",
    ),
    (
        "mpirun noticed that process rank 1 with PID 0 on node gpu02 exited on signal 11 "
        "(Segmentation fault).",
        "crash",
        "process-crash",
    ),
    (
        "[rank3]:[E1129 19:54:45.1 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE) ran for 600000 "
        "milliseconds before timing out.",
        "hang",
        "job-hang",
    ),
    (
        "gpu01:3301:3301 [0] NCCL INFO comm 0x55d0 rank 0 nranks 16 cudaDev 0 nvmlDev 0 "
        "busId 18000 commId 0x1f2e - Init COMPLETE\n(hangs here)",
        "hang",
        "job-hang",
    ),
    ("srun: error: gpu03: task 2: Exited with exit code 1", "no-success", "job-failed"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("log", "kind", "symptom"), CRASHES, ids=lambda v: str(v)[:40])
def test_a_crash_no_rule_names_is_a_failure_with_its_likely_causes(
    shipped: Any, log: str, kind: str, symptom: str
) -> None:
    out = agreed(shipped, log + "\n")
    failure = out["failure"]
    assert failure["kind"] == kind
    assert failure["symptom"] == symptom
    assert failure["line"] >= 1 and failure["file"] == "pasted"
    assert failure["what"] and failure["next"] and failure["walk"].endswith(symptom + " LOG")
    if out["causes"] and out["causes"][0].get("basis") is None:
        return  # a rule names the cause outright (the watchdog: nccl-timeout-hang)
    assert out["causes"], "a failure with no likely cause at all"
    assert all(c["basis"] == "symptom" for c in out["causes"])
    assert all(c["confidence"] < 0.5 for c in out["causes"])  # below the proven ones
    assert symptom in out["symptoms"]


def test_torchrun_root_cause_says_which_rank_and_host_failed_first(shipped: Any) -> None:
    out = agreed(shipped, CHILD_FAILED_SEGV)
    f = out["failure"]
    assert (f["kind"], f["rank"], f["host"], f["first"]) == ("crash", 1, "gpu02", True)
    assert "exitcode" in f["text"] or "SIGSEGV" in f["text"]


def test_the_first_failing_rank_is_the_failure_not_the_peers_that_time_out(
    shipped: Any, tmp_path: Path
) -> None:
    """rank 1 crashes at 10:00:05; rank 0 times out ten minutes later."""
    r0 = tmp_path / "rank0.log"
    r1 = tmp_path / "rank1.log"
    r0.write_text(
        "2024-05-02 10:00:00 [rank0] step 10 loss 2.1\n"
        "2024-05-02 10:10:05 [rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE) ran for 600000 "
        "milliseconds before timing out.\n"
    )
    r1.write_text(
        "2024-05-02 10:00:00 [rank1] step 10 loss 2.1\n"
        "2024-05-02 10:00:05 [rank1] RuntimeError: CUDA error: an illegal memory access was "
        "encountered\n"
    )
    f = agreed(shipped, paths=[r0, r1])["failure"]
    assert (f["kind"], f["file"], f["line"], f["rank"]) == ("crash", str(r1), 2, 1)


def test_a_cause_the_log_proves_still_ranks_first_beside_the_failure(shipped: Any) -> None:
    log = (
        "node2:5321:5360 [0] NCCL WARN Connect to fe80::a480:7fff:fecf:1ed9%13<45166> failed "
        ": Network is unreachable\nTraceback (most recent call last):\n"
        '  File "train.py", line 9, in <module>\n'
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
        "unhandled system error\n"
    )
    out = agreed(shipped, log)
    assert out["causes"][0]["id"] == "nccl-wrong-interface"
    assert "basis" not in out["causes"][0] and out["causes"][0]["confidence"] >= 0.5
    assert out["failure"]["kind"] == "exception" and out["failure"]["line"] == 4


@pytest.mark.slow
@pytest.mark.parametrize(
    "log",
    [
        "    exitcode  : 0 (pid: 4127)",
        "exitcode: 0",
        "Killed the old tensorboard process before starting",
        "It was killed by the reviewers in the first round",
        "Sending process 30513 closing signal SIGTERM",
        "Installing signal handlers for SIGSEGV and SIGBUS",
        "CUDA_LAUNCH_BLOCKING=1 python train.py",
        "There was an Error: see above",
        # no traceback, in a longer text (pasted alone, one to three lines, it IS a failure:
        # tests/diagnosis/test_candidate_order.py)
        "The docs list the errors a bad config gives, for example:\n"
        "ValueError: shown in the docs as an example, never raised\n"
        "Check the config file first.\nThen check the data path.\n"
        "Then check the versions.\nThen ask on the forum.",
        "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully "
        "finished. Waiting 300 seconds for other agents to finish.",
    ],
)
def test_ordinary_words_are_no_failure(shipped: Any, log: str) -> None:
    out = agreed(shipped, log + "\n")
    assert "failure" not in out
    assert out["causes"] == []


def test_a_traceback_the_training_survived_is_no_failure(shipped: Any) -> None:
    """A warning's traceback, then the run goes on and completes."""
    log = (
        "gpu01:1:1 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 - Init COMPLETE\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/tensorboard.py", line 3\n'
        "ModuleNotFoundError: No tensorboard: logging to stdout only\n"
        + "".join(f"step {i}/5 loss {2.0 - i / 10:.2f} 1520 img/s\n" for i in range(1, 6))
        + "Training completed\n"
    )
    out = agreed(shipped, log)
    assert "failure" not in out


def test_the_same_traceback_at_the_end_is_a_failure(shipped: Any) -> None:
    out = agreed(shipped, PLAIN_EXCEPTION)
    assert out["failure"]["kind"] == "exception"
    assert out["failure"]["what"].endswith("ValueError: too many values to unpack (expected 2)")
    assert {c["id"] for c in out["causes"]} & {"code-version-mismatch", "dataset-format"}


def test_gate_batch_2026_11_30d_an_oom_kill_names_host_memory_first(shipped: Any) -> None:
    """mgsv#2: `failed (exitcode: -9)` with `Signal 9 (SIGKILL)`: the OOM killer. A scoring
    gate: a held-out batch's log, not material to tune the rules on."""
    path = corpora.path("batch-2026-11-30d", "other-mgsv-2-oomkilled-exitcode-minus-9.log")
    out = diagnose_paths(shipped, [path]).to_json()
    assert out["failure"]["kind"] == "killed"
    assert out["causes"][0]["id"] == "host-out-of-memory"
    assert out["causes"][0]["basis"] == "symptom"


@pytest.mark.parametrize(
    "name",
    [
        "other-jade-194-node-dgk713-uncorrectable-ecc.log",
        "other-pytorch-113128-watchdog-exception-ecc-default0.log",
    ],
)
def test_gate_batch_2026_11_30d_gpu_faults_are_crashes(shipped: Any, name: str) -> None:
    out = diagnose_paths(shipped, [corpora.path("batch-2026-11-30d", name)]).to_json()
    assert out["failure"]["kind"] == "crash"
    assert out["failure"]["symptom"] == "gpu-kernel-fault"


@pytest.mark.slow
def test_cli_exits_1_with_the_failure_in_json_and_plain_words(cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_text("RuntimeError: CUDA error: device-side assert triggered\n")
    proc = cli("diagnose", "--json", str(log), rules=None)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["failure"]["kind"] == "crash"
    assert set(data["failure"]) >= {"kind", "what", "line", "file", "rank", "host", "first"}
    assert "CUDA_LAUNCH_BLOCKING=1" in data["failure"]["rerun_with"]
    plain = cli("diagnose", str(log), rules=None)
    assert plain.returncode == 1
    assert "A failure is seen: a GPU kernel faulted" in plain.stdout
    assert "Its cause is not named by the log; likely causes: " in plain.stdout
    assert "Next: rerun with CUDA_LAUNCH_BLOCKING=1" in plain.stdout
    assert "No known problem found" not in plain.stdout


def test_a_catalogued_failure_message_is_a_failure(shipped: Any) -> None:
    """A catalogue message of class `symptom` that no rule matches: its symptom word
    (`abort`) is one a failure symptom stands for (process-crash)."""
    catalogue = pytest.importorskip("kb.rules.catalogue").load_catalogue()
    line = "gpu01:3301:3310 [0] init.cc:2011 NCCL WARN Comm 0x55d0 is in abort state"
    found = [m for m in catalogue.match(line) if m.class_ == "symptom"]
    if not found or found[0].symptom != "abort":
        pytest.skip("the catalogue does not hold NCCL's abort-state message")
    out = diagnose_text(shipped, line + "\n").to_json()
    assert out["failure"]["kind"] == "crash" and out["failure"]["symptom"] == "process-crash"


def _healthy_logs() -> list[Path]:
    """The healthy gate: every healthy log but those of the blind batch of 2026-12-01."""
    return sorted(corpora.healthy(*corpora.DEV, *corpora.BATCHES_2026_11))


HEALTHY = _healthy_logs()


def test_there_are_many_healthy_logs() -> None:
    assert len(HEALTHY) >= 60


@pytest.mark.parametrize("path", HEALTHY, ids=lambda p: str(p.relative_to(corpora.ROOT)))
@pytest.mark.slow
def test_no_healthy_log_gets_a_failure(shipped: Any, path: Path) -> None:
    out = diagnose_paths(shipped, [path]).to_json()
    assert "failure" not in out, f"false failure: {out.get('failure')}"
    assert out["causes"] == []


def test_a_cause_message_close_to_the_final_exception_comes_before_its_priors(shipped) -> None:
    """The exception's symptom alone would rank code and data first; the exception is c10d's
    bind failure typed short, and that known message names its cause."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 10, in <module>\n'
        '    dist.init_process_group("nccl")\n'
        "RuntimeError: the server socket has failed to bind to port 29500 deepspeed\n"
    )
    diag = diagnose_text(shipped, text)
    assert diag.failure is not None and diag.failure.symptom == "python-exception"
    assert [(c.id, c.basis) for c in diag.causes][:2] == [
        ("port-in-use", "approximate"),
        ("code-version-mismatch", "symptom"),
    ]
    assert diag.causes[0].approximate is not None
    assert "failed to bind to" in diag.causes[0].approximate.known
