"""Real text that names a cause has that cause ranked first by the whole diagnosis.

A rule's own `examples.match` says its signatures fire on a line; it does not say the
diagnosis, with every other shipped rule loaded, puts that cause first. Those
expectations live beside the rule, as `rules/<area>/<id>.expect.yaml` (like semgrep's test
file beside its rule), each with the thread it came from:

    ranks_first:
      - why: "pytorch/pytorch#104136 (Gloo pair bind): a taken port is port-in-use"
        log: "RuntimeError: [...]/gloo/transport/tcp/pair.cc:176] bind: Address already in use"

The rule loader skips these files (`kb.util.rulefiles.EXPECT_SUFFIX`); this test reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kb.util.paths import rules_dir
from kb.util.rulefiles import EXPECT_SUFFIX
from tests.shipped_rules import knowledge, ranked

EXPECT_FILES = sorted(rules_dir().rglob(f"*{EXPECT_SUFFIX}"))


def _cause_of(path: Path) -> str:
    return path.name.removesuffix(EXPECT_SUFFIX)


def _read(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and set(data) == {"ranks_first"}, f"{path}: only ranks_first:"
    entries = data["ranks_first"]
    assert isinstance(entries, list) and entries, f"{path}: ranks_first is a non-empty list"
    for i, entry in enumerate(entries):
        assert isinstance(entry, dict) and set(entry) == {"why", "log"}, f"{path} #{i}: why, log"
        assert all(isinstance(entry[k], str) and entry[k].strip() for k in entry), f"{path} #{i}"
    return data


CASES = [
    pytest.param(_cause_of(path), entry["log"], id=f"{_cause_of(path)}-{i}")
    for path in EXPECT_FILES
    for i, entry in enumerate(_read(path)["ranks_first"])
]


def test_there_are_expectations_for_many_causes() -> None:
    assert len(EXPECT_FILES) >= 20 and len(CASES) >= 50


@pytest.mark.parametrize("path", EXPECT_FILES, ids=lambda p: p.name)
def test_an_expect_file_sits_beside_the_cause_it_names(path: Path) -> None:
    cause = _cause_of(path)
    assert path.with_name(f"{cause}.yaml").is_file(), f"no rule file beside {path.name}"
    assert cause in knowledge().causes, f"{path.name}: {cause} is not a cause"


@pytest.mark.slow
@pytest.mark.parametrize(("cause", "log"), CASES)
def test_the_cause_ranks_first_on_its_real_text(cause: str, log: str) -> None:
    assert ranked(log)[:1] == [cause]


def test_the_rule_loader_does_not_read_expect_files() -> None:
    from kb.util.rulefiles import rule_files

    assert not [p for p in rule_files(rules_dir()) if p.name.endswith(EXPECT_SUFFIX)]
