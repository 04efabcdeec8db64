"""Shared fixtures of the TUI tests: the knowledge base of the fixed rule set, an app factory."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kb.authoring.checked import load_kb
from kb.rules.knowledge import KnowledgeBase
from tests.tui.common import RULES


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


@pytest.fixture(autouse=True)
def own_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Remembered nodes and logs (kb.walk.state) go to the test's own folder, never ~."""
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    return load_kb(RULES)


@pytest.fixture
def make_app(kb: KnowledgeBase, tmp_path: Path) -> Callable[..., object]:
    from dlperf_tui.app import DlperfHelpApp

    def make(**kwargs: object) -> DlperfHelpApp:
        return DlperfHelpApp(rules=RULES, export_dir=tmp_path, kb=kb, **kwargs)  # type: ignore[arg-type]

    return make
