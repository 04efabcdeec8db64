"""Messages and tracebacks whatever a launcher or logger puts before each line (issue 9).

vLLM prints every line of a worker's traceback as `ERROR 05-29 04:08:22 worker_base.py:145]
...`, DeepSpeed's pdsh runner as `gpu003: ...`, loguru as `2018-07-17 01:38:43.975 | ERROR
| __main__:nested:10 - ...`: a rule anchored at a message's start, and the final line of a
traceback, must be seen past all of them. Each form here is a real line, copied from the
thread named beside it; the traceback put under each prefix is the real one of loguru's
README (https://github.com/Delgan/loguru, "Fully descriptive exceptions"), as Python
prints it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis.decorations import content_start, host_in_decoration, logged_as_error
from kb.diagnosis.engine import diagnose_text
from kb.diagnosis.lines import level_of

from .conftest import agreed

# (a real line, the message it carries)
FORMS = [
    # https://github.com/vllm-project/vllm/issues/5094 (vLLM < 0.6: `LEVEL MM-DD time file:N]`)
    (
        "ERROR 05-29 04:08:22 worker_base.py:145] RuntimeError: Gloo connectFullMesh failed with "
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        "RuntimeError: Gloo connectFullMesh failed with",
    ),
    # https://github.com/vllm-project/vllm/issues/6564 (Ray worker, vLLM < 0.6)
    (
        "(RayWorkerWrapper pid=12911, ip=23.248.165.187) ERROR 07-19 06:58:27 worker_base.py:340]"
        "     return executor(*args, **kwargs)",
        "return executor(*args, **kwargs)",
    ),
    # https://github.com/vllm-project/vllm/pull/34169 (vLLM v1: `[file:N]`)
    (
        "(EngineCore_DP0 pid=36) ERROR 02-11 06:21:23 [core.py:946]     super().__init__(",
        "super().__init__(",
    ),
    # https://github.com/vllm-project/vllm/issues/20226 (`(VllmWorker rank=0 pid=..)`)
    (
        "(VllmWorker rank=0 pid=305149) ERROR 06-29 19:19:59 [multiproc_executor.py:492]   File "
        '"/environments/venv/lib64/python3.11/site-packages/vllm/distributed/parallel_state.py", '
        "line 1084, in ensure_model_parallel_initialized",
        'File "/environments/venv/lib64/python3.11/site-packages/vllm/distributed/',
    ),
    # https://github.com/vllm-project/vllm/issues/7772 (date, level, pid, [file:N])
    (
        "2024-08-22 13:50:25 ERROR 200507 [worker_base.py:148] Traceback (most recent call last):",
        "Traceback (most recent call last):",
    ),
    # https://github.com/gpustack/gpustack/issues/2415 (Ray `(pid=.., ip=..)`, `(raylet)`)
    (
        "(pid=2433683, ip=192.168.4.105) INFO 07-09 05:14:22 [__init__.py:239] Automatically "
        "detected platform cuda.",
        "Automatically detected platform cuda.",
    ),
    (
        "(raylet) A worker died or was killed while executing a task by an unexpected system error.",
        "A worker died or was killed",
    ),
    # https://github.com/pytorch/pytorch/pull/46009 (glog, quoted in the PR)
    (
        "> I1002 15:18:48.539551 1822062 ProcessGroupNCCL.cpp:528] [Rank 2] NCCL watchdog thread "
        "started!",
        "[Rank 2] NCCL watchdog thread started!",
    ),
    # https://github.com/NVIDIA/nccl/issues/1504 (torch elastic's glog form, a path in it)
    (
        "E1106 04:43:02.651000 26021 site-packages/torch/distributed/elastic/multiprocessing/api.py"
        ":869] failed (exitcode: -6) local_rank: 3 (pid: 26026) of binary: "
        "/root/miniconda3/envs/pippy/bin/python",
        "failed (exitcode: -6) local_rank: 3",
    ),
    # https://github.com/PrimeIntellect-ai/prime-rl/issues/1098 (c10's `[E.. file:N]` after torchrun's)
    (
        "[rank18]:[E1013 11:12:31.455734215 ProcessGroupNCCL.cpp:746] [Rank 18] Some NCCL "
        "operations have failed or timed out.",
        "[Rank 18] Some NCCL operations have failed",
    ),
    # https://github.com/XiaohangZhan/deocclusion/issues/45 (Python logging's default format)
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 6 "
        "(pid: 1211) of binary: /usr/bin/python3",
        "failed (exitcode: 1) local_rank: 6",
    ),
    # https://github.com/intel/ipex-llm/issues/9628 (`asctime - name - LEVEL - `)
    (
        "2023-12-07 13:06:03,798 - torch.distributed.distributed_c10d - INFO - Added key: "
        "store_based_barrier_key:1 to store for rank: 0",
        "Added key: store_based_barrier_key:1",
    ),
    # https://github.com/hiyouga/LlamaFactory/issues/2470 (pdsh host, transformers' format)
    (
        "gpu003: 02/11/2024 22:36:19 - INFO - llmtuner.data.template - Replace eos token: <|im_end|>",
        "Replace eos token: <|im_end|>",
    ),
    (
        'gpu003:   File "/data/vayu/train/LLaMA-Factory/src/train_bash.py", line 14, in <module>',
        'File "/data/vayu/train/LLaMA-Factory/src/train_bash.py", line 14',
    ),
    # https://github.com/deepspeedai/DeepSpeed/issues/5313 (pdsh host before DeepSpeed's logger)
    (
        "tt2: [2024-04-08 07:26:11,486] [INFO] [pipeline_model.py:319:main] env_vars: environ({",
        "env_vars: environ({",
    ),
    # https://github.com/deepspeedai/DeepSpeed/issues/2632 (pdsh host before an NCCL line)
    (
        "ddp-0: ddp-0:8381:8381 [0] NCCL INFO Bootstrap : Using eth0:10.106.71.59<0>",
        "ddp-0:8381:8381 [0] NCCL INFO Bootstrap",
    ),
    # https://github.com/sgl-project/sglang/issues/12567 (SGLang's `[time TPn]`)
    (
        "[2025-11-03 18:48:34 TP7] Scheduler hit an exception: Traceback (most recent call last):",
        "Scheduler hit an exception: Traceback",
    ),
    # https://github.com/allenai/olmocr/issues/105 (Python logging around SGLang's)
    (
        "2025-03-08 02:04:48,693 - __main__ - INFO - [2025-03-08 02:04:48 TP0] Scheduler hit an "
        "exception: Traceback (most recent call last):",
        "Scheduler hit an exception: Traceback",
    ),
    # https://github.com/sgl-project/sglang/issues/5284 (pm2's `id|name |`)
    ("3|qwen  |     self.forward_thread_func_()", "self.forward_thread_func_()"),
    # https://github.com/nagaraj-real/localaipilot-api/issues/8 (docker compose's `name  |`)
    ("llm-api-container  | installing", "installing"),
    # https://github.com/PaddlePaddle/PaddleDetection/issues/7380 (Paddle's launcher, glog)
    ("LAUNCH ERROR 2022-11-21 02:35:54,385 Container failed !!!", "Container failed !!!"),
    (
        "I1121 02:35:53.560647 3004662 tcp_store.cc:257] receive shutdown event and so quit from "
        "MasterDaemon run loop",
        "receive shutdown event",
    ),
    # https://github.com/huggingface/accelerate/issues/2340 (oneCCL's own logger)
    (
        "2024:01:15-03:36:29:(1980058) |CCL_ERROR| global.cpp:150 getenv_local_coord: condition "
        "global_data::env().ze_ipc_exchange == ccl::ze::ipc_exchange_mode::sockets failed",
        "global.cpp:150 getenv_local_coord:",
    ),
    # https://github.com/NVIDIA/DeepLearningExamples/issues/1386 (torchrun's [rankN]:)
    (
        "[rank2]: torch.distributed.DistBackendError: NCCL error in: "
        "/home/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2028, unhandled system "
        "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
        "torch.distributed.DistBackendError: NCCL error in:",
    ),
    # https://github.com/Delgan/loguru (README: loguru's default format)
    ("2018-07-17 01:38:43.975 | ERROR    | __main__:nested:10 - What?!", "What?!"),
    # https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/60 (Markdown bold)
    ("**KeyError: '2'**", "KeyError: '2'"),
]

# lines that carry no prefix at all: nothing of the message is taken for one
UNDECORATED = [
    # https://github.com/sgl-project/sglang/issues/4289
    "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    # corpora/batch-2026-12-01d/shm-horovod-1081-short-dataloader-bus-error-k8s-pod.log
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
    "shared memory (shm)",
    # https://github.com/facebookresearch/deit/issues/28
    "gpu-dev006:25486:25486 [0] NCCL INFO Bootstrap : Using [0]enp7s0:10.10.112.56<0>",
    "| distributed init (rank 3): env://",
    # https://github.com/vllm-project/vllm/issues/5094 (a later comment)
    "Trainable params: 8,030,261,248 | All params: 8,030,261,248 | Trainable%: 100.00%",
    # https://github.com/vllm-project/vllm/pull/11721
    'INFO:     127.0.0.1:40178 - "GET /v1/models HTTP/1.1" 200 OK',
    '  File "train.py", line 88, in <module>',
]


@pytest.mark.parametrize(("line", "message"), FORMS)
def test_each_prefix_form_is_stripped(line: str, message: str) -> None:
    assert line[content_start(line) :].startswith(message)


@pytest.mark.parametrize("line", UNDECORATED)
def test_a_line_without_a_prefix_keeps_its_message(line: str) -> None:
    assert content_start(line) == 0


def test_the_level_and_host_a_prefix_states() -> None:
    errors = [line for line, _ in FORMS if logged_as_error(line)]
    assert len(errors) == 11
    assert not logged_as_error(FORMS[5][0])  # `INFO`
    assert not logged_as_error(UNDECORATED[1])  # a message that says ERROR, not its prefix
    assert host_in_decoration(FORMS[1][0]) == "23.248.165.187"
    assert host_in_decoration(FORMS[13][0]) == "gpu003"
    assert host_in_decoration(FORMS[0][0]) is None
    assert level_of(FORMS[0][0]) == "exception"  # the message is an exception's line


# Python's traceback of loguru's README example (its `diagnose=True` annotations left out)
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "test.py", line 12, in <module>',
    "    nested(0)",
    '  File "test.py", line 8, in nested',
    "    func(5, c)",
    '  File "test.py", line 4, in func',
    "    return a / b",
    "ZeroDivisionError: division by zero",
]


def _prefix(line: str) -> str:
    return line[: content_start(line)]


# the prefixes of the real lines above, one per form (the first line of each pair is enough)
PREFIXES = sorted({_prefix(line).rstrip() + " " for line, _ in FORMS} - {" "})


def _under(prefix: str, lines: list[str]) -> str:
    return "".join(f"{prefix}{line}\n" for line in lines)


@pytest.mark.slow  # 0.7 s a case: both paths over the shipped rules
@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_traceback_under_each_prefix_is_a_failure(shipped: Any, prefix: str) -> None:
    out = agreed(shipped, _under(prefix, TRACEBACK))
    failure = out["failure"]
    assert (failure["kind"], failure["symptom"]) == ("exception", "python-exception")
    assert failure["line"] == len(TRACEBACK)
    assert failure["what"].endswith(": ZeroDivisionError: division by zero")  # not the prefix


def test_prefixes_are_many_and_distinct() -> None:
    assert len(PREFIXES) >= 20


@pytest.mark.slow  # 0.7 s a case: both paths over the shipped rules
@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_traceback_that_lost_its_top_is_a_failure_too(shipped: Any, prefix: str) -> None:
    """A paste that starts at a frame: the frame just before the exception says it is a
    traceback's end."""
    out = agreed(shipped, "starting\n" + _under(prefix, TRACEBACK[3:]))
    assert out["failure"]["symptom"] == "python-exception"


def test_an_exception_a_logger_printed_as_an_error_ends_its_record(shipped: Any) -> None:
    """vLLM's worker traceback cut to its last two lines: no `Traceback` line and no frame
    line, but the logger printed the exception at ERROR level (vllm-project/vllm#5094)."""
    log = (
        "ERROR 05-29 04:08:22 worker_base.py:145]     backend_class = ProcessGroupGloo("
        "backend_prefix_store, group_rank, group_size, timeout=timeout)\n" + FORMS[0][0] + "\n\n"
        "eth2: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500\n"
    )
    out = agreed(shipped, log)
    assert out["failure"]["line"] == 2
    assert out["failure"]["what"].startswith(
        "a Python exception ended a process: RuntimeError: Gloo connectFullMesh failed"
    )


def test_the_same_exception_line_at_info_level_without_a_traceback_is_no_failure(
    shipped: Any,
) -> None:
    line = FORMS[5][0].replace("Automatically detected platform cuda.", "ValueError: bad value")
    out = diagnose_text(shipped, "starting\n" + line + "\nmore\nmore\n").to_json()
    assert "failure" not in out or out["failure"] is None
    assert (
        diagnose_text(shipped, "starting\n" + FORMS[5][0] + "\n").to_json().get("failure") is None
    )


def test_a_traced_exception_a_completed_run_survived_is_no_failure(shipped: Any) -> None:
    # Lightning's end of a fit (lightning/pytorch/loops/fit_loop.py), after the traceback
    done = "`Trainer.fit` stopped: `max_epochs=10` reached.\n"
    for prefix in PREFIXES:
        out = diagnose_text(shipped, _under(prefix, TRACEBACK) + prefix + done).to_json()
        assert out.get("failure") is None, prefix


ORTE = "ORTE was unable to reliably start one or more daemons."


@pytest.mark.parametrize("prefix", PREFIXES)
def test_an_anchored_rule_still_means_the_message(rules: Any, prefix: str) -> None:
    """The fixture rule `^ORTE was unable ...` fires past every prefix, and only there: a
    message quoted inside prose is no start."""
    out = agreed(rules, "starting\n" + prefix + ORTE + "\n")
    assert [c["id"] for c in out["causes"]][:1] == ["mpi-launch-failure"]
    said = agreed(rules, "starting\n" + prefix + "mpirun said: " + ORTE + "\n")
    for cause in said["causes"]:
        fired = [p for p in cause["explanation"].split("; ")[1:] if "(weight" in p]
        assert all(p.startswith("catalogued: ") for p in fired), cause["explanation"]


@pytest.mark.slow
def test_cli_exits_1_on_a_prefixed_traceback(cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text(_under(_prefix(FORMS[3][0]), TRACEBACK))
    proc = cli("diagnose", "--json", str(log), rules=None)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["failure"]["kind"] == "exception"
    assert data["failure"]["rank"] == 0
