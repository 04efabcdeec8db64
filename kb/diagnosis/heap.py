"""Keeping a long diagnosis's memory flat: the 1 MB blocks it reads go back to the system.

glibc's malloc serves a large buffer from `mmap` only while it is above a threshold that
it raises to the size of each such buffer freed; after the first few blocks of a log,
every 1 MB read comes from the heap instead, and the heap, pinned by the small objects
allocated between the reads, grows by several blocks that it never gives back (10 MB
of the peak RSS on a 100 MB log). Fixing the threshold (`M_MMAP_THRESHOLD`, what
`MALLOC_MMAP_THRESHOLD_` sets) stops that. Done once per process, only for an input
that is large (`ctypes` is not imported for a pasted log), and nowhere but on glibc.
"""

from __future__ import annotations

import sys

BIG_INPUT = 8 << 20  # bytes read from one input after which the threshold is fixed
MMAP_THRESHOLD = 128 * 1024  # glibc's own starting value
_M_MMAP_THRESHOLD = -3  # from <malloc.h>

_done = False


def release_big_buffers() -> bool:
    """Have malloc serve buffers of `MMAP_THRESHOLD` bytes or more from `mmap` for the
    rest of the process; False where that cannot be set (not Linux, not glibc)."""
    global _done
    if _done:
        return True
    _done = True
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and others have no mallopt
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
