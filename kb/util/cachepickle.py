"""Our own cache files as pickles: the fastest way back to plain data and dataclasses.

A pickle can run any code while it loads, so one is read back only when it is ours:
a regular file in our cache folder, owned by this user and writable by nobody else,
and only through an allow-list of classes (`load`'s `allowed`: anything else named in
the file refuses it); it is written atomically (`kb.util.atomicfile`) with the content
key it was made for, which the caller checks. A file that fails any of this, cannot
be read or is damaged is no cache: `load` returns None and the caller rebuilds it.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Mapping
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:  # a warm run names its caches by plain strings (`kb.util.paths.cache_file`)
    from pathlib import Path

try:  # the C accelerator that `pickle` re-exports, without importing pickle.py (2 ms)
    from _pickle import PicklingError, Unpickler, dumps
except ImportError:  # pragma: no cover - another Python
    from pickle import PicklingError, Unpickler, dumps

PROTOCOL = 5
MAX_BYTES = 256 << 20  # far above the compiled rules' few MB: a larger file is no cache of ours


class _Refused(Exception):
    """The pickle names something outside the allow-list."""


class _Unpickler(Unpickler):
    def __init__(self, data: bytes, allowed: Mapping[tuple[str, str], type]) -> None:
        super().__init__(io.BytesIO(data))
        self._allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        try:
            return self._allowed[(module, name)]
        except KeyError:
            raise _Refused(f"{module}.{name}") from None


def allow(*classes: type) -> dict[tuple[str, str], type]:
    """The allow-list for `load`: these classes, under the names pickle records."""
    return {(c.__module__, c.__qualname__): c for c in classes}


def _ours(fd: int) -> bool:
    st = os.fstat(fd)
    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return stat.S_ISREG(st.st_mode) and mine and not st.st_mode & 0o022 and st.st_size <= MAX_BYTES


def load(path: str | Path, allowed: Mapping[tuple[str, str], type]) -> Any:
    """The object pickled in `path`, or None when the file is missing, not ours, names a
    class outside `allowed`, or is damaged."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not _ours(fd):
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
        return _Unpickler(data, allowed).load()
    except Exception:  # unreadable, or damaged: truncated, garbage, a refused class
        return None
    finally:
        os.close(fd)


def save(path: str | Path, obj: Any) -> None:
    """Pickle `obj` to `path` atomically; a cache that cannot be written is not kept."""
    from kb.util.atomicfile import write_atomic  # here: a warm run writes nothing

    with contextlib.suppress(OSError, PicklingError, TypeError, AttributeError):
        write_atomic(path, dumps(obj, PROTOCOL))
