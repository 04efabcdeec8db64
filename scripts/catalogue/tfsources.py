"""TensorFlow and tensorflow-datasets, at their releases, from two kinds of source merged
in version order: git trees (TensorFlow's repository is too large for a mirror here, so
snapshots of forks that hold its release tags and of google/tsl, the platform code TF
vendors) and the released wheels (`pip download`), whose `.py` files are the sources as
shipped. Each distinct file content is read once, whichever tag or wheel holds it.

    build.py tensorflow --snapshots FILE     (one snapshot a line, see `read_listing`)

What is read is what a user of distributed training sees: TF's distribute, keras
distribute, eager context, framework errors and cluster spec in Python; the CUDA loader
(dso_loader, cudart_stub), stream_executor's cuDNN/cuBLAS/driver/diagnostics, the distributed runtime
(gRPC, coordination service, collectives) and the GPU device in C++; and all of
tensorflow_datasets/core."""

from __future__ import annotations

import hashlib
import os
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import cppmsg
import pyextract
from gitsrc import BlobReader, files_at, version_key
from merge import Merger, Seen, span

CPP_SUFFIXES = (".cc", ".h")
# where stream_executor lived: TF <= 2.10, 2.11-2.15, and XLA vendored from 2.16
_SE = r"(?:tensorflow/|tensorflow/compiler/xla/|third_party/xla/xla/|xla/)stream_executor/"
_TSL = r"(?:|third_party/xla/third_party/tsl/|third_party/xla/xla/)tsl/"
TF_CPP = re.compile(
    rf"^(?:{_SE}cuda/cuda_(?:dnn|blas|driver|diagnostics)\.cc"
    rf"|{_SE}platform/default/dso_loader\.cc"
    rf"|tensorflow/core/platform/default/dso_loader\.cc|{_TSL}platform/default/dso_loader\.cc"
    rf"|{_SE}cuda/cudart_stub\.cc|{_TSL}cuda/cudart_stub\.cc"
    rf"|tensorflow/core/distributed_runtime/.*|{_TSL}distributed_runtime/.*"
    r"|tensorflow/core/common_runtime/gpu/.*|tensorflow/core/common_runtime/collective_\w+\.cc"
    r"|tensorflow/core/common_runtime/base_collective_executor\.cc"
    r"|tensorflow/core/kernels/collective_ops\.cc|tensorflow/core/nccl/nccl_manager\.cc)$"
)
TF_PY = re.compile(
    r"^tensorflow/(?:python/distribute/.*|python/keras/distribute/.*|python/eager/context"
    r"|python/framework/errors\w*|python/training/server_lib|contrib/distribute/.*"
    r"|contrib/slim/python/slim/data/parallel_reader)\.py$"
)
TFDS_PY = re.compile(r"^tensorflow_datasets/core/.*\.py$")
# test code and test harnesses (multi_process_runner, strategy combinations) print
# nothing a user's job prints
_TESTS = re.compile(
    r"(?:_test\.py|_test\.cc|_test_base\.py|test_util\w*\.(?:py|cc|h)|test_lib\.py|/testing/"
    r"|/test/|/tests/|integration_test|multi_process_runner|multi_worker_test_base|strategy_combinations"
    r"|/combinations\.py|_testlib|/mock_|fake_)"
)


def tf_keep(path: str) -> bool:
    if _TESTS.search(path):
        return False
    if path.endswith(".py"):
        return bool(TF_PY.match(path))
    return path.endswith(CPP_SUFFIXES) and bool(TF_CPP.match(path))


def tfds_keep(path: str) -> bool:
    return bool(TFDS_PY.match(path)) and not _TESTS.search(path)


# TensorFlow's status builders under every namespace (`tsl::errors::Internal`,
# `port::InternalError`, `absl::ResourceExhaustedError`) read as the ones cppmsg knows:
# all are errors whose arguments are concatenated
_ERRORS = re.compile(r"(?<![\w.>])(?:\w+::)*errors::\w+\s*\(")
_STATUS = re.compile(r"(?<![\w.>])(?:absl|port|tsl|tensorflow)::\w+Error\s*\(")


def normalise_cpp(text: str) -> str:
    text = _ERRORS.sub("errors::Internal(", text)
    return _STATUS.sub("absl::InternalError(", text)


def read_file(path: str, text: str) -> list[tuple[str, str]]:
    """The (level, template) pairs one file prints, in order, without repeats."""
    if path.endswith(".py"):
        found = [(m.level, m.template) for m in pyextract.messages(text)]
    else:
        found = [(m.level, m.template) for m in cppmsg.messages(normalise_cpp(text))]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Snapshot:
    """One version's files: a git revision (`git_dir`, `rev`) or a wheel (`wheel`);
    `only` limits it to C++ or Python files (a development tree whose Python the
    release wheels already give)."""

    version: str
    git_dir: Path | None = None
    rev: str = ""
    wheel: Path | None = None
    only: str = ""  # "", "cpp" or "py"

    def wanted(self, path: str) -> bool:
        if self.only == "cpp":
            return not path.endswith(".py")
        if self.only == "py":
            return path.endswith(".py")
        return True


def read_listing(path: Path) -> list[Snapshot]:
    """`version git DIR REV [cpp|py]` or `version wheel FILE [cpp|py]`, one a line
    (`#` starts a comment; `$VAR` in a path is the environment's, as in
    scripts/catalogue/snapshots/); a bad line is an error with its file and line."""
    out: list[Snapshot] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{path}:{n}"
        if len(words) >= 3 and words[1] == "wheel" and len(words) <= 4:
            only = words[3] if len(words) == 4 else ""
            snap = Snapshot(words[0], wheel=Path(os.path.expandvars(words[2])), only=only)
            if not snap.wheel or not snap.wheel.is_file():
                raise ValueError(f"{where}: no wheel {words[2]}")
        elif len(words) >= 4 and words[1] == "git" and len(words) <= 5:
            only = words[4] if len(words) == 5 else ""
            git_dir = Path(os.path.expandvars(words[2]))
            snap = Snapshot(words[0], git_dir=git_dir, rev=words[3], only=only)
            if not snap.git_dir or not snap.git_dir.is_dir():
                raise ValueError(f"{where}: no git directory {words[2]}")
        else:
            raise ValueError(f"{where}: expected 'VERSION wheel FILE' or 'VERSION git DIR REV'")
        if snap.only not in ("", "cpp", "py"):
            raise ValueError(f"{where}: the last word must be cpp or py, not {snap.only!r}")
        if not re.fullmatch(r"\d+(?:\.\d+)*(?:\.?(?:dev|rc)\d*)?", snap.version):
            raise ValueError(f"{where}: {snap.version!r} is not a version (like 2.12.1)")
        out.append(snap)
    if not out:
        raise ValueError(f"{path}: lists no snapshot")
    return out


def _wheel_files(wheel: Path, keep: Callable[[str], bool]) -> Iterator[tuple[str, str, bytes]]:
    """(path in the source tree, content id, bytes) of a wheel's files `keep` accepts;
    TF 1.15-2.1 wheels ship the package as `tensorflow_core/`."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            path = re.sub(r"^tensorflow_core/", "tensorflow/", info.filename)
            if keep(path):
                data = zf.read(info)
                blob = b"blob %d\0" % len(data) + data
                yield path, hashlib.sha1(blob).hexdigest(), data


def scan(snapshots: list[Snapshot], keep: Callable[[str], bool]) -> tuple[str, list[Seen]]:
    """Every message of the kept files of each snapshot, oldest version first; a file
    content (blob) is read once across snapshots, git trees and wheels alike."""
    order = sorted(snapshots, key=lambda s: version_key(s.version))
    merger = Merger()
    per_blob: dict[str, list[tuple[str, str]]] = {}
    readers: dict[Path, BlobReader] = {}
    for snap in order:
        if snap.wheel is not None:
            for path, sha, data in _wheel_files(snap.wheel, keep):
                if not snap.wanted(path):
                    continue
                if sha not in per_blob:
                    per_blob[sha] = read_file(path, data.decode("utf-8", "replace"))
                for level, template in per_blob[sha]:
                    merger.add(snap.version, level, template, path)
        elif snap.git_dir is not None:
            reader = readers.setdefault(snap.git_dir, BlobReader(snap.git_dir))
            for path, sha in files_at(snap.git_dir, snap.rev, keep):
                if not snap.wanted(path):
                    continue
                if sha not in per_blob:
                    per_blob[sha] = read_file(path, reader.read(sha))
                for level, template in per_blob[sha]:
                    merger.add(snap.version, level, template, path)
    for reader in readers.values():
        reader.close()
    return span(order[0].version, order[-1].version), merger.entries()
