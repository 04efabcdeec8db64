"""PaddlePaddle's messages, read file by file: its git history is too large for a mirror
here, so each release's Python sources and the C++ headers it ships are taken from its
PyPI wheel (`wheel_tree`), and the `.cc` files that only the repository holds are read
one stored version at a time into a labelled folder (as `dirscan` describes).

C++ is read the Paddle way: `PADDLE_ENFORCE*(cond, ..., errors::Kind("fmt %s", x))` and
`PADDLE_THROW(errors::Kind("fmt"))` carry a printf format (Paddle 2.x/3.x), or the format
itself as the message argument (Paddle 1.x: `PADDLE_ENFORCE(cond, "fmt %s", x)`);
`LOG(WARNING) << ...`, `VLOG(0) << ...` stream. Python goes through `pyextract`.

    python scripts/catalogue/paddle_src.py --wheels DIR [DIR ...] --src-dir DIR
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import cppmsg
import dirscan
import pyextract
from cprintf import _skip_space, calls
from merge import Seen

CPP = (".cc", ".cpp", ".cu", ".h", ".hpp", ".cuh")
# what a user of (distributed) training sees, by the path the repository gives it
PY_PARTS = (
    "python/paddle/distributed/launch/", "python/paddle/distributed/fleet/launch",
    "python/paddle/distributed/fleet/elastic/", "python/paddle/distributed/fleet/base/",
    "python/paddle/distributed/utils/", "python/paddle/distributed/utils.py",
    "python/paddle/distributed/spawn.py",
    "python/paddle/distributed/parallel.py", "python/paddle/distributed/launch.py",
    "python/paddle/utils/install_check.py", "python/paddle/fluid/dygraph/parallel.py",
)  # fmt: skip
CPP_PARTS = (
    "paddle/phi/backends/dynload/", "paddle/phi/backends/gpu/", "paddle/phi/core/enforce.h",
    "paddle/common/enforce.h", "paddle/fluid/distributed/", "paddle/phi/core/distributed/",
    "paddle/fluid/platform/dynload/", "paddle/fluid/platform/device_context",
    "paddle/fluid/platform/nccl_helper", "paddle/fluid/platform/gpu_info",
    "paddle/fluid/platform/collective_helper", "paddle/fluid/platform/gen_comm_id_helper",
    "paddle/fluid/platform/enforce.h", "paddle/fluid/platform/device/gpu/",
)  # fmt: skip
# PADDLE_ENFORCE* -> index of the message argument when it is a format of its own (1.x)
ENFORCE = {
    "PADDLE_ENFORCE": 1, "PADDLE_ENFORCE_EQ": 2, "PADDLE_ENFORCE_NE": 2,
    "PADDLE_ENFORCE_GT": 2, "PADDLE_ENFORCE_GE": 2, "PADDLE_ENFORCE_LT": 2,
    "PADDLE_ENFORCE_LE": 2, "PADDLE_ENFORCE_NOT_NULL": 1, "PADDLE_THROW": 0,
}  # fmt: skip
# `errors::Kind(` written without its namespace inside `namespace paddle::platform`
_BARE_ERRORS = re.compile(r"(?<![\w:])errors::(?=[A-Z]\w*\s*\()")
# `std::string warning_msg("...")`: a text built for a `LOG(WARNING) << warning_msg` later
_BUILT_WARNING = re.compile(r"\bstd::string\s+\w*warn\w*\s*\(")


def wanted(path: str) -> bool:
    """Whether a repository path is one whose messages the catalogue keeps."""
    if "/test" in path or path.endswith("_test.cc"):
        return False
    if path.endswith(".py"):
        return path.startswith(PY_PARTS)
    return path.endswith(CPP) and path.startswith(CPP_PARTS)


def repo_path(member: str) -> str | None:
    """The repository path of a wheel member: `paddle/x.py` is `python/paddle/x.py`, a
    shipped header `paddle/include/paddle/phi/x.h` is `paddle/phi/x.h`."""
    if member.startswith("paddle/include/paddle/"):
        return member[len("paddle/include/") :]
    if member.startswith("paddle/") and member.endswith(".py"):
        return "python/" + member
    return None


def wheel_tree(wheel: Path, out: Path) -> int:
    """Write the wanted files of one wheel under `out` by their repository paths."""
    return dirscan.wheel_tree(wheel, out, repo_path, wanted)


def cpp_messages(text: str) -> Iterator[tuple[str, str]]:
    """(level, template) of every message of one Paddle C++ file."""
    text = _BARE_ERRORS.sub("platform::errors::", text)
    for msg in cppmsg.messages(text):
        yield msg.level, msg.template
    for c in calls(text, ENFORCE):
        yield "error", c.template
    for m in _BUILT_WARNING.finditer(text):
        lit = cppmsg._literal_run(text, _skip_space(text, m.end()))
        if lit and lit[0].strip():
            yield "warn", lit[0].replace("%", "%%")


def py_extra(path: str, text: str) -> Iterator[tuple[str, str]]:
    """What `pyextract` leaves out and a Paddle user sees: `assert cond, "msg"` (the
    launcher checks its node list so: "Can't find your local ip ..."), and the
    `print(...)` lines of `paddle.utils.run_check()` (its success lines)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            msg = pyextract._text(node.msg)
            if msg and msg.strip():
                yield "error", f"AssertionError: {msg}"
        elif (
            path.endswith("install_check.py")
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "print"
            and node.args
        ):
            msg = pyextract._text(node.args[0])
            if msg and msg.strip():
                yield "info", msg


def file_messages(path: str, text: str) -> list[tuple[str, str]]:
    if path.endswith(".py"):
        found = [(m.level, m.template) for m in pyextract.messages(text)]
        found += list(py_extra(path, text))
    elif path.endswith(CPP):
        found = list(cpp_messages(text))
    else:
        found = []
    return list(dict.fromkeys(found))


def scan(src: Path) -> tuple[str, list[Seen]]:
    """Every message of the wanted files under each labelled folder of `src`."""
    return dirscan.scan(src, wanted, file_messages)


def _wheel_version(wheel: Path) -> str:
    m = re.match(r"paddlepaddle(?:_gpu)?-(\d+\.\d+\.\d+)(?:\.post\d+)?-", wheel.name)
    if not m:
        raise ValueError(f"{wheel}: not a paddlepaddle wheel name")
    return m.group(1)


def main(argv: list[str] | None = None) -> int:
    import build
    from classify import Table
    from gitsrc import version_key

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--wheels", type=Path, nargs="+", required=True, help="folders of paddlepaddle*.whl"
    )
    ap.add_argument("--src-dir", type=Path, required=True, help="labelled folders (dirscan)")
    args = ap.parse_args(argv)
    try:
        found = [w for d in args.wheels for w in d.glob("paddlepaddle*.whl")]
        wheels = sorted(found, key=lambda w: version_key(_wheel_version(w)))
        if not wheels:
            raise ValueError(f"{' '.join(map(str, args.wheels))}: no paddlepaddle wheel")
        for wheel in wheels:
            n = wheel_tree(wheel, args.src_dir / _wheel_version(wheel))
            print(f"{wheel.name}: {n} files")
        versions, seen = scan(args.src_dir)
        table = Table(build.CATALOGUE / "classify.yaml")
        n = build.emit("paddle", build.DIR_SOURCES["paddle"], versions, seen, table)
    except (LookupError, ValueError, OSError, zipfile.BadZipFile) as exc:
        print(f"paddle_src: {exc}", file=sys.stderr)
        return 1
    print(f"paddle: {n} messages, versions {versions}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
