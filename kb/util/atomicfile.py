"""Writing a cache file so that a concurrent reader never sees half of it."""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def write_atomic(target: str | Path, data: bytes) -> None:
    """Write `data` to `target` so a concurrent reader never sees half a file."""
    import tempfile
    from pathlib import Path  # only here: a warm run writes nothing

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    from kb.util.cacheprune import after_write

    after_write(target)  # a new cache file: the cache folder's files of old content may go
