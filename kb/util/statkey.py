"""A content key recorded against a fingerprint of files' `os.stat`.

The compiled rules and the catalogue are cached under a hash of their content; hashing
the files on every start would cost what the cache saves. So the key is written beside
a fingerprint of the files' stat (names, sizes, mtimes), and a later start with the same
fingerprint reads it back instead of hashing. One reader and one writer for both.
"""

from __future__ import annotations

import contextlib

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
