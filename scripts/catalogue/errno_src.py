"""The C library's error texts as a Python exception prints them: `[Errno N] text`.

A traceback that ends in `ConnectionRefusedError: [Errno 111] Connection refused` or
`socket.gaierror: [Errno -2] Name or service not known` carries glibc's `strerror` /
`gai_strerror` text behind CPython's `OSError.__str__` format (`[Errno %d] %s`). The texts
are read from glibc at every release tag: `sysdeps/gnu/errlist.c` (`[ERR_REMAP (E...)] =
N_("...")`, to 2.31), `sysdeps/gnu/errlist.h` (`_S(E..., N_("..."))`, 2.32 on) and
`sysdeps/posix/gai_strerror-strs.h` (`_S(EAI_..., N_("..."))`). Each entry keeps the
errno name as its topic, so classify.yaml reads a refused connection apart from a full
disk.
"""

from __future__ import annotations

import re
from pathlib import Path

from merge import Found, Seen, scan_releases

_OLD = re.compile(r"\[ERR_REMAP \((E[A-Z0-9]+)\)\]\s*=\s*N_\(\"((?:[^\"\\]|\\.)*)\"\)")
_NEW = re.compile(r"_S\s*\(\s*(E[A-Z0-9_]+)\s*,\s*N_\(\"((?:[^\"\\]|\\.)*)\"\)\s*\)")
# errlist.c holds the `[ERR_REMAP (E...)]` table, the two headers `_S(...)` lines
FILES = frozenset(
    {"sysdeps/gnu/errlist.c", "sysdeps/gnu/errlist.h", "sysdeps/posix/gai_strerror-strs.h"}
)
PYTHON_FORMAT = "[Errno %d] {}"  # CPython's OSError.__str__ with an errno and a strerror


def read(text: str) -> list[Found]:
    """(level, template, {topic: errno name}) of every error text of one glibc file."""
    rx = _NEW if "_S" in text and "ERR_REMAP" not in text else _OLD
    return [
        ("error", PYTHON_FORMAT.format(msg), {"topic": name})
        for name, msg in rx.findall(text)
        if any(c.isalpha() for c in msg)  # the Hurd's `ED` is a lone "?"
    ]


def scan(git_dir: Path) -> tuple[str, list[Seen]]:
    """glibc 2.17 (CentOS 7's) to the newest release."""
    return scan_releases(
        git_dir, r"glibc-(\d+\.\d+)", "2.17", lambda p: p in FILES, read, ("sysdeps",)
    )
