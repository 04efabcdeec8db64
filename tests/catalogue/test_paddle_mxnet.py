"""PaddlePaddle and MXNet in the catalogue: the extractors read each library's own ways of
printing (Paddle's `PADDLE_ENFORCE*`/`errors::Kind("fmt")`, its `std::string warning_msg(...)`
and asserts; MXNet's `LOG(INFO) << ...` and `CHECK*(...) << ...`, with ps-lite's headers),
wheels are laid out by their repository paths, real log lines match the entry their source
prints with its class, and a one-line paste from a public thread gets its cause first."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.engine import diagnose_text
from kb.rules.catalogue import Catalogue
from tests.catalogue.entry_label import label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import mxnet_src  # noqa: E402
import paddle_src  # noqa: E402


@pytest.fixture(scope="module")
def rules():  # type: ignore[no-untyped-def]
    return load_rules()


def test_mxnet_autotune_and_kvstore_checks_are_read_from_their_streams() -> None:
    # src/operator/nn/cudnn/cudnn_algoreg-inl.h (1.9.1) and src/kvstore/kvstore.cc
    src = r"""
      if (!is_added) {
        LOG(INFO) << "Running performance tests to find the best convolution "
                     "algorithm, "
                     "this can take a while... (set the environment variable "
                     "MXNET_CUDNN_AUTOTUNE_DEFAULT to 0 to disable)";
      }
    LOG(FATAL) << "compile with USE_NCCL=1 to use " << tname;
    CHECK(!async) << "Asynchronous update is not supported in P3StoreDist";
    """
    got = mxnet_src.read_source("src/operator/nn/cudnn/cudnn_algoreg-inl.h", src)
    assert ("info", "Running performance tests to find the best convolution algorithm, "
            "this can take a while... (set the environment variable "
            "MXNET_CUDNN_AUTOTUNE_DEFAULT to 0 to disable)", {}) in got  # fmt: skip
    assert ("fatal", "compile with USE_NCCL=1 to use %s", {}) in got
    assert ("fatal", "Asynchronous update is not supported in P3StoreDist", {}) in got


def test_a_check_left_open_in_a_comment_does_not_stop_the_reader() -> None:
    # ps-lite include/ps/sarray.h: its doc comment has `CHECK_EQ(...` with no `)`; the
    # reader once looped on the `}` that follows, forever
    src = """
    CHECK_EQ(size_ * sizeof(V), arr.size() * sizeof(W)) << "cannot be divided";
  /**
   * CHECK_EQ(Range(1,3), FindRange(a, 2, 7);
   */
  }
    """
    got = mxnet_src.read_source("3rdparty/ps-lite/include/ps/sarray.h", src)
    assert got == [("fatal", "cannot be divided", {})]


def test_paddle_enforce_throw_and_built_warnings_are_read() -> None:
    # paddle/fluid/platform/device/gpu/gpu_info.cc and dynload/dynamic_loader.cc (2.x), a
    # Paddle 1.x style enforce whose message is its own format, and an `errors::` written
    # without its namespace
    src = r"""
    PADDLE_ENFORCE_LT(
        dev_id,
        instances_.size(),
        phi::errors::OutOfRange("Device id %d exceeds gpu card number %d.",
                                dev_id,
                                instances_.size()));
  std::string warning_msg(
      "You may need to install 'nccl2' from NVIDIA official website: "
      "https://developer.nvidia.com/nccl/nccl-download"
      "before install PaddlePaddle.");
  PADDLE_ENFORCE(dso_handle != nullptr, "Failed to find dynamic library: %s", name);
  PADDLE_THROW(errors::Unavailable("Bind network on %s:%s failed.", host, port));
  LOG(WARNING) << "Retry " << n << " times";
  VLOG(3) << "not printed by default";
    """
    got = paddle_src.file_messages("paddle/fluid/platform/dynload/dynamic_loader.cc", src)
    assert ("error", "Device id %d exceeds gpu card number %d.") in got
    assert ("warn", "You may need to install 'nccl2' from NVIDIA official website: "
            "https://developer.nvidia.com/nccl/nccl-downloadbefore install PaddlePaddle.") in got  # fmt: skip
    assert ("error", "Failed to find dynamic library: %s") in got
    assert ("error", "Bind network on %s:%s failed.") in got
    assert ("warn", "Retry %s times") in got
    assert not [t for _, t in got if "not printed" in t]


def test_paddle_asserts_and_run_check_prints_are_read() -> None:
    # python/paddle/distributed/fleet/launch_utils.py, utils/install_check.py (3.3.1)
    src = """
def get_cluster_from_args(args, device_mode, devices_per_proc):
    node_ips = [x.strip() for x in args.ips.split(',')]
    assert node_ip in node_ips, (
        f"Can't find your local ip {{{node_ip}}} in node_ips: {{{node_ips}}}"
    )

def run_check():
    print(f"PaddlePaddle works well on 1 {device_str}.")
    """
    got = paddle_src.file_messages("python/paddle/utils/install_check.py", src)
    assert ("error", "AssertionError: Can't find your local ip {{{}}} in node_ips: {{{}}}") in got
    assert ("info", "PaddlePaddle works well on 1 {}.") in got
    other = paddle_src.file_messages("python/paddle/distributed/fleet/launch_utils.py", src)
    assert ("info", "PaddlePaddle works well on 1 {}.") not in other


def test_a_wheel_is_laid_out_by_repository_paths(tmp_path: Path) -> None:
    wheel = tmp_path / "paddlepaddle-3.3.1-cp310-cp310-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("paddle/distributed/spawn.py", "raise ValueError('x')\n")
        zf.writestr("paddle/include/paddle/phi/backends/gpu/gpu_info.h", "// h\n")
        zf.writestr("paddle/vision/models/resnet.py", "raise ValueError('not kept')\n")
        zf.writestr("paddle/distributed/launch/test_launch.py", "# a test: not kept\n")
    out = tmp_path / "3.3.1"
    assert paddle_src.wheel_tree(wheel, out) == 2
    kept = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert kept == ["paddle/phi/backends/gpu/gpu_info.h", "python/paddle/distributed/spawn.py"]
    assert paddle_src._wheel_version(wheel) == "3.3.1"
    gpu = tmp_path / "paddlepaddle_gpu-1.8.5.post107-cp37-cp37m-manylinux1_x86_64.whl"
    assert paddle_src._wheel_version(gpu) == "1.8.5"


def test_the_releases_read_are_the_versions(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["mxnet"].versions == "1.0.0-1.9.1"
    tune = [m for m in cat.by_library("mxnet") if m.template.startswith("Running performance")]
    # the wording changed in 1.5.0 ("setting env variable" -> "set the environment variable")
    assert sorted(m.versions for m in tune) == ["1.0.0-1.4.1", "1.5.0-1.9.1"]
    assert libs["paddle"].versions == "1.8.5-3.x"
    spawn = [
        m
        for m in cat.by_library("paddle")
        if "spawn processes" in m.template and "`CUDA_VISIBLE_DEVICES`" in m.template
    ]
    # %-formatted through 2.6.2, an f-string from 3.0.0: one entry per wording
    assert sorted(m.versions for m in spawn) == ["2.0.2-2.6.2", "3.0.0-3.3.1"]


# (real line, library, label of its most specific entry)
LINES = [
    (  # Oneflow-Inc/DLPerf MXNet logs; apache/mxnet#15529 (autotune at start-up, INFO)
        "[12:45:18] /root/lilw/mxnet/src/operator/nn/./cudnn/./cudnn_algoreg-inl.h:97: Running "
        "performance tests to find the best convolution algorithm, this can take a while... "
        "(set the environment variable MXNET_CUDNN_AUTOTUNE_DEFAULT to 0 to disable)",
        "mxnet",
        "cause/framework-env-tuning",
    ),
    (  # apache/mxnet#19499
        "MXNetError: cudaMalloc retry failed: out of memory",
        "mxnet",
        "cause/gpu-out-of-memory",
    ),
    (  # apache/mxnet#3823 ("your GPU or motherboard doesn't support P2P")
        "[20:45:45] src/kvstore/././comm.h:577: only 4 out of 12 GPU pairs are enabled direct "
        "access. It may affect the performance. You can set MXNET_ENABLE_GPU_P2P=0 to turn it off",
        "mxnet",
        "cause/gpu-topology-slow",
    ),
    (  # PaddlePaddle/Paddle#66092 (plain `python tools/train.py` calling init_parallel_env)
        "ValueError: paddle.distributed initialize error, environment variable "
        "FLAGS_selected_gpus is needed, but not set.",
        "paddle",
        "cause/paddle-launch-mode",
    ),
    (  # PaddlePaddle/PaddleSeg#3494 (the launcher's summary of a failed worker)
        "LAUNCH ERROR 2023-09-11 14:55:20,499 Container failed !!!",
        "paddle",
        "symptom/process-killed",
    ),
]


@pytest.mark.parametrize(("line", "library", "label"), LINES)
def test_a_real_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, library: str, label: str
) -> None:
    got, template = label_of(cat, line, library)
    assert got == label, (line, template)


@pytest.mark.parametrize(
    ("paste", "cause"),
    [
        (LINES[1][0], "gpu-out-of-memory"),
        (LINES[2][0], "gpu-topology-slow"),
        (LINES[3][0], "paddle-launch-mode"),
    ],
)
def test_a_one_line_paste_gets_its_cause_first(rules, paste: str, cause: str) -> None:  # type: ignore[no-untyped-def]
    got = [c.id for c in diagnose_text(rules, paste + "\n").causes]
    assert got[:1] == [cause], got


def test_the_autotune_line_at_start_up_is_no_catalogued_evidence(rules) -> None:  # type: ignore[no-untyped-def]
    """Printed once at start-up it is INFO: catalogued as framework-env-tuning's message, it
    is never evidence at that level (the rule's own signatures, which count repeats and the
    log's end, stay what speaks for the cause), and the run is no failure."""
    log = LINES[0][0] + "\nEpoch[0] Batch [20-40]\tSpeed: 2947.12 samples/sec\n"
    diag = diagnose_text(rules, log)
    assert diag.failure is None
    sigs = [e.signature for c in diag.causes for e in c.evidence]
    assert sigs == ["framework-env-tuning/cudnn-autotune-running"], sigs
    assert all(c.basis == "observation" for c in diag.causes), diag.causes
