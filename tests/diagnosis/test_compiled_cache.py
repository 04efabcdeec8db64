"""The compiled-rules cache: keyed by the rules' content, never stale, optional."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kb.authoring.checked import load_rules
from kb.diagnosis import compiled
from kb.diagnosis.compiled import CompiledRules, load_cached, rules_key

from .conftest import FIXTURE_RULES


def test_the_key_follows_the_content_of_the_rule_files(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    shutil.copytree(FIXTURE_RULES, root)
    before = rules_key(root)
    assert rules_key(root) == before
    os.utime(root / "cuda" / "cuda-lib-missing.yaml", (1, 1))  # a touch is not a change
    assert rules_key(root) == before
    path = root / "cuda" / "cuda-lib-missing.yaml"
    path.write_text(path.read_text().replace("prior: 0.2", "prior: 0.3"))
    assert rules_key(root) != before


def test_a_changed_rule_is_never_served_from_the_cache(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    shutil.copytree(FIXTURE_RULES, root)
    first = load_rules(root)
    assert load_cached(root) == first
    path = root / "cuda" / "cuda-lib-missing.yaml"
    path.write_text(path.read_text().replace("prior: 0.2", "prior: 0.3"))
    assert load_cached(root) is None
    assert load_rules(root).causes["cuda-lib-missing"].prior == 0.3


def test_the_json_form_round_trips(rules) -> None:
    assert CompiledRules.from_json(rules.to_json()) == rules


def test_an_unwritable_cache_is_not_an_error(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    got = load_rules(FIXTURE_RULES)
    assert "cuda-lib-missing" in got.causes
    assert not compiled.cache_path(got.key).exists()


def test_a_cache_written_by_another_engine_is_never_read(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "rules"
    shutil.copytree(FIXTURE_RULES, root)
    before = rules_key(root)
    specs = tmp_path / "specs.py"  # an upgraded engine module: same rules, other code
    specs.write_text(Path(compiled.__file__).with_name("specs.py").read_text() + "\n# v2\n")
    sources = compiled._engine_sources()
    monkeypatch.setattr(compiled, "_engine_sources", lambda: [*sources[:1], specs, *sources[2:]])
    assert rules_key(root) != before
