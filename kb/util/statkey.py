"""A content key recorded against a fingerprint of files' `os.stat`, and that fingerprint.

The compiled rules and the catalogue are cached under a hash of their content; hashing
the files on every start would cost what the cache saves. So the key is written beside
a fingerprint of the files' stat (names, sizes, mtimes), and a later start with the same
fingerprint reads it back instead of hashing. One reader and one writer for both.
"""

from __future__ import annotations

import contextlib
import os
from stat import S_ISLNK

TYPE_CHECKING = False  # typing itself is not imported for it on the warm path
if TYPE_CHECKING:
    from typing import Protocol

    class _Hasher(Protocol):
        def update(self, data: bytes, /) -> None: ...


KEY_LENGTH = 32  # hex digits of the content keys (kb.util.digest)


def read_key(path: str) -> str | None:
    """The key recorded at `path`, or None when there is none or it is not a key."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(2 * KEY_LENGTH).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    hexdigits = "0123456789abcdef"
    return text if len(text) == KEY_LENGTH and all(c in hexdigits for c in text) else None


def write_key(path: str, key: str) -> None:
    """Record `key` at `path`; a cache that cannot be written is no error."""
    with contextlib.suppress(OSError):
        from kb.util.atomicfile import write_atomic  # here: a warm run writes nothing

        write_atomic(path, key.encode("ascii"))


def stamp_files(h: _Hasher, paths: list[str]) -> int:
    """Feed the hash `h` what `os.stat` says of each path (size, times, inode, mode, a
    link's target; a missing file as its error) and return the newest change time seen,
    for the caller to judge whether a change could still be within the clock's tick."""
    newest = 0
    for path in paths:
        stamp: tuple[object, ...]
        try:
            st, link = os.lstat(path), ""  # one call for a plain file (`islink` was another)
            if S_ISLNK(st.st_mode):
                link, st = os.readlink(path), os.stat(path)
            stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode)
            newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        except (OSError, ValueError) as exc:
            stamp, link = (type(exc).__name__,), ""
        h.update(f"{path}\0{stamp}\0{link}\0".encode(errors="surrogateescape"))
    return newest


def listing(folder: str, suffixes: tuple[str, ...], deep: bool = False) -> list[str]:
    """The paths of the entries of `folder` (and, when `deep`, of its sub-folders, links to
    folders not followed, as `os.walk` does) whose names end in `suffixes`, sorted; none
    for a folder that cannot be read."""
    out: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                if e.name.endswith(suffixes):
                    out.append(e.path)
                if deep and e.is_dir(follow_symlinks=False):
                    out.extend(listing(e.path, suffixes, deep))
    except OSError:
        pass
    return sorted(out)
