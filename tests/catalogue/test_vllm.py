"""vLLM in the catalogue: the reader keeps the distributed layer, executors, workers,
platforms and the utils' NCCL/port helpers of each sampled wheel, reads vLLM's once-only
logger calls, leaves plain progress lines out, and a line as vLLM prints it (its
`LEVEL MM-DD HH:MM:SS [file.py:N]` prefix, a worker's `(VllmWorker rank=N pid=M)` too)
matches the entry its source prints with that entry's class."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import check_pasted_lines, label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import vllm_src  # noqa: E402


def test_once_only_calls_raises_and_kept_info_lines_are_read() -> None:
    # shapes of vllm/distributed/device_communicators/custom_all_reduce.py (0.6.0),
    # pynccl.py (0.5.5), vllm/utils.py (0.5.5), vllm/worker/model_runner.py (0.6.0)
    src = """
logger = init_logger(__name__)
def f(world_size, size):
    if world_size not in CustomAllreduce._SUPPORTED_WORLD_SIZES:
        logger.warning(
            "Custom allreduce is disabled due to an unsupported world"
            " size: %d. Supported world sizes: %s.", world_size, sizes)
    logger.info("vLLM is using nccl==%s", self.nccl.ncclGetVersion())
    logger.info("Loading model weights took %.4f GB", size)
    logger.warning_once("Using FP8 KV cache but no scaling factors provided.")
    print_warning_once(f"Not found nvcc in {cuda_home}. Skip cuda version check!")
    logger.debug("not printed by default")
    raise RuntimeError(f"NCCL error: {self.ncclGetErrorString(result)}")
"""
    got = vllm_src.file_messages("vllm/distributed/device_communicators/pynccl.py", src)
    assert set(got) == {
        (
            "warn",
            "Custom allreduce is disabled due to an unsupported world size: %d. "
            "Supported world sizes: %s.",
        ),
        ("info", "vLLM is using nccl==%s"),
        ("warn", "Using FP8 KV cache but no scaling factors provided."),
        ("warn", "Not found nvcc in {}. Skip cuda version check!"),
        ("error", "RuntimeError: NCCL error: {}"),
    }
    assert len(got) == 5


def test_the_scope_is_the_launch_and_collective_layer() -> None:
    kept = [
        "vllm/distributed/parallel_state.py",
        "vllm/distributed/device_communicators/shm_broadcast.py",
        "vllm/model_executor/parallel_utils/pynccl.py",  # 0.3.x-0.4.0
        "vllm/executor/ray_utils.py",
        "vllm/v1/executor/multiproc_executor.py",
        "vllm/v1/worker/gpu_worker.py",
        "vllm/platforms/cuda.py",
        "vllm/utils.py",
        "vllm/utils/network_utils.py",
        "vllm/envs.py",
    ]
    left = [
        "vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py",
        "vllm/distributed/ec_transfer/ec_connector/factory.py",
        "vllm/utils/argparse_utils.py",
        "vllm/entrypoints/openai/api_server.py",
        "vllm/distributed/tests/test_x.py",
        "vllm/platforms/cuda.pyi",
    ]
    assert [p for p in kept if not vllm_src.wanted(p)] == []
    assert [p for p in left if vllm_src.wanted(p)] == []


def test_a_vllm_wheel_is_laid_out_by_repository_paths(tmp_path: Path) -> None:
    wheel = tmp_path / "vllm-0.6.6.post1-cp38-abi3-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("vllm/distributed/parallel_state.py", "raise ValueError('x')\n")
        zf.writestr("vllm/executor/ray_utils.py", "# kept\n")
        zf.writestr("vllm/entrypoints/llm.py", "# not kept\n")
        zf.writestr("vllm/_C.abi3.so", b"\x7fELF")
        zf.writestr("vllm-0.6.6.post1.dist-info/METADATA", "Name: vllm\n")
    out = tmp_path / "0.6.6.post1"
    assert vllm_src.wheel_tree(wheel, out) == 2
    kept = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert kept == ["vllm/distributed/parallel_state.py", "vllm/executor/ray_utils.py"]
    assert vllm_src.wheel_version(wheel) == "0.6.6.post1"
    with pytest.raises(ValueError, match="not a vllm wheel"):
        vllm_src.wheel_version(tmp_path / "torch-2.4.0-cp310-none-any.whl")


def test_vllm_is_catalogued_over_its_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["vllm"].versions == "0.2.0-0.33.0"  # the wheels read (vllm_src.py)
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == "vllm"]
    assert row["messages"] > 900
    assert row["classified"] == row["messages"] == row["causes"] + row["symptoms"] + row["benign"]
    causes = {m.cause for m in cat.by_library("vllm") if m.class_ == "cause"}
    assert causes == {"nccl-missing-or-mismatch", "gpu-rank-mapping", "nccl-shm-too-small"}
    # the once-only warnings of later releases are in (vllm/platforms/cuda.py)
    assert any("CUDA_DEVICE_ORDER=PCI_BUS_ID" in m.template for m in cat.by_library("vllm"))


# (a line as vLLM prints it, the label of its most specific entry)
LINES = [
    (  # pynccl_wrapper.py, 0.6+: libnccl.so.2 that cannot be opened
        "ERROR 10-12 08:14:03 pynccl_wrapper.py:196] Failed to load NCCL library from "
        "libnccl.so.2. It is expected if you are not running on NVIDIA/AMD GPUs.Otherwise, "
        "the nccl library might not exist, be corrupted or it does not support the current "
        "platform Linux-5.15.0-x86_64-with-glibc2.35. If you already have the library, "
        "please set the environment variable VLLM_NCCL_SO_PATH to point to the correct nccl "
        "library path.",
        "cause/nccl-missing-or-mismatch",
    ),
    (  # mp_distributed_executor.py: --tensor-parallel-size 8 on a node with 4 GPUs
        "RuntimeError: please set tensor_parallel_size (8) to less than max local gpu count (4)",
        "cause/gpu-rank-mapping",
    ),
    (  # shm_broadcast.py: the message queue's buffer in a container's 64 MB /dev/shm
        "RuntimeError: Insufficient space in /dev/shm: 160 MiB required, 63 MiB free. "
        "Increase /dev/shm (e.g. --shm-size or --ipc=host).",
        "cause/nccl-shm-too-small",
    ),
    (  # v1/executor/multiproc_executor.py collective_rpc
        "TimeoutError: RPC call to execute_model timed out.",
        "symptom/timeout",
    ),
    (  # v1/executor/multiproc_executor.py: a worker's exception, re-raised in the engine
        "RuntimeError: Worker failed with error 'CUDA error: an illegal memory access was "
        "encountered', please check the stack trace above for the root cause",
        "symptom/peer-failure",
    ),
    (  # shm_broadcast.py: the reader waited for the writer (a rank stuck or compiling)
        "(VllmWorker rank=1 pid=2213) INFO 05-01 11:32:40 [shm_broadcast.py:466] No available "
        "shared memory broadcast block found in 60 seconds. This typically happens when some "
        "processes are hanging or doing some time-consuming work (e.g. compilation).",
        "symptom/hang",
    ),
    (  # v1/executor/multiproc_executor.py
        "ERROR 05-01 11:33:02 [multiproc_executor.py:140] Worker proc VllmWorker-1 died "
        "unexpectedly, shutting down executor.",
        "symptom/peer-failure",
    ),
    (  # custom_all_reduce.py on PCIe GPUs without P2P: vLLM goes on with NCCL
        "(VllmWorker rank=0 pid=2212) WARNING 05-01 11:31:07 [custom_all_reduce.py:137] "
        "Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P "
        "test failed. To silence this warning, specify disable_custom_all_reduce=True "
        "explicitly.",
        "benign",
    ),
    (  # utils/network_utils.py get_open_port: the next port is taken instead
        "INFO 11-20 09:00:01 [network_utils.py:140] Port 29500 is already in use, trying "
        "port 29501",
        "benign",
    ),
    (  # pynccl.py at start
        "INFO 10-12 08:14:05 pynccl.py:63] vLLM is using nccl==2.20.5",
        "benign",
    ),
]


@pytest.mark.parametrize(("line", "label"), LINES)
def test_a_vllm_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, "vllm")
    assert got == label, (line, template)


def test_a_pasted_cause_line_ranks_its_cause_first_a_fall_back_line_fires_nothing() -> None:
    check_pasted_lines(LINES)
