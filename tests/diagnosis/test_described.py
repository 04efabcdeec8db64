"""A paste that is mostly a person's description, where no line names a cause: the causes
whose own texts (title, description, confirming answers, fixes) are closest to what the
prose complains of, `basis: described` (kb.diagnosis.described). Real posts from the
corpora; a description that complains of nothing, or of warnings only, or says the
problem is solved, stays clean."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis import described
from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.model import BASIS_DESCRIBED

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"

GETI = CORPORA / "batch-2026-11-30c/input-geti-5958-gpu-idle-data-time.log"
FLEETX_ZH = CORPORA / "batch-2026-12-01/iface-fleetx-1054-multinode-stuck-after-init-nccl.log"
P2P = CORPORA / "batch-2026-12-01b/p2p-nccl-382-prose-containers-one-gpu-each-socket-not-p2p.log"
# a question, not a complaint word: "请问如何去使1个进程占1个显卡呢？"
ONE_GPU_ZH = CORPORA / "batch-2026-12-02/c-rankmap-insightface-1571-mpirun-np2-both-on-gpu0-zh.log"


def _first(diag: Any) -> tuple[str, str]:
    return (diag.causes[0].id, diag.causes[0].basis) if diag.causes else ("", "")


@pytest.mark.parametrize(
    ("log", "cause"),
    [
        (GETI, "input-pipeline-bottleneck"),  # open-edge-platform/geti#5958
        (FLEETX_ZH, "nccl-wrong-interface"),  # PaddlePaddle/FleetX#1054, in Chinese
        (P2P, "nccl-p2p-failure"),  # NVIDIA/nccl#382
        (ONE_GPU_ZH, "gpu-rank-mapping"),  # deepinsight/insightface#1571, in Chinese
    ],
    ids=[
        "dataloader-idle-gpu",
        "zh-stuck-after-init",
        "containers-socket-not-p2p",
        "zh-how-one-gpu-each",
    ],
)
def test_gate_batch_prose_that_names_no_line_is_read_for_its_cause(
    shipped: Any, log: Path, cause: str
) -> None:
    diag = diagnose_paths(shipped, [log])
    assert _first(diag) == (cause, BASIS_DESCRIBED)
    top = diag.causes[0]
    assert 0 < top.confidence <= described.DESCRIBED_MAX
    assert len(diag.causes) <= described.TOP
    # its evidence is a line of the user's prose, and the words shared are given
    ev = top.evidence[0]
    assert ev.text == log.read_text(encoding="utf-8").splitlines()[ev.line - 1]
    assert ev.signature == f"described/{cause}"
    assert "shares '" in top.explanation
    assert diag.to_json()["causes"][0]["basis"] == "described"


@pytest.mark.parametrize(
    "name",
    [
        "batch-2026-12-01c/healthy-speechbrain-899-ddp-8gpu-epochs-converging.log",  # closing
        "batch-2026-11-30d/healthy-ompi-8403-ucx-openib-init-warning-aggregated.log",  # no longer
        "batch-2026-11-30d/healthy-deepspeed-1541-async-io-warnings-no-nvme.log",  # warnings
    ],
)
def test_gate_batch_healthy_posts_with_prose_stay_clean(shipped: Any, name: str) -> None:
    diag = diagnose_paths(shipped, [CORPORA / "healthy" / name])
    assert diag.causes == [] and diag.failure is None


def test_a_complaint_in_a_sentence_is_enough_a_statement_is_not(shipped: Any) -> None:
    complaint = (
        "When I train on 4 GPUs the GPU utilization stays at 30 % and the DataLoader seems "
        "very slow, even with num_workers set to 8."
    )
    assert _first(diagnose_text(shipped, complaint)) == (
        "input-pipeline-bottleneck",
        BASIS_DESCRIBED,
    )
    statement = (
        "When I train on 4 GPUs the GPU utilization stays at 95 % and the DataLoader keeps "
        "up, with num_workers set to 8."
    )
    assert diagnose_text(shipped, statement).causes == []


@pytest.mark.parametrize(
    "line",
    [
        "[compute-0-15.local:18438] 415 more processes have sent help message "
        "help-mpi-btl-openib.txt / error in device init",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "# Errors with asterisks indicate errors that have exceeded the maximum threshold.",
        "$ mpirun --allow-run-as-root -np 2 -H a:1,b:1 -x NCCL_DEBUG=INFO ./all_reduce_perf",
        "Traceback (most recent call last):",
        "DataLossError (see above for traceback): Unable to open table file ckpt/m.meta: Data "
        "loss: not an sstable (bad magic number): perhaps your file is in a different file format",
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, "
        "unhandled system error, NCCL version 2.10.3",
        "[1,0]<stdout>: the job is running on the node and this is what it prints now",
        "2023-05-04 10:11:12 INFO the trainer is waiting for the other workers to be ready",
    ],
)
def test_program_output_is_not_prose(line: str) -> None:
    assert described.prose_lines([("f", 1, line)]) == []


@pytest.mark.parametrize(
    "line",
    [
        "When I finetune model visual-bert on GPU A10(only one gpu), the gpu utility is very low",
        "## The job hangs after init on the second node and I do not know why",
        "两台机器的容器用的是bridge网络，训练卡在初始化之后",
    ],
)
def test_a_persons_sentences_are_prose(line: str) -> None:
    assert described.prose_lines([("f", 3, line)]) == [("f", 3, line)]


def test_words_meet_across_inflections_and_chinese_pairs() -> None:
    assert described.words("hangs") == described.words("hanging") == described.words("hang")
    assert "卡住" in described.words("训练卡住了")
    assert described.words("the job is") == []  # stop words only
    # a thread's link and its words about itself say nothing of the problem
    assert described.words("[dataloader](https://github.com/pytorch/pytorch/issues/2322)") == [
        "dataloader"
    ]
    assert described.words("this issue, thanks for any help") == []


def test_the_index_is_cached_beside_the_rules_and_rebuilt_when_damaged(
    shipped: Any, private_cache: Path
) -> None:
    described._INDEXES.clear()
    first = diagnose_paths(shipped, [GETI]).to_json()
    files = sorted((private_cache / "dlperf-help").glob("described-*.json"))
    assert len(files) == 1
    docs = json.loads(files[0].read_text(encoding="utf-8"))
    assert set(docs) == set(shipped.causes)
    assert all(docs.values())  # every cause has words
    files[0].write_text("{not json", encoding="utf-8")  # damaged: rebuilt, same answer
    described._INDEXES.clear()
    again = diagnose_paths(shipped, [GETI]).to_json()
    first["stats"].pop("seconds"), again["stats"].pop("seconds")
    assert again == first
    assert json.loads(files[0].read_text(encoding="utf-8")) == docs


def test_the_tuis_knowledge_base_gives_the_same_answer(shipped: Any) -> None:
    from kb.authoring.checked import load_kb

    kb = load_kb()
    text = GETI.read_text(encoding="utf-8")
    a = diagnose_text(kb, text).to_json()
    b = diagnose_text(shipped, text).to_json()
    a["stats"].pop("seconds"), b["stats"].pop("seconds")
    assert a == b


def test_cli_says_it_is_from_the_description_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kb.cli.main import main

    assert main(["diagnose", str(GETI)]) == 1
    out = capsys.readouterr().out
    assert "No line of this text names a cause; from what it describes" in out
    assert "[input-pipeline-bottleneck, confidence" in out and "from the description]" in out
    assert "   From the text:" in out
    assert "Why: no line names a cause; the text describes it: it shares " in out
    assert "'DataLoader'" in out  # the user's word, not its stem
    assert main(["diagnose", "--json", str(GETI)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["causes"][0]["basis"] == "described"
    assert os.environ.get("XDG_CACHE_HOME")  # the private cache, never the user's
