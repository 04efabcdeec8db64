"""A warm `diagnose` of a pasted log imports nothing it does not need and compiles none of
the engine's own regexes (issue 13): `dataclasses` (with `inspect`, `ast`, `dis`), gzip,
threading and `pickle.py` stay unimported, and every regex constant of `kb` comes from the
per-user regex cache (`kb.util.recache`), not from `re`'s compiler.

Why: each of these cost a pasted log's run milliseconds at every start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

import pytest

from kb.diagnosis import compiled

from .conftest import FIXTURE_RULES

CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"
UNNEEDED = ("dataclasses", "inspect", "ast", "dis", "gzip", "threading", "pickle", "struct")

PROBE = """
import contextlib, io, json, sys, traceback
import re._compiler as c
real, compiled_by = c.compile, []
def counted(p, flags=0):  # who asked `re` for it: the innermost caller outside `re`
    outside = [f.filename for f in traceback.extract_stack()[:-1]
               if "/re/" not in f.filename and not f.filename.startswith("<frozen")]
    if outside and "/kb/" in outside[-1]:
        compiled_by.append((str(p)[:60], outside[-1].rsplit("/kb/", 1)[1]))
    return real(p, flags)
c.compile = counted
from kb.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["--rules", sys.argv[1], "diagnose", sys.argv[2]])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules),
                  "compiled": compiled_by}))
"""


def _run(env: dict[str, str], rules: Path, log: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(rules), str(log)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.fixture
def setup(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    (tmp_path / "no-catalogue").mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env["DLPERF_HELP_CATALOGUE"] = str(tmp_path / "no-catalogue")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    root = tmp_path / "rules"
    shutil.copytree(FIXTURE_RULES, root)
    log = tmp_path / "paste.log"
    log.write_text(CUDA_LINE + "\n")
    return env, root, log


def test_a_warm_pasted_log_imports_and_compiles_only_what_it_needs(
    setup: tuple[dict[str, str], Path, Path],
) -> None:
    env, root, log = setup
    cold = _run(env, root, log)  # compiles and caches the rules, the plan, the regexes
    assert cold["code"] == 1 and "cuda-lib-missing" in str(cold["out"])
    assert cold["compiled"], "a cold run compiles the engine's regexes (and keeps them)"
    # the rules' key is recorded for their files' stat once these are 2 s old (a file
    # changed more recently may change again unseen): then no run hashes them again
    time.sleep(max(0.0, compiled.RACY_NS / 1e9 - (time.time() - root.stat().st_ctime)) + 0.2)
    _run(env, root, log)
    warm = _run(env, root, log)
    assert str(warm["out"]).split("\n", 1)[1] == str(cold["out"]).split("\n", 1)[1]
    loaded = set(cast("list[str]", warm["modules"]))
    assert not loaded & set(UNNEEDED), sorted(loaded & set(UNNEEDED))
    assert warm["compiled"] == []  # every regex of kb read back from the cache
