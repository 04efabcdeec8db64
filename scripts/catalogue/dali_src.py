"""NVIDIA DALI's messages, read file by file: its git history is too large for a mirror
here, so each release's Python package and the C++ headers it ships (`nvidia/dali/include`)
are taken from its wheel (`wheel_tree`, by repository path), and a `.h`/`.cc` file that only
the repository holds is read one stored version at a time into a labelled folder (as
`dirscan` describes).

C++ is read the DALI way: `DALI_ENFORCE(cond, msg)` prints `Assert on "<cond>" failed: <msg>`,
`DALI_FAIL(...)`, `DALI_ERROR(...)` and `DALI_WARN(...)` join their arguments as
`make_string` does, and a message is often `"text " + std::to_string(x)`; CUDA's and nvJPEG's
error texts are built by `ss << ...` and a `switch` of `return "text";`. Python goes through
`pyextract` (raise, warnings.warn, logger calls).

    python scripts/catalogue/dali_src.py --wheels DIR --src-dir DIR
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import cppmsg
import dirscan
import pyextract
from cprintf import _skip_arg, _skip_space, _string_at, calls
from merge import Seen
from srckit import (
    split_plus,
    switch_returns,
    wheel_name_version,
    wheel_repo_path,
    wheels_main,
    write_catalogue,
    write_versions,
)

CPP = (".cc", ".cpp", ".cu", ".h", ".hpp", ".cuh")
# what a user of a DALI input pipeline sees, by the path the repository gives it
PY_PARTS = tuple(
    "dali/python/nvidia/dali/" + p
    for p in (
        "pipeline.py", "external_source.py", "_utils/external_source_impl.py", "_multiproc/",
        "plugin/", "fn/", "types.py", "tfrecord.py", "backend.py", "plugin_manager.py",
        "data_node.py", "tensors.py", "sysconfig.py",
    )
)  # fmt: skip
CPP_PARTS = (
    "dali/core/error_handling.h", "dali/core/cuda_error.h", "dali/core/dynlink",
    "dali/core/mm/", "dali/pipeline/", "dali/operators/reader/", "dali/operators/decoder/",
    "dali/operators/imgcodec/", "dali/imgcodec/", "dali/operators/video/", "dali/c_api",
)  # fmt: skip
# macro -> (level, index of its first message argument, what DALI prints before it)
MACROS = {
    "DALI_ENFORCE": ("error", 1, 'Assert on "%s" failed: '),
    "DALI_FAIL": ("error", 0, ""),
    "DALI_ERROR": ("error", 0, ""),
    "DALI_WARN": ("warn", 0, ""),
    "DALI_WARN_ONCE": ("warn", 0, ""),
}
_HEAD = re.compile(r"(?<![\w.>:])(DALI_ENFORCE|DALI_FAIL|DALI_ERROR|DALI_WARN_ONCE|DALI_WARN)\s*\(")
_THROW = re.compile(
    r"\bthrow\s+(?:std::|dali::)?(\w*(?:Error|error|Exception|exception|argument|range))\s*\("
)
_STREAM = re.compile(r"(?<![\w.>:])\w*ss\s*<<")
_MAKE = re.compile(r"(?:dali::)?make_string\s*\(")
_STRING = re.compile(r"(?:std::|dali::)?string\s*\(")
_ERROR_STRING = re.compile(r"\bErrorString\s*\([^)]*\)\s*\{")


def wanted(path: str) -> bool:
    """Whether a repository path is one whose messages the catalogue keeps."""
    if "/test" in path or path.endswith(("_test.cc", "_test.h")):
        return False
    if path.endswith(".py"):
        return path.startswith(PY_PARTS)
    return path.endswith(CPP) and path.startswith(CPP_PARTS)


def repo_path(member: str) -> str | None:
    """The repository path of a wheel member: `nvidia/dali/x.py` is
    `dali/python/nvidia/dali/x.py`, a shipped header `nvidia/dali/include/dali/x.h` is
    `dali/x.h`."""
    return wheel_repo_path(member, "nvidia/dali", "dali", "dali/python/")


def wheel_tree(wheel: Path, out: Path) -> int:
    """Write the wanted files of one wheel under `out` by their repository paths."""
    return dirscan.wheel_tree(wheel, out, repo_path, wanted)


def wheel_version(wheel: Path) -> str:
    return wheel_name_version(
        wheel, r"nvidia_dali(?:_cuda\d+)?-(\d+\.\d+\.\d+)-", "an nvidia-dali wheel name"
    )


def _args(text: str, i: int) -> tuple[list[str], int]:
    """The argument texts of a call whose `(` ends just before `i`, and the end."""
    out: list[str] = []
    while i < len(text):
        i = _skip_space(text, i)
        if i >= len(text) or text[i] == ")":
            break
        end = _skip_arg(text, i)
        out.append(text[i:end])
        if end >= len(text) or text[end] != ",":
            i = end
            break
        i = end + 1
    return out, i


def _literals(piece: str) -> str | None:
    """The text of a piece made only of adjacent string literals."""
    got, j = [], _skip_space(piece, 0)
    while j < len(piece):
        lit = _string_at(piece, j)
        if lit is None:
            return None
        got.append(lit[0])
        j = _skip_space(piece, lit[1])
    return "".join(got) if got else None


def expr_text(expr: str) -> str:
    """What a message expression prints, as a printf-style template: literal text kept
    (`%` as `%%`), `make_string(...)` and `std::string(...)` read through, anything else `%s`."""
    parts = []
    for piece in split_plus(expr):
        piece = piece.strip()
        lit = _literals(piece)
        if lit is not None:
            parts.append(lit.replace("%", "%%"))
            continue
        m = _MAKE.match(piece) or _STRING.match(piece)
        if m:
            args, end = _args(piece, m.end())
            if piece[end + 1 :].strip() == "":
                parts.append("".join(expr_text(a) for a in args))
                continue
        parts.append("%s")
    return "".join(parts)


def _useful(template: str) -> bool:
    return len(re.sub(r"%[%s]", "", template).strip()) >= 3


def cpp_messages(text: str) -> Iterator[tuple[str, str]]:
    """(level, template) of every message of one DALI C++ file."""
    for m in _HEAD.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if re.match(r"\s*#\s*define\b", text[start:]):
            continue
        level, first, prefix = MACROS[m.group(1)]
        args, _ = _args(text, m.end())
        if len(args) <= first:
            continue  # DALI_ENFORCE(cond) alone: no message of its own
        body = "".join(expr_text(a) for a in args[first:])
        if _useful(body):
            yield level, prefix + body
    for m in _THROW.finditer(text):
        args, _ = _args(text, m.end())
        if args:
            body = expr_text(args[0])
            if _useful(body):
                yield "error", body
    for m in _STREAM.finditer(text):
        got, _ = cppmsg._concat(text, m.end(), "<<")
        if _useful(got):
            yield "error", got
    for c in calls(text, {"snprintf": 2}):
        if _useful(c.template):
            yield "error", c.template
    if '"nvJPEG error ("' in text:  # nvjpeg_helper.h: "nvJPEG error (<code>): <text>"
        for _, said in switch_returns(text, _ERROR_STRING):
            if "successfully" not in said:
                yield "error", "nvJPEG error (%s): " + said.replace("%", "%%")


def _headline_first(template: str) -> str:
    """A raised message written as an indented triple-quoted block (`RuntimeError(\"\"\"
    <newline> text...`) prints the exception's name alone on its line and the text on the
    next ones: the template is that text, dedented, so its first line is one a log shows."""
    name, sep, body = template.partition(": ")
    if sep and re.fullmatch(r"\w+", name) and re.match(r"[ \t]*\n", body):
        return textwrap.dedent(body.lstrip(" \t").lstrip("\n")).strip()
    return template


def file_messages(path: str, text: str) -> list[tuple[str, str]]:
    if path.endswith(".py"):
        found = [(m.level, _headline_first(m.template)) for m in pyextract.messages(text)]
    elif path.endswith(CPP):
        found = list(cpp_messages(text))
    else:
        found = []
    return list(dict.fromkeys(found))


def scan(src: Path) -> tuple[str, list[Seen]]:
    """Every message of the wanted files under each labelled folder of `src`."""
    return dirscan.scan(src, wanted, file_messages)


def main(argv: list[str] | None = None) -> int:
    def then(src_dir: Path, versions: list[str]) -> None:
        write_versions(src_dir, versions)
        write_catalogue("dali", scan(src_dir))

    return wheels_main(
        argv, __doc__, "dali_src", "nvidia_dali*.whl", wheel_version, wheel_tree, then
    )


if __name__ == "__main__":
    raise SystemExit(main())
