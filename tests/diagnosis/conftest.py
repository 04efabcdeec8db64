"""Shared fixtures for the diagnosis tests.

Two rule sets: a small fixed one (tests/diagnosis/rules) for the engine's semantics, so
rule edits elsewhere never churn these tests, and the shipped rules for the real logs.
The compiled-rules cache goes to a temporary directory, never the user's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import corpora_loader as corpora

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURE_RULES = HERE / "rules"
SHIPPED_RULES = ROOT / "rules"
DEV_CORPUS = corpora.Corpus("dev-h200")  # the project's shared dev corpus (2xH200 captures)
H200_FIXTURES = ROOT / "tests" / "shared" / "fixtures" / "h200-x2"
DATA_CORPUS = corpora.Corpus("dev")
HELDOUT = corpora.Corpus("batch-2026-11-29")  # the first held-out batch, since tuned on


def agreed(rules: Any, text: str | None = None, paths: list[Path] | None = None) -> dict[str, Any]:
    """The diagnosis of `text` (or of the logs `paths`) as JSON with explanations, after
    checking that the fast path and the reference path give the same one."""
    from kb.diagnosis.engine import diagnose_paths, diagnose_text

    def run(fast: bool) -> dict[str, Any]:
        if text is not None:
            out = diagnose_text(rules, text, fast=fast).to_json(explain=True)
        else:
            out = diagnose_paths(rules, paths or [], fast=fast).to_json(explain=True)
        out["stats"].pop("seconds")
        return out

    fast = run(True)
    assert fast == run(False)
    return fast


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    cache = tmp_path_factory.mktemp("xdg-cache")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    yield cache
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(scope="session")
def rules(private_cache: Path):  # type: ignore[no-untyped-def]
    """The fixture rules, compiled."""
    from kb.authoring.checked import load_rules

    return load_rules(FIXTURE_RULES)


@pytest.fixture(scope="session")
def shipped(private_cache: Path):  # type: ignore[no-untyped-def]
    """The shipped rules, compiled."""
    from kb.authoring.checked import load_rules

    return load_rules(SHIPPED_RULES)


Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(private_cache: Path) -> Cli:
    """Run `dlperf-help` in a subprocess: cli(*args, input=None, rules=FIXTURE_RULES)."""

    def run(
        *args: str,
        input: str | None = None,
        rules: Path | None = FIXTURE_RULES,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, XDG_CACHE_HOME=str(private_cache))
        env.pop("DLPERF_HELP_DEBUG", None)
        if rules is not None:
            env["DLPERF_HELP_RULES"] = str(rules)
        return subprocess.run(
            [sys.executable, "-m", "kb.cli.main", *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=cwd,
        )

    return run
