"""Shared fixtures of the walk tests: the shipped rules, the recorded 2×H200 node."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.rules import loader
from kb.rules.knowledge import KnowledgeBase
from kb.util.paths import rules_dir
from tests.corpora_loader import ROOT as CORPORA


@pytest.fixture(scope="session", autouse=True)
def own_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A cache of compiled rules of our own: never a stale one left by another version."""
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    return loader.load(rules_dir())[0]


DATA = Path(__file__).parent / "data"
LOGS = CORPORA / "dev"  # failure logs of the development corpus
