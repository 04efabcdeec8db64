"""`kb.util.recache`: a regex compiled in one process is read back, not compiled, in the
next, and is the very pattern `re.compile` makes; a damaged, foreign or unwritable cache
costs a compile, never a different regex.

Why: the engine's own regex constants cost a pasted log's diagnosis a tenth of its run
when each process compiled them again (issue 13)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kb.util import cachepickle, recache

PATTERNS: list[tuple[Any, int]] = [  # str and bytes patterns (re.compile's AnyStr)
    (r"(?P<y>20\d\d)-(?P<mo>\d\d)-(?P<d>\d\d)[T ](?P<h>\d\d):(?P<mi>\d\d)", 0),
    (r"\bwaiting for (?:all |the )?(?:workers?|ranks?)\W*$", re.IGNORECASE),
    (r"[\x00-\x08\u200e\u2066-\u2069]", 0),
    (rb"\x1b\[[0-9;]*m", 0),
    (r"^\s*(?:```\w*|~~~|\^C)\s*$", re.MULTILINE | re.ASCII),
]
TEXTS = [
    "2026-12-01 22:10 waiting for all ranks",
    "x\u2066y",
    "plain line",
    "```",
    "WAITING FOR RANKS",
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    recache.forget()
    yield tmp_path / "dlperf-help"
    recache.forget()


def _behaviour(rx: re.Pattern[str] | re.Pattern[bytes]) -> list[object]:
    out: list[object] = [rx.pattern, rx.flags, rx.groups, dict(rx.groupindex)]
    for text in TEXTS:
        subject = text.encode() if isinstance(rx.pattern, bytes) else text
        out.append([m.span() for m in rx.finditer(subject)])  # type: ignore[arg-type]
    return out


def test_a_cached_regex_is_the_pattern_re_compile_makes(cache: Path) -> None:
    first = [recache.compile(p, f) for p, f in PATTERNS]
    assert first == [re.compile(p, f) for p, f in PATTERNS]  # same pattern, flags and code
    recache._save()
    assert len(list(cache.glob("regex-*.pickle"))) == 1
    recache.forget()
    again = [recache.compile(p, f) for p, f in PATTERNS]  # from the file now
    assert recache._entries is not None and len(recache._entries) == len(PATTERNS)
    assert not recache._added  # nothing new to learn: every one was read back
    assert again == first
    assert [_behaviour(rx) for rx in again] == [_behaviour(re.compile(p, f)) for p, f in PATTERNS]


def test_a_damaged_or_foreign_cache_costs_a_compile_not_a_different_regex(cache: Path) -> None:
    pattern, flags = PATTERNS[0]
    recache.compile(pattern, flags)
    recache._save()
    path = next(cache.glob("regex-*.pickle"))
    path.write_bytes(b"\x80\x05not a pickle")
    recache.forget()
    assert recache.compile(pattern, flags) == re.compile(pattern, flags)
    recache.forget()
    # an entry whose code `_sre` refuses (a file from another build, say)
    cachepickle.save(path, {(pattern, flags): (flags, [999999], 4, {}, (None,) * 5)})
    assert recache.compile(pattern, flags) == re.compile(pattern, flags)


def test_an_unwritable_cache_is_no_error(cache: Path) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a file where the folder should be")
    assert recache.compile(r"a+b", 0) == re.compile(r"a+b")
    recache._save()  # silently nothing


def test_the_next_process_compiles_none_of_them(tmp_path: Path) -> None:
    """Across processes, as `diagnose` runs: the second compiles nothing in `re`."""
    code = (
        "import re, re._compiler as c, sys\n"
        "n = [0]; real = c.compile\n"
        "def counted(*a): n[0] += 1; return real(*a)\n"
        "c.compile = counted\n"
        "from kb.util import cachepickle, paths, recache\n"
        "n[0] = 0  # the standard library's own import-time regexes aside\n"
        f"for p, f in {PATTERNS!r}: recache.compile(p, f)\n"
        "print(n[0])\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert int(runs[0].stdout) >= len(PATTERNS)  # learned (and checked) the first time
    assert int(runs[1].stdout) == 0
