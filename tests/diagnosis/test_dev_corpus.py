"""The shipped rules on the real logs captured for development (corpora/dev-h200, a copy of
../shared/corpus/dev):
every failure log has its labelled cause ranked first, the healthy log gives none."""

from __future__ import annotations

import pytest

from kb.diagnosis.engine import diagnose_paths

from .conftest import DEV_CORPUS

ROWS = [{"file": r.file, "cause_id": r.cause_id} for r in DEV_CORPUS.rows()]


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_dev_corpus_log_is_diagnosed_top_1(shipped, row: dict[str, str]) -> None:
    diag = diagnose_paths(shipped, [DEV_CORPUS / row["file"]])
    ids = [c.id for c in diag.causes]
    if row["cause_id"] == "none":
        assert ids == []
    else:
        assert ids[:1] == [row["cause_id"]], ids


def test_all_dev_logs_together_name_every_cause(shipped) -> None:
    diag = diagnose_paths(shipped, DEV_CORPUS.logs())
    want = {r["cause_id"] for r in ROWS} - {"none"}
    assert want <= {c.id for c in diag.causes}
    assert diag.stats.files == len(ROWS)
