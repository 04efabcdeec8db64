"""The cache folder stays bounded (`kb.util.cacheprune`): writing a cache file prunes, at
most once a day, the files of ours unused for a month or beyond the size cap, least
recently used first; never a file that is not ours, a link, a folder, a file in use; and
a failure to prune is no failure.

Why: every rule edit left the cache files of the old content behind, forever (12,170
files, 1.2 GB in a few weeks of rule work)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kb.util import cachepickle, cacheprune
from kb.util.atomicfile import write_atomic

DAY = 86400.0
HEX = "0123456789abcdef" * 2
ROOT = Path(__file__).resolve().parents[2]
FIXTURE_RULES = ROOT / "tests" / "diagnosis" / "rules"
CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "dlperf-help"
    folder.mkdir(parents=True)
    return folder


def _file(folder: Path, name: str, age_days: float, size: int = 10) -> Path:
    path = folder / name
    path.write_bytes(b"x" * size)
    t = time.time() - age_days * DAY
    os.utime(path, (t, t))
    return path


def test_old_files_of_ours_go_and_nothing_else(cache: Path, tmp_path: Path) -> None:
    old = [
        _file(cache, f"rules-{HEX}.pickle", 40),
        _file(cache, f"scan-line-{HEX}.hsdb", 31),
        _file(cache, f"approximate-{HEX}.json", 90),
        _file(cache, f"rules-stat-{HEX}.key", 35),
        _file(cache, ".tmp-abc123_x", 0.5),  # an interrupted write, hours old
        _file(cache, f"approximate-{HEX}.4242.tmp", 0.2),
    ]
    fresh = [
        _file(cache, f"plan-{HEX}.pickle", 2),
        _file(cache, f"regex-{HEX[:16]}.pickle", 29),
        _file(cache, ".tmp-inprogress", 0),  # a write in progress
    ]
    foreign = [
        _file(cache, "tui-crash.txt", 400),  # ours, but a report for people: not a cache file
        _file(cache, "notes.txt", 400),
        _file(cache, f"rules-{HEX}.pickle.bak", 400),
        _file(cache, f"rules-{HEX[:4]}.pickle", 400),
    ]
    outside = _file(tmp_path, "precious.pickle", 400)
    link = cache / f"rules-{HEX[::-1]}.pickle"
    link.symlink_to(outside)
    folder_like_ours = cache / f"scan-{HEX}.hsdb"
    folder_like_ours.mkdir()
    os.utime(folder_like_ours, (time.time() - 400 * DAY,) * 2)

    removed = cacheprune.prune(cache)
    assert sorted(removed) == sorted(p.name for p in old)
    assert not any(p.exists() for p in old)
    assert all(p.exists() for p in fresh + foreign)
    assert link.is_symlink() and outside.read_bytes() == b"x" * 10  # the link, not followed
    assert folder_like_ours.is_dir()


def test_beyond_the_cap_the_least_recently_used_go_first_never_one_in_use(cache: Path) -> None:
    in_use = cacheprune.RECENT_S / DAY  # used within it: the rules in use, say
    by_age = [_file(cache, f"scan-{i:032x}.hsdb", age, size=100) for i, age in enumerate(
        [20, 10, 5, 4, in_use + 0.5, in_use - 0.5, 0.001]
    )]  # fmt: skip
    removed = cacheprune.prune(cache, max_bytes=350)
    assert removed == [p.name for p in by_age[:4]]  # oldest first, until 300 bytes are left
    assert all(p.exists() for p in by_age[4:])
    # files in use stay even above the cap
    assert cacheprune.prune(cache, max_bytes=50) == [by_age[4].name]
    assert by_age[5].exists() and by_age[6].exists()


def test_writing_a_cache_file_prunes_at_most_once_a_day(cache: Path) -> None:
    stale = _file(cache, f"rules-{HEX}.pickle", 60)
    cachepickle.save(cache / f"plan-{HEX}.pickle", {"a": 1})  # any cache file
    assert not stale.exists() and (cache / cacheprune.MARKER).exists()
    stale = _file(cache, f"rules-{HEX}.pickle", 60)
    write_atomic(cache / f"scan-{HEX}.hsdb", b"0\n")
    assert stale.exists()  # pruned less than a day ago: not again
    marker = cache / cacheprune.MARKER
    os.utime(marker, (time.time() - 2 * DAY,) * 2)
    write_atomic(cache / f"scan-{HEX}.hsdb", b"0\n")
    assert not stale.exists()


def test_a_file_written_atomically_elsewhere_prunes_nothing(cache: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "state"
    elsewhere.mkdir()
    old_there = _file(elsewhere, f"rules-{HEX}.pickle", 60)
    old_here = _file(cache, f"rules-{HEX}.pickle", 60)
    write_atomic(elsewhere / "walk.json", b"{}")  # a walk's state, say
    assert old_there.exists() and old_here.exists()


def test_a_failure_to_prune_is_silent(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = _file(cache, f"rules-{HEX}.pickle", 60)

    def refused(path: object) -> None:
        raise PermissionError(13, "refused")

    monkeypatch.setattr(os, "unlink", refused)
    assert cacheprune.prune(cache) == [] and stale.exists()
    monkeypatch.undo()
    assert cacheprune.prune(cache / "missing") == []
    cacheprune.after_write(cache / "missing" / "x")  # never raises
    monkeypatch.setattr(cacheprune, "prune", lambda *a, **k: 1 / 0)
    write_atomic(cache / f"plan-{HEX}.pickle", b"data")  # the write itself still succeeds
    assert (cache / f"plan-{HEX}.pickle").read_bytes() == b"data"


def test_diagnose_prunes_a_stale_cache_and_still_answers(cache: Path, tmp_path: Path) -> None:
    """End to end: a cold `diagnose` writes its cache files and the month-old ones of
    other rules go; the diagnosis is the same with the pruned folder as before."""
    (tmp_path / "no-catalogue").mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(cache.parent)}
    env["DLPERF_HELP_CATALOGUE"] = str(tmp_path / "no-catalogue")
    stale = [_file(cache, f"rules-{i:032x}.pickle", 45, 1000) for i in range(5)]
    log = tmp_path / "paste.log"
    log.write_text(CUDA_LINE + "\n")
    cmd = [sys.executable, "-m", "kb.cli.main", "--rules", str(FIXTURE_RULES), "diagnose", str(log)]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    assert first.returncode == 1, first.stderr
    assert "cuda-lib-missing" in first.stdout
    assert not any(p.exists() for p in stale)
    written = {p.name for p in cache.iterdir()}
    assert any(n.startswith("rules-") for n in written) and cacheprune.MARKER in written
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    assert again.stdout.split("\n", 1)[1] == first.stdout.split("\n", 1)[1]  # timing aside
    assert {p.name for p in cache.iterdir()} >= written - {cacheprune.MARKER}
