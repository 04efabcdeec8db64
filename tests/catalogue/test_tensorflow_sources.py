"""TensorFlow and tensorflow-datasets, catalogued from their sources (tfsources.py): real
snippets of their code give the templates users see (TensorFlow's status builders under
any namespace, absl::StrFormat's printf formats, an f-string raise), wheels and trees merge
in version order with each file content read once, a bad snapshot listing is one error
with its file and line, and real lines from public threads get the class their source
deserves."""

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

import cppmsg  # noqa: E402
import tfsources  # noqa: E402

# tensorflow_datasets 4.0.1, core/tf_compat.py (ensure_tf_install)
TFDS_TF_COMPAT = """
def ensure_tf_install():
  tf_version = distutils.version.LooseVersion(tf.__version__)
  min_tf_version = distutils.version.LooseVersion(MIN_TF_VERSION)
  if tf_version < min_tf_version:
    raise ImportError(
        "This version of TensorFlow Datasets requires TensorFlow "
        f"version >= {MIN_TF_VERSION}; Detected an installation of version "
        f"{tf.__version__}. Please upgrade TensorFlow to proceed."
    )
"""

# tensorflow/core/common_runtime/gpu/gpu_device.cc (2.22 development tree)
GPU_DEVICE_OOM = r"""
      Status err = errors::ResourceExhausted(
          "OOM when allocating tensor of shape ", from.shape().DebugString(),
          " and type ", DataTypeString(from.dtype()));
"""

# third_party/xla/xla/stream_executor/cuda/cuda_diagnostics.cc (2.22 development tree)
CUDA_DIAGNOSTICS = r"""
  if (pieces.size() < 2 || pieces.size() > 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expected %%d.%%d, %%d.%%d.%%d, or %%d.%%d.%%d.%%d form "
        "for driver version; got \"%s\"",
        value.c_str()));
  }
  if (!absl::SimpleAtoi(pieces[0], &major)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("could not parse major version number \"%s\" as an "
                        "integer from string \"%s\"",
                        pieces[0], value));
  }
"""


def test_an_f_string_raise_of_tfds_is_its_template() -> None:
    got = tfsources.read_file("tensorflow_datasets/core/tf_compat.py", TFDS_TF_COMPAT)
    assert got == [
        (
            "error",
            "ImportError: This version of TensorFlow Datasets requires TensorFlow version >= "
            "{}; Detected an installation of version {}. Please upgrade TensorFlow to proceed.",
        )
    ]


def test_a_status_builder_cppmsg_does_not_know_is_read_as_an_error() -> None:
    assert list(cppmsg.messages(GPU_DEVICE_OOM)) == []  # errors::ResourceExhausted alone
    assert tfsources.read_file("gpu_device.cc", GPU_DEVICE_OOM) == [
        ("error", "OOM when allocating tensor of shape %s and type %s")
    ]


def test_absl_strformat_keeps_its_printf_format() -> None:
    assert tfsources.read_file("cuda_diagnostics.cc", CUDA_DIAGNOSTICS) == [
        (
            "error",
            'expected %%d.%%d, %%d.%%d.%%d, or %%d.%%d.%%d.%%d form for driver version; got "%s"',
        ),
        ("error", 'could not parse major version number "%s" as an integer from string "%s"'),
    ]


def _wheel(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def test_wheels_merge_in_version_order_and_each_content_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    strategy = 'raise ValueError("Unrecognized task_type: %r" % t)\n'
    old = _wheel(
        tmp_path / "old.whl",
        {  # TF 1.15-2.1 wheels ship the package as tensorflow_core/
            "tensorflow_core/python/distribute/multi_worker_util.py": strategy,
            "tensorflow_core/python/distribute/values_test.py": 'raise ValueError("a test")\n',
            "tensorflow_core/python/ops/math_ops.py": 'raise ValueError("not read")\n',
        },
    )
    new = _wheel(
        tmp_path / "new.whl",
        {
            "tensorflow/python/distribute/multi_worker_util.py": strategy,
            "tensorflow/python/distribute/cluster_resolver/slurm_cluster_resolver.py": (
                'raise RuntimeError("Requested more GPUs per node than available.")\n'
            ),
        },
    )
    calls: list[str] = []
    real = tfsources.read_file

    def counted(path: str, text: str) -> list[tuple[str, str]]:
        calls.append(path)
        return real(path, text)

    monkeypatch.setattr(tfsources, "read_file", counted)
    # listed newest first: the scan orders them by version
    snaps = [tfsources.Snapshot("2.10.1", wheel=new), tfsources.Snapshot("1.15.0", wheel=old)]
    versions, seen = tfsources.scan(snaps, tfsources.tf_keep)
    assert versions == "1.15.0-2.10.1"
    got = {s.template: (s.first, s.last, s.file) for s in seen}
    assert got == {
        "ValueError: Unrecognized task_type: %r": (
            "1.15.0",
            "2.10.1",
            "tensorflow/python/distribute/multi_worker_util.py",
        ),
        "RuntimeError: Requested more GPUs per node than available.": (
            "2.10.1",
            "2.10.1",
            "tensorflow/python/distribute/cluster_resolver/slurm_cluster_resolver.py",
        ),
    }
    assert calls.count("tensorflow/python/distribute/multi_worker_util.py") == 1


def test_a_bad_listing_line_is_one_error_with_its_place(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "w.whl", {"x.py": ""})
    listing = tmp_path / "tf.txt"
    cases = {
        f"2.4.4 wheel {tmp_path / 'missing.whl'}": "no wheel",
        f"2.4.4 wheel {wheel} java": "must be cpp or py",
        f"two wheel {wheel}": "is not a version",
        f"2.4.4 git {tmp_path / 'nowhere'} v2.4.4": "no git directory",
        "2.4.4 svn trunk": "expected 'VERSION wheel FILE'",
    }
    for line, says in cases.items():
        listing.write_text(f"# TensorFlow\n{line}\n", encoding="utf-8")
        with pytest.raises(ValueError, match=says) as err:
            tfsources.read_listing(listing)
        assert str(err.value).startswith(f"{listing}:2: "), err.value
    listing.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lists no snapshot"):
        tfsources.read_listing(listing)


CUDNN_8 = (  # google-research/deeplab2#66
    "2021-10-13 17:19:29.385716: E tensorflow/stream_executor/cuda/cuda_dnn.cc:362] Loaded "
    "runtime CuDNN library: 8.0.4 but source was compiled with: 8.1.0.  CuDNN library needs "
    "to have matching major version and equal or higher minor version. If using a binary "
    "install, upgrade your CuDNN library.  If building from sources, make sure the library "
    "loaded at runtime is compatible with the version specified during compile configuration."
)
TFDS_TOO_NEW = (  # mit-han-lab/data-efficient-gans#28
    "ImportError: This version of TensorFlow Datasets requires TensorFlow version >= 2.1.0; "
    "Detected an installation of version 1.15.0. Please upgrade TensorFlow to proceed."
)

# (real line, library, label of its most specific entry)
LINES = [
    (CUDNN_8, "tensorflow", "cause/cuda-lib-missing"),
    (  # tensorflow/tensorflow#37606 (the wording of TF 1.x-2.1)
        "2020-07-02 18:49:18.254447: E tensorflow/stream_executor/cuda/cuda_dnn.cc:320] Loaded "
        "runtime CuDNN library: 7.5.0 but source was compiled with: 7.6.3.  CuDNN library major "
        "and minor version needs to match or have higher minor version in case of CuDNN 7.0 or "
        "later version. If using a binary install, upgrade your CuDNN library.  If building from "
        "sources, make sure the library loaded at runtime is compatible with the version "
        "specified during compile configuration.",
        "tensorflow",
        "cause/cuda-lib-missing",
    ),
    (TFDS_TOO_NEW, "tensorflow-datasets", "cause/tfds-version"),
    (  # tensorflow/tensorflow#44869: no GPU seen, TF goes on on the CPU
        "2020-11-11 10:46:37.467224: E tensorflow/stream_executor/cuda/cuda_driver.cc:314] "
        "failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
        "tensorflow",
        "symptom/cuda-error",
    ),
    (  # tensorflow/tensorflow#44869
        "2020-11-11 10:46:37.467270: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:156] "
        "kernel driver does not appear to be running on this host (16c54693e7f2): "
        "/proc/driver/nvidia/version does not exist",
        "tensorflow",
        "symptom/cuda-error",
    ),
    (  # tensorflow/datasets#2613
        "2020-10-20 12:31:37.122888: I tensorflow/stream_executor/platform/default/"
        "dso_loader.cc:48] Successfully opened dynamic library libcudart.so.10.1",
        "tensorflow",
        "benign",
    ),
]


@pytest.mark.parametrize(("line", "library", "label"), LINES)
def test_a_real_line_gets_the_class_of_the_entry_its_source_prints(
    cat: Catalogue, line: str, library: str, label: str
) -> None:
    got, template = label_of(cat, line, library)
    assert got == label, (line, template)


def test_both_libraries_are_covered_from_their_releases(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["tensorflow"].versions.startswith("1.13.2-")
    assert libs["tensorflow-datasets"].versions == "1.0.2-4.9.10"
    by_file = {m.file.rsplit("/", 1)[-1] for m in cat.by_library("tensorflow")}
    for name in ("dso_loader.cc", "cuda_dnn.cc", "cuda_driver.cc", "gpu_device.cc"):
        assert name in by_file, name
    for name in ("collective_all_reduce_strategy.py", "coordination_service.cc", "context.py"):
        assert name in by_file, name


@pytest.fixture(scope="module")
def rules():  # type: ignore[no-untyped-def]
    return load_rules()


@pytest.mark.parametrize(
    ("paste", "cause"), [(CUDNN_8, "cuda-lib-missing"), (TFDS_TOO_NEW, "tfds-version")]
)
def test_a_one_line_paste_gets_its_cause_first(rules, paste: str, cause: str) -> None:  # type: ignore[no-untyped-def]
    got = [c.id for c in diagnose_text(rules, paste + "\n").causes]
    assert got[:1] == [cause], got
