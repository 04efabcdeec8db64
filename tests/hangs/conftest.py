"""Fixtures for the hang tests: the shipped rules (compiled into a private cache), the
CLI in a subprocess, and the real captures of corpora/hangs."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "hangs"
RULES = ROOT / "rules"


def _labels() -> list[dict[str, str]]:
    with open(CORPUS / "labels.csv", newline="") as f:
        return list(csv.DictReader(f))


LABELS = _labels()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`label` parametrizes a test over the labelled captures."""
    if "label" in metafunc.fixturenames:
        metafunc.parametrize("label", LABELS, ids=[x["case"] for x in LABELS])


@pytest.fixture
def corpus() -> Path:
    return CORPUS


@pytest.fixture
def handed_over() -> Callable[[str], list[str]]:
    """What a user hands over for a case: the log, the dump folder, the RAS report."""

    def inputs(case: str) -> list[str]:
        d = CORPUS / case
        return [str(d / "run.log"), str(d / "fr_dumps"), *map(str, sorted(d.glob("ras*.txt")))]

    return inputs


@pytest.fixture(scope="session")
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
def shipped(private_cache: Path) -> Any:
    from kb.authoring.checked import load_rules

    return load_rules(RULES)


Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(private_cache: Path) -> Cli:
    """`dlperf-help` with the shipped rules, in a subprocess."""

    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, XDG_CACHE_HOME=str(private_cache), DLPERF_HELP_RULES=str(RULES))
        env.pop("DLPERF_HELP_DEBUG", None)
        return subprocess.run(
            [sys.executable, "-m", "kb.cli.main", *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )

    return run
