"""PaddlePaddle's Python side and data loader in the catalogue: paddle.distributed beyond the
launcher (fleet, collective, communication, ps, rpc), the DataLoader (its workers, reader
threads and the C++ watchdog of `paddle/fluid/imperative/data_loader.cc`), paddle.device and
cpp_extension, and enforce.h's texts for a failed CUDA / NCCL call. The extractor reads each
form these are printed in; real lines, filled from the sources' formats, match the entry
their source prints with its class; a one-line paste of the shared-memory crash gets its
cause first."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.engine import diagnose_text
from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import paddle_src  # noqa: E402


@pytest.fixture(scope="module")
def rules():  # type: ignore[no-untyped-def]
    return load_rules()


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("python/paddle/distributed/fleet/meta_parallel/pipeline_parallel.py", True),
        ("python/paddle/distributed/collective.py", True),
        ("python/paddle/distributed/communication/stream/all_gather.py", True),
        ("python/paddle/io/dataloader/worker.py", True),
        ("python/paddle/fluid/dataloader/dataloader_iter.py", True),
        ("python/paddle/fluid/reader.py", True),
        ("python/paddle/device/cuda/__init__.py", True),
        ("python/paddle/utils/cpp_extension/extension_utils.py", True),
        ("paddle/fluid/imperative/data_loader.cc", True),
        # static-graph planners and checkpoint resharding are left out, as are tests
        ("python/paddle/distributed/auto_parallel/static/engine.py", False),
        ("python/paddle/distributed/passes/pass_base.py", False),
        ("python/paddle/distributed/auto_tuner/tuner.py", False),
        ("python/paddle/distributed/flex_checkpoint/dcp/load_state_dict.py", False),
        ("python/paddle/io/tests/test_dataloader.py", False),
        ("python/paddle/vision/models/resnet.py", False),
    ],
)
def test_the_parts_read_are_the_python_side_and_the_data_loader(path: str, kept: bool) -> None:
    assert paddle_src.wanted(path) is kept


def test_the_data_loader_watchdog_and_signal_handlers_are_read() -> None:
    # paddle/fluid/imperative/data_loader.cc (3.x): a handler `write()`s its text, the
    # watchdog throws a multi-line Fatal whose later lines are each a line of the log
    src = r"""
REGISTER_SIGNAL_HANDLER(
    SIGBUS,
    SIGBUS_handler,
    "ERROR: Unexpected BUS error encountered in DataLoader worker. "
    "This might be caused by insufficient shared memory (shm), "
    "please check whether use_shared_memory is set and storage space "
    "in /dev/shm is enough\n");
          PADDLE_THROW(common::errors::Fatal(
              "DataLoader process (pid %ld) exited is killed by signal: %s.\n"
              "  It may be caused by insufficient shared storage space. This "
              "problem usually occurs when using docker as a development "
              "environment.\n  Please use command `df -h` to check the storage "
              "space of `/dev/shm`.",
              process_pid,
              strsignal(infop.si_status)));
    """
    got = paddle_src.file_messages("paddle/fluid/imperative/data_loader.cc", src)
    assert ("error", "ERROR: Unexpected BUS error encountered in DataLoader worker. This might "
            "be caused by insufficient shared memory (shm), please check whether "
            "use_shared_memory is set and storage space in /dev/shm is enough") in got  # fmt: skip
    assert ("error", "DataLoader process (pid %ld) exited is killed by signal: %s.\n  It may be "
            "caused by insufficient shared storage space. This problem usually occurs when "
            "using docker as a development environment.\n  Please use command `df -h` to "
            "check the storage space of `/dev/shm`.") in got  # fmt: skip
    assert ("error", "It may be caused by insufficient shared storage space. This problem "
            "usually occurs when using docker as a development environment.") in got  # fmt: skip
    # the headline is not split off again, and other files' messages are not split at all
    assert ("error", "DataLoader process (pid %ld) exited is killed by signal: %s.") not in got
    other = paddle_src.file_messages("paddle/fluid/platform/device/gpu/gpu_info.cc", src)
    assert not [t for _, t in other if t.startswith("It may be caused")]


def test_enforce_h_nvidia_error_texts_are_read_streamed_and_added_up() -> None:
    # paddle/phi/core/enforce.h (3.3.1) and paddle/fluid/platform/enforce.h (2.0.2)
    src = r"""
inline std::string build_nvidia_error_msg(ncclResult_t nccl_result) {
  std::ostringstream sout;
  sout << "NCCL error(" << nccl_result << "), "
       << phi::dynload::ncclGetErrorString(nccl_result) << ". ";
  if (errno == ENOSPC || errno == EAGAIN) {
    std::string detail(strerror(errno));
    detail += "\nPlease try one of the following solutions:";
    detail += "\n1. export NCCL_SHM_DISABLE=1;";
    detail +=
        "\n3. Increase shared memory by setting the -shm-size "
        "option when starting docker container, e.g., setting "
        " -shm-size=2g.\n";
    sout << " Detail: " + detail;
  }
  return sout.str();
}
inline std::string build_nvidia_error_msg(cublasStatus_t stat) {
  std::string msg(" Cublas error, ");
  return msg + cublasGetErrorString(stat) + " ";
}
    """
    got = paddle_src.file_messages("paddle/phi/core/enforce.h", src)
    assert ("error", "NCCL error(%s), %s.") in got
    assert ("error", "Cublas error, %s") in got
    assert ("error", "3. Increase shared memory by setting the -shm-size option when starting "
            "docker container, e.g., setting  -shm-size=2g.") in got  # fmt: skip
    assert not [t for _, t in got if t.strip().startswith("Detail")]


def test_a_message_built_first_and_raised_after_is_read() -> None:
    # python/paddle/io/dataloader/worker.py (3.3.1): the worker's exception re-raised in the
    # main process, its class the worker's
    src = """
class _WorkerException:
    def reraise(self):
        msg = f"DataLoader worker({self.worker_id}) caught {self.exc_type.__name__} with message:\\n{self.exc_msg}"
        if getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        raise self.exc_type(msg)

def check(n):
    err = "num_workers should be a non-negative value"
    raise ValueError(err)
"""
    got = paddle_src.file_messages("python/paddle/io/dataloader/worker.py", src)
    assert ("error", "DataLoader worker({}) caught {} with message:\n{}") in got
    assert ("error", "ValueError: num_workers should be a non-negative value") in got


# (real line, label of its most specific entry); lines filled from the sources' formats
LINES = [
    (  # data_loader.cc SIGBUS handler (the worker's stderr)
        "ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by "
        "insufficient shared memory (shm), please check whether use_shared_memory is set and "
        "storage space in /dev/shm is enough",
        "cause/nccl-shm-too-small",
    ),
    (  # data_loader.cc watchdog, the main process: the headline names a signal, not why
        "SystemError: (Fatal) DataLoader process (pid 2817) exited is killed by signal: Bus error.",
        "symptom/process-killed",
    ),
    (  # ... and its next line, which does
        "  It may be caused by insufficient shared storage space. This problem usually occurs "
        "when using docker as a development environment.",
        "cause/nccl-shm-too-small",
    ),
    (
        "  Please use command `df -h` to check the storage space of `/dev/shm`. Shared storage "
        "space needs to be greater than (DataLoader Num * DataLoader queue capacity * 1 batch "
        "data size).",
        "cause/nccl-shm-too-small",
    ),
    (
        "SystemError: (Fatal) DataLoader process (pid 311) exited unexpectedly with code 1. "
        "Error detailed are lost due to multiprocessing. Rerunning with:",
        "symptom/process-killed",
    ),
    (  # io/dataloader/dataloader_iter.py
        "RuntimeError: DataLoader 2 workers exit unexpectedly, pids: 4185, 4186",
        "symptom/process-killed",
    ),
    (  # io/dataloader/worker.py, re-raised in the main process
        "ValueError: DataLoader worker(0) caught ValueError with message:",
        "symptom/python-exception",
    ),
    (  # phi/core/enforce.h: an NCCL call failed with ENOSPC, the advice that follows
        "3. Increase shared memory by setting the -shm-size option when starting docker "
        "container, e.g., setting  -shm-size=2g.",
        "cause/nccl-shm-too-small",
    ),
    (
        "ExternalError: NCCL error(2), unhandled system error. ",
        "symptom/collective-error",
    ),
    (  # distributed/spawn.py
        "Process 1 terminated with the following error:",
        "symptom/peer-failure",
    ),
    (  # distributed/collective.py
        "RuntimeError: Timeout while initializing process group 3.Keys ['3_0'] are not ready "
        "sinck rank 1 is waiting them.Two reason may cause this error:",
        "symptom/rendezvous-failure",
    ),
    (  # utils/cpp_extension/extension_utils.py, building a custom op
        "ValueError: Not found CUDA runtime, please use `export CUDA_HOME=XXX` to specific it.",
        "symptom/build-error",
    ),
    (  # device/__init__.py
        "ValueError: The device should not be 'gpu', since PaddlePaddle is not compiled with CUDA",
        "symptom/unsupported",
    ),
]


@pytest.mark.parametrize(("line", "label"), LINES)
def test_a_real_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, "paddle")
    assert got == label, (line, template)


def test_a_pasted_shared_memory_crash_gets_its_cause_first(rules) -> None:  # type: ignore[no-untyped-def]
    got = [c.id for c in diagnose_text(rules, LINES[0][0] + "\n").causes]
    assert got[:1] == ["nccl-shm-too-small"], got


def test_the_coverage_row_is_fully_classified(cat: Catalogue) -> None:
    row = next(r for r in coverage(cat)["libraries"] if r["name"] == "paddle")
    assert row["versions"] == "1.8.5-3.x"
    assert row["messages"] == row["classified"] > 1800
    assert row["causes"] + row["symptoms"] + row["benign"] == row["messages"]
    files = {m.file for m in cat.by_library("paddle")}
    assert "paddle/fluid/imperative/data_loader.cc" in files
    assert "python/paddle/io/dataloader/dataloader_iter.py" in files
    assert not [f for f in files if f.startswith("python/paddle/distributed/auto_parallel/")]
