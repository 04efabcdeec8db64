"""MXNet at every release from 1.0.0: the glog/dmlc `LOG(LEVEL) << ...` and
`CHECK*(...) << ...` texts of its GPU and distributed-training C++ (cuDNN autotuning,
kvstore, storage, engine, CUDA checks), the ps-lite it pins as a submodule (read at the
commit each release pins), and the Python `raise`/`warnings.warn` of its kvstore,
Gluon trainer and context modules."""

from __future__ import annotations

import subprocess
from collections.abc import Hashable
from pathlib import Path

import cppmsg
import pyextract
from gitsrc import BlobReader, files_at, release_tags
from merge import Found, Merger, Seen, span
from srckit import add_files, write_catalogue

TAGS = r"(1\.\d+\.\d+)"
FIRST = "1.0.0"
CPP = (".cc", ".cu", ".h", ".cuh", ".cpp")
# folders (or files) of MXNet's tree that print what a user of (distributed) GPU training sees
PATHS = (
    "src/operator/nn/cudnn", "src/operator/cudnn_algoreg-inl.h", "src/kvstore", "src/storage", "src/engine",
    "src/common/cuda_utils.h", "src/common/cuda/utils.h",
    "python/mxnet/kvstore.py", "python/mxnet/kvstore_server.py", "python/mxnet/kvstore",
    "python/mxnet/gluon/trainer.py", "python/mxnet/context.py",
)  # fmt: skip
PSLITE_PATHS = ("src", "include/ps")
PSLITE_DIRS = ("3rdparty/ps-lite", "ps-lite")  # the submodule moved under 3rdparty/ in 1.3


def read_source(path: str, text: str) -> list[Found]:
    """The messages of one file, by its kind."""
    if path.endswith(".py"):
        found = [(m.level, m.template) for m in pyextract.messages(text)]
    else:
        found = [(m.level, m.template) for m in cppmsg.messages(text)]
    return [(level, template, {}) for level, template in dict.fromkeys(found)]


def _keep(path: str) -> bool:
    return path.endswith((*CPP, ".py")) and "/test" not in path


def submodule_commit(git_dir: Path, tag: str) -> str | None:
    """The ps-lite commit a release pins, if it pins one."""
    for folder in PSLITE_DIRS:
        out = subprocess.run(
            ["git", f"--git-dir={git_dir}", "ls-tree", tag, folder],
            check=True, capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        if len(out) >= 3 and out[1] == "commit":
            return out[2]
    return None


def _has_commit(git_dir: Path, rev: str) -> bool:
    got = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{rev}^{{commit}}"],
        capture_output=True,
    )  # fmt: skip
    return got.returncode == 0


def scan(git_dir: Path, pslite_dir: Path | None = None) -> tuple[str, list[Seen]]:
    """Every message of PATHS (and of the pinned ps-lite, given its mirror) at every
    release from FIRST, merged across releases; each blob read once."""
    tags = [(t, v) for t, v in release_tags(git_dir, TAGS, FIRST)]
    if not tags:
        raise ValueError(f"{git_dir}: no tag matches {TAGS} from {FIRST}")
    merger = Merger()
    reader = BlobReader(git_dir)
    per_blob: dict[Hashable, list[Found]] = {}
    ps_reader = BlobReader(pslite_dir) if pslite_dir else None
    ps_blob: dict[Hashable, list[Found]] = {}
    missing = []
    for tag, version in tags:
        files = files_at(git_dir, tag, _keep, PATHS)
        add_files(merger, reader, files, version, read_source, per_blob)
        pinned = submodule_commit(git_dir, tag) if pslite_dir else None
        if ps_reader is None or pslite_dir is None or pinned is None:
            continue
        if not _has_commit(pslite_dir, pinned):
            missing.append(f"{version}:{pinned[:10]}")
            continue
        files = files_at(pslite_dir, pinned, _keep, PSLITE_PATHS)
        add_files(
            merger, ps_reader, files, version, read_source, ps_blob, prefix="3rdparty/ps-lite/"
        )
    reader.close()
    if ps_reader:
        ps_reader.close()
    if missing:
        raise ValueError("ps-lite mirror lacks the pinned commits " + ", ".join(missing))
    return span(tags[0][1], tags[-1][1]), merger.entries()


def main(argv: list[str] | None = None) -> int:
    """`python scripts/catalogue/mxnet_src.py --git-dir MXNET.git --pslite-git-dir PS.git`
    regenerates catalogue/mxnet.yaml (build.py's emit and classification table)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", type=Path, required=True)
    ap.add_argument("--pslite-git-dir", type=Path)
    args = ap.parse_args(argv)
    try:
        write_catalogue("mxnet", scan(args.git_dir, args.pslite_git_dir), SOURCE)
    except (LookupError, ValueError, OSError, subprocess.CalledProcessError) as exc:
        print(f"mxnet_src: {exc}", file=sys.stderr)
        return 1
    return 0


SOURCE = "https://github.com/apache/mxnet (with its pinned https://github.com/dmlc/ps-lite)"

if __name__ == "__main__":
    raise SystemExit(main())
