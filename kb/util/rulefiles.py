"""Which files are rule files, and reading one without trusting what sits in the folder.

Shared by the loader and the compiled-rules cache (which must not import yaml or
pydantic), so both see the same files. A rule file is read only when it is a regular
file of at most `MAX_RULE_BYTES` whose real place is inside the rules folder: a FIFO
would block the read for ever, a device could be endless, a link could reach any file
on the machine. Everything else is a `RuleFileError` with a one-line reason.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_RULE_BYTES = 1 << 20  # the largest shipped rule is about 35 KB
SKIP_FOLDERS = {"schema"}
# beside a rule, what the whole diagnosis must make of real text (tests/rules/test_ranks_first.py)
EXPECT_SUFFIX = ".expect.yaml"


class RuleFileError(Exception):
    """A file in the rules folder that is not read; the message is one line."""


def rule_files(root: Path) -> list[Path]:
    """Every `*.yaml`/`*.yml` entry under `root` (regular or not), in a stable order; a
    rule's `<id>.expect.yaml` beside it is test data, not a rule."""
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        if set(rel.parts) & SKIP_FOLDERS:
            dirnames[:] = []
            continue
        files.extend(
            Path(dirpath) / n
            for n in filenames
            if n.endswith((".yaml", ".yml")) and not n.endswith(EXPECT_SUFFIX)
        )
    return sorted(files)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_rule_bytes(path: Path, root: Path, max_bytes: int = MAX_RULE_BYTES) -> bytes:
    """The bytes of one rule file; raise `RuleFileError` for anything but a regular file of
    at most `max_bytes` inside `root` (the message catalogue has larger files). Never
    blocks: the type is checked before and after opening."""
    try:
        if path.is_symlink():
            target = path.resolve()
            if not target.is_relative_to(root.resolve()):
                raise RuleFileError(f"a symbolic link to {target}, outside the rules folder")
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise RuleFileError(f"{_kind(mode)}, not a regular file")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):  # replaced between the two looks
                raise RuleFileError(f"{_kind(st.st_mode)}, not a regular file")
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise RuleFileError(f"cannot read file: {exc.strerror or exc}") from None
    except RuntimeError as exc:  # a symbolic link loop
        raise RuleFileError(f"cannot read file: {exc}") from None
    if len(data) > max_bytes:
        raise RuleFileError(f"larger than {max_bytes // 1024} KB: not a rule file")
    return data
