"""PaddlePaddle's messages, read file by file: its git history is too large for a mirror
here, so each release's Python sources and the C++ headers it ships are taken from its
PyPI wheel (`wheel_tree`), and the `.cc` files that only the repository holds are read
one stored version at a time into a labelled folder (as `dirscan` describes).

C++ is read the Paddle way: `PADDLE_ENFORCE*(cond, ..., errors::Kind("fmt %s", x))` and
`PADDLE_THROW(errors::Kind("fmt"))` carry a printf format (Paddle 2.x/3.x), or the format
itself as the message argument (Paddle 1.x: `PADDLE_ENFORCE(cond, "fmt %s", x)`);
`LOG(WARNING) << ...`, `VLOG(0) << ...` stream; the DataLoader worker's signal handlers
write a literal, enforce.h builds its CUDA / NCCL error texts (`build_nvidia_error_msg`).
Python goes through `pyextract`, plus asserts and messages built before they are raised.

    python scripts/catalogue/paddle_src.py --wheels DIR [DIR ...] --src-dir DIR
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import cppmsg
import dirscan
import pyextract
from cprintf import _skip_space, calls
from merge import Seen
from srckit import closing_brace, wheel_name_version, wheel_repo_path, wheels_main, write_catalogue

CPP = (".cc", ".cpp", ".cu", ".h", ".hpp", ".cuh")
# what a user of (distributed) training sees, by the path the repository gives it
PY_PARTS = (
    "python/paddle/distributed/launch/", "python/paddle/distributed/fleet/launch",
    "python/paddle/distributed/fleet/elastic/", "python/paddle/distributed/fleet/base/",
    "python/paddle/distributed/utils/", "python/paddle/distributed/utils.py",
    "python/paddle/distributed/spawn.py",
    "python/paddle/distributed/parallel.py", "python/paddle/distributed/launch.py",
    "python/paddle/utils/install_check.py", "python/paddle/fluid/dygraph/parallel.py",
    # the rest of paddle.distributed (fleet, collective, communication, ps, rpc), the
    # DataLoader (its workers and reader threads), paddle.device and cpp_extension
    "python/paddle/distributed/", "python/paddle/io/", "python/paddle/fluid/dataloader/",
    "python/paddle/fluid/reader.py", "python/paddle/fluid/multiprocess_utils.py",
    "python/paddle/device/", "python/paddle/utils/cpp_extension/",
)  # fmt: skip
# static-graph planners and checkpoint resharding: their checks are about a program's
# shapes and placements, not what launching or communicating prints
PY_SKIP = (
    "python/paddle/distributed/auto_parallel/", "python/paddle/distributed/passes/",
    "python/paddle/distributed/auto_tuner/", "python/paddle/distributed/flex_checkpoint/",
)  # fmt: skip
CPP_PARTS = (
    "paddle/phi/backends/dynload/", "paddle/phi/backends/gpu/", "paddle/phi/core/enforce.h",
    "paddle/common/enforce.h", "paddle/fluid/distributed/", "paddle/phi/core/distributed/",
    "paddle/fluid/platform/dynload/", "paddle/fluid/platform/device_context",
    "paddle/fluid/platform/nccl_helper", "paddle/fluid/platform/gpu_info",
    "paddle/fluid/platform/collective_helper", "paddle/fluid/platform/gen_comm_id_helper",
    "paddle/fluid/platform/enforce.h", "paddle/fluid/platform/device/gpu/",
    "paddle/fluid/imperative/data_loader",
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
# the DataLoader worker's signal handlers `write()` their text to stderr before dying:
# `REGISTER_SIGNAL_HANDLER(SIGBUS, SIGBUS_handler, "ERROR: Unexpected BUS error ...\n")`
_SIGNAL_HANDLER = re.compile(r"\bREGISTER_SIGNAL_HANDLER\s*\(\s*\w+\s*,\s*\w+\s*,")
# enforce.h's `build_nvidia_error_msg(cudaError_t e)`: the text a failed CUDA / cuDNN / NCCL
# call is reported with, streamed (`sout << "NCCL error(" << r << "), " ...`) or added up
# (`std::string msg(" Nccl error, ")`, `detail += "\nPlease try ..."`)
_NVIDIA_MSG = re.compile(r"\bbuild_nvidia_error_msg\s*\([^)]*\)\s*\{")
_STREAMED = re.compile(r"\bsout\s*<<")
_STRING_INIT = re.compile(r"\bstd::string\s+msg\s*\(")
_ADDED = re.compile(r"\bdetail\s*\+=")


def _literal_after(text: str, i: int) -> str:
    """The adjacent string literals that open past the spaces at `i` ("" where none do)."""
    lit = cppmsg._literal_run(text, _skip_space(text, i))
    return lit[0] if lit else ""


def _nvidia_messages(text: str) -> Iterator[str]:
    """The texts `build_nvidia_error_msg` reports a failed CUDA / NCCL call with."""
    for m in _NVIDIA_MSG.finditer(text):
        body = text[m.end() : closing_brace(text, m.end())]
        for s in _STREAMED.finditer(body):
            got, _ = cppmsg._concat(body, s.end(), "<<")
            if len(got.replace("%s", "").strip(" .,:")) >= 8:  # not `sout << " Detail: " ...`
                yield got.strip()
        for s in _STRING_INIT.finditer(body):
            lit = _literal_after(body, s.end())
            if lit.strip():
                yield lit.lstrip().replace("%", "%%") + "%s"
        joined = "".join(_literal_after(body, a.end()) for a in _ADDED.finditer(body))
        if joined.strip():
            yield joined.strip("\n").replace("%", "%%")


def _split_lines(template: str) -> Iterator[str]:
    """The later lines of a multi-line DataLoader error: a log shows each on its own line,
    and the advice lines (shared memory, `/dev/shm`) say what the headline does not."""
    for line in template.split("\n")[1:]:
        line = line.strip()
        if len(line.replace("%s", "")) >= 40:
            yield line


def wanted(path: str) -> bool:
    """Whether a repository path is one whose messages the catalogue keeps."""
    if "/test" in path or path.endswith("_test.cc"):
        return False
    if path.endswith(".py"):
        return path.startswith(PY_PARTS) and not path.startswith(PY_SKIP)
    return path.endswith(CPP) and path.startswith(CPP_PARTS)


def repo_path(member: str) -> str | None:
    """The repository path of a wheel member: `paddle/x.py` is `python/paddle/x.py`, a
    shipped header `paddle/include/paddle/phi/x.h` is `paddle/phi/x.h`."""
    return wheel_repo_path(member, "paddle", "paddle", "python/")


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
    for m in _SIGNAL_HANDLER.finditer(text):
        lit = _literal_after(text, m.end())
        if lit.strip():
            yield "error", lit.strip().replace("%", "%%")
    for got in _nvidia_messages(text):
        yield "error", got
        yield from (("error", line) for line in _split_lines(got))
    for m in _BUILT_WARNING.finditer(text):
        lit = _literal_after(text, m.end())
        if lit.strip():
            yield "warn", lit.replace("%", "%%")


def _with_lines(path: str, found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The DataLoader's errors and each of their later lines (`_split_lines`)."""
    if "/imperative/data_loader" not in path:
        return found
    return found + [(level, ln) for level, t in found for ln in _split_lines(t)]


def _raised_names(func: ast.AST) -> Iterator[str]:
    """The messages a function builds first and raises after (`msg = f"DataLoader
    worker({id}) caught ..."` then `raise self.exc_type(msg)`, the worker's re-raise)."""
    built: dict[str, str] = {}
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            msg = pyextract._text(node.value)
            if msg and msg.strip():
                built[node.targets[0].id] = msg
    for node in ast.walk(func):
        call = node.exc if isinstance(node, ast.Raise) else None
        if not isinstance(call, ast.Call):
            continue
        args = [*call.args, *(k.value for k in call.keywords if k.arg == "message")]
        for arg in args[:1]:
            if isinstance(arg, ast.Name) and arg.id in built:
                name = pyextract._name(call.func)
                msg = built[arg.id]
                yield f"{name}: {msg}" if name[:1].isupper() else msg


def py_extra(path: str, text: str) -> Iterator[tuple[str, str]]:
    """What `pyextract` leaves out and a Paddle user sees: `assert cond, "msg"` (the
    launcher checks its node list so: "Can't find your local ip ..."), a message built
    into a name and raised after (`_raised_names`), and the `print(...)` lines of
    `paddle.utils.run_check()` (its success lines)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from (("error", msg) for msg in _raised_names(node))
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


_RULE_LINE = re.compile(r"[ \t]*[-=*#_~+]{6,}[ \t]*")


def _undecorated(template: str) -> str:
    """A message without the ruled lines that frame it (spawn.py's `"\\n----...\\nProcess %d
    terminated with the following error:\\n----..."`): a line of dashes is no message, and
    as a template's headline it would match every ruled line of a log."""
    lines = template.split("\n")
    kept = [ln for ln in lines if not _RULE_LINE.fullmatch(ln)]
    if len(kept) == len(lines) or not any(ln.strip() for ln in kept):
        return template
    return "\n".join(kept).strip("\n")


def file_messages(path: str, text: str) -> list[tuple[str, str]]:
    if path.endswith(".py"):
        found = [(m.level, m.template) for m in pyextract.messages(text)]
        found += list(py_extra(path, text))
        found = [(level, _undecorated(t)) for level, t in found]
    elif path.endswith(CPP):
        found = _with_lines(path, list(cpp_messages(text)))
    else:
        found = []
    return list(dict.fromkeys(found))


def scan(src: Path) -> tuple[str, list[Seen]]:
    """Every message of the wanted files under each labelled folder of `src`."""
    return dirscan.scan(src, wanted, file_messages)


def _wheel_version(wheel: Path) -> str:
    pattern = r"paddlepaddle(?:_gpu)?-(\d+\.\d+\.\d+)(?:\.post\d+)?-"
    return wheel_name_version(wheel, pattern, "a paddlepaddle wheel name")


def main(argv: list[str] | None = None) -> int:
    def then(src_dir: Path, _versions: list[str]) -> None:  # VERSIONS lists the .cc folders too
        write_catalogue("paddle", scan(src_dir))

    return wheels_main(
        argv, __doc__, "paddle_src", "paddlepaddle*.whl", _wheel_version, wheel_tree, then
    )


if __name__ == "__main__":
    raise SystemExit(main())
