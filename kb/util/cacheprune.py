"""Keeping the cache folder bounded: files of ours not used for a long time, or beyond a
size cap, are removed, oldest first.

Why: every rule edit, catalogue change or upgrade leaves the cache files of the old
content behind (compiled rules, scan plans, hyperscan databases, known-message corpora),
and nothing ever read them again: a folder of 12,000 files and 1.2 GB after a few weeks
of rule work. Pruning runs when a cache file is written (`kb.util.atomicfile`), at most
once a day (the `.pruned` marker's time), so a warm start pays one `stat` at most and
usually nothing: it writes no file.

What is removed, and only that:
- a regular file (never a link, a folder or anything else; nothing is followed) owned by
  this user, directly in the cache folder, whose name is one of the names the engine
  writes (`rules-<hex>.pickle`, `scan-line-<hex>.hsdb`, ...; `NAME` below) or a temporary
  file of an interrupted write older than an hour;
- when it was last used (its access or change of content, the later) more than
  `MAX_AGE_DAYS` ago, or, while the files of ours left total more than `MAX_BYTES`,
  the least recently used first, sparing those used within the last two days (the files
  of the rules in use). On a file system mounted `noatime`, last use is the last write.
Anything that goes wrong (a file gone meanwhile, no permission) is skipped silently: a
cache file removed too early is rebuilt by the next run, one kept too long costs disk
only. Removing the whole folder by hand is always safe.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from pathlib import Path

MAX_AGE_DAYS = 30
MAX_BYTES = 256 << 20  # a working set is a few tens of MB (rules, plan, scan databases)
PRUNE_EVERY_S = 24 * 3600
# used this recently: in use, never removed for size (two days: with `relatime`, the usual
# mount option, reading a file moves its access time at most once a day)
RECENT_S = 2 * 86400
MARKER = ".pruned"

# the names the engine gives its cache files (`kb.util.paths.cache_dir` users)
NAME = re.compile(
    r"(?:rules|rules-stat|plan|scan|scan-line|approximate|catalogue|catalogue-lint|described"
    r"|regex|catalogue-stat|catalogue-literals)-[0-9a-f]{8,64}\.(?:pickle|json|hsdb|key|rows)"
)
# an interrupted write: `write_atomic`'s temporary file, or approximate.py's
TEMPORARY = re.compile(r"\.tmp-[A-Za-z0-9_]{1,32}|[a-z-]+-[0-9a-f]{8,64}\.\d{1,10}\.tmp")


def after_write(target: Path) -> None:
    """`target` was just written: prune its folder if it is the cache folder and was not
    pruned within a day. Never raises."""
    try:
        from kb.util.paths import cache_dir

        folder = cache_dir()
        if target.parent != folder:  # another file written atomically (a walk's state)
            return
        marker = folder / MARKER
        try:
            if time.time() - os.lstat(marker).st_mtime < PRUNE_EVERY_S:
                return
        except FileNotFoundError:
            pass
        marker.touch()  # first: a concurrent writer does not prune the folder twice
        prune(folder)
    except Exception:  # pruning is housekeeping: never a failure of the run
        pass


def prune(
    folder: Path,
    now: float | None = None,
    max_age_days: float = MAX_AGE_DAYS,
    max_bytes: int = MAX_BYTES,
) -> list[str]:
    """Remove the stale files of ours in `folder` (see the module docstring); the names
    removed. Never raises."""
    now = time.time() if now is None else now
    files = _ours(folder, now)
    removed: list[str] = []
    kept: list[tuple[float, int, str]] = []
    for used, size, name in files:
        if used < now - max_age_days * 86400 and _remove(folder, name):
            removed.append(name)
        else:
            kept.append((used, size, name))
    total = sum(size for _, size, _ in kept)
    for used, size, name in sorted(kept):  # least recently used first
        if total <= max_bytes or used >= now - RECENT_S:
            break
        if _remove(folder, name):
            removed.append(name)
            total -= size
    return removed


def _ours(folder: Path, now: float) -> list[tuple[float, int, str]]:
    """(last used, size, name) of each file of ours in `folder`; temporary files count as
    unused long ago once they are an hour old (younger ones may be a write in progress)."""
    hour_ago = now - 3600
    out: list[tuple[float, int, str]] = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for entry in entries:
        name = entry.name
        temporary = TEMPORARY.fullmatch(name) is not None
        if not temporary and NAME.fullmatch(name) is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
            continue
        used = max(st.st_atime, st.st_mtime)
        if temporary:
            if used >= hour_ago:
                continue
            used = 0.0
        out.append((used, st.st_size, name))
    return out


def _remove(folder: Path, name: str) -> bool:
    """Unlink `folder/name` if it is still a regular file (not replaced by a link or a
    folder meanwhile); whether it went."""
    path = folder / name
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)  # unlinking a name never follows it
            return True
    return False
