"""The held-out batches (corpora/batch-*): well-formed, and no false alarm on a healthy log
of any corpus.

Why: each held-out batch measured, once, how the rules do on logs nobody had tuned
for (README, "Accuracy"); its failures are then scored by `scripts/score_corpus.py`,
not asserted here, because a miss is a measurement, not a broken build. A false alarm
on a healthy real run is different: every later rule must keep all of them clean, so
each one is a test (the healthy gate, corpora/healthy/). The labels must stay usable by
the scorer.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from tests import corpora_loader as corpora

CORPORA = tuple(n for n in corpora.names() if n.startswith("batch-"))
COLUMNS = corpora.COLUMNS

HEALTHY = [  # every healthy log of every corpus: each is a test
    pytest.param(path, id=f"{name}/{path.stem}")
    for name in corpora.names()
    for path in corpora.healthy(name)
]


@pytest.fixture(scope="module")
def rules() -> Any:
    from kb.authoring.checked import load_rules

    return load_rules()


def test_there_are_held_out_corpora_with_healthy_logs() -> None:
    assert len(CORPORA) >= 10 and len(HEALTHY) >= 140


@pytest.mark.parametrize("corpus", CORPORA)
def test_labels_have_the_scorer_columns_and_name_existing_logs(corpus: str) -> None:
    for folder in corpora.folders(corpus):
        with (folder / "labels.csv").open(newline="", encoding="utf-8") as fh:
            assert next(csv.reader(fh)) == COLUMNS
    rows = corpora.rows(corpus)
    names = [r.file for r in rows]
    assert len(names) == len(set(names)), "a log is labelled twice"
    assert all(r.path.is_file() for r in rows)
    assert {p.name for p in corpora.logs(corpus)} == set(names), "a log without a label"
    assert all(r.cause_id and r.source and r.evidence for r in rows)


@pytest.mark.parametrize("path", HEALTHY)
@pytest.mark.slow
def test_a_healthy_held_out_log_gives_no_cause(path: Path, rules: Any) -> None:
    from kb.diagnosis.engine import diagnose_paths

    result = diagnose_paths(rules, [path]).to_json()
    assert not result.get("errors")
    assert [c["id"] for c in result["causes"]] == [], "false alarm on a healthy real log"
