"""The shipped rules on the real logs captured for development (tests/shared/corpus/dev, a copy of ../shared/corpus/dev):
every failure log has its labelled cause ranked first, the healthy log gives none."""

from __future__ import annotations

import csv

import pytest

from kb.diagnosis.engine import diagnose_paths

from .conftest import DEV_CORPUS

with open(DEV_CORPUS / "labels.csv", encoding="utf-8") as _fh:
    ROWS = list(csv.DictReader(_fh))


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_dev_corpus_log_is_diagnosed_top_1(shipped, row: dict[str, str]) -> None:
    diag = diagnose_paths(shipped, [DEV_CORPUS / row["file"]])
    ids = [c.id for c in diag.causes]
    if row["cause_id"] == "none":
        assert ids == []
    else:
        assert ids[:1] == [row["cause_id"]], ids


def test_all_dev_logs_together_name_every_cause(shipped) -> None:
    diag = diagnose_paths(shipped, sorted(DEV_CORPUS.glob("*.log")))
    want = {r["cause_id"] for r in ROWS} - {"none"}
    assert want <= {c.id for c in diag.causes}
    assert diag.stats.files == len(ROWS)
