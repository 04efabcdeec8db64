"""Two signature switches: `min_hits: N` (a line that matters when it repeats) and
`at_end: true` (a line that matters when the log ends there).

A small rule set written for these tests (in a temporary folder) is run on real logs
(MXNet's repeated cuDNN autotune line, a TensorFlow job stuck after its gRPC server
started) and on constructed ones: both paths agree, the fast path keeps feeding an
`at_end` signature past its maximum of hits so that it sees the log's last line, and
`rules test` (`run_signatures`) means the same as the diagnosis.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.matching import SignatureMatcher, run_signatures
from kb.rules.schema.models import Signature

from .conftest import DATA_CORPUS, HELDOUT

AUTOTUNE = "Running performance tests to find the best convolution algorithm"
SERVER = "Started server with target: grpc://"

RULES = {
    "symptoms/slow-job.yaml": """id: slow-job
title: The job is slow
description: x
group: slow
questions:
  - id: q
    text: Is it?
    answers:
      - {id: a, text: it is}
      - {id: b, text: it is not}
""",
    "fixes/fix.yaml": """id: fix
title: Fix it
steps: Do it.
""",
    "mxnet/autotune.yaml": f"""id: autotune
title: cuDNN autotune runs again and again
description: x
symptoms: [slow-job]
prior: 0.1
signatures:
  - id: repeated
    weight: 0.8
    min_hits: 3
    matchers:
      - type: substring
        text: '{AUTOTUNE}'
fixes: [fix]
""",
    "tensorflow/stuck.yaml": f"""id: stuck
title: The workers never found each other
description: x
symptoms: [slow-job]
prior: 0.1
signatures:
  - id: server-last
    weight: 0.8
    at_end: true
    matchers:
      - type: substring
        text: '{SERVER}'
fixes: [fix]
""",
}


@pytest.fixture(scope="module")
def features(tmp_path_factory: pytest.TempPathFactory, private_cache: Path) -> Any:
    root = tmp_path_factory.mktemp("rules")
    for name, text in RULES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return load_rules(root)


def _ids(rules: Any, text: str) -> list[str]:
    fast = diagnose_text(rules, text)
    ref = diagnose_text(rules, text, fast=False)
    assert [c.to_json() for c in fast.causes] == [c.to_json() for c in ref.causes]
    return [c.id for c in fast.causes]


def test_min_hits_on_a_real_log_that_repeats_the_line(features) -> None:
    """apache/mxnet#15529: the autotune line at every step (5 times)."""
    path = HELDOUT / "envtune-mxnet-15529-cudnn-autotune-repeated.log"
    diag = diagnose_paths(features, [path])
    assert [c.id for c in diag.causes] == ["autotune"]
    assert len(diag.causes[0].evidence) == 3  # EVIDENCE_PER_SIGNATURE of its 5 lines


@pytest.mark.parametrize(("times", "fires"), [(1, False), (2, False), (3, True), (40, True)])
def test_min_hits_counts_different_lines(features, times: int, fires: bool) -> None:
    line = f"[12:45:18] cudnn_algoreg-inl.h:97: {AUTOTUNE}, this can take a while...\n"
    assert _ids(features, "start\n" + line * times) == (["autotune"] if fires else [])


def test_at_end_on_a_real_log_that_stops_after_its_server_started(features) -> None:
    path = DATA_CORPUS / "tfdist-adanet-76-stuck-started-server.log"
    diag = diagnose_paths(features, [path])
    assert [c.id for c in diag.causes] == ["stuck"]
    assert diag.causes[0].evidence[0].line == 1


LINE = "I grpc_server_lib.cc:391] Started server with target: grpc://localhost:2225"


@pytest.mark.parametrize(
    ("text", "fires"),
    [
        (f"python train.py\n{LINE}\n", True),
        (f"python train.py\n{LINE}\n\n```\n...\n^C\n", True),  # noise after it
        (f"{LINE}\nW0318 warning one\nW0318 warning two\n", True),  # among the last three
        (f"{LINE}\nstep 1\nstep 2\nstep 3\n", False),  # progress after it
        (f"{LINE}\n" * 100, True),  # far past the hits a matcher keeps
        (f"{LINE}\n" * 100 + "step 1\nstep 2\nstep 3\n", False),
    ],
    ids=["last", "noise-after", "warnings-after", "progress-after", "x100", "x100-progress"],
)
def test_at_end_fires_only_where_the_log_ends(features, text: str, fires: bool) -> None:
    assert _ids(features, text) == (["stuck"] if fires else [])


def test_at_end_shows_the_last_line_as_evidence(features) -> None:
    diag = diagnose_text(features, f"{LINE}\n" * 100)
    assert 100 in [e.line for e in diag.causes[0].evidence]


def test_at_end_across_blocks_of_a_long_log(features) -> None:
    """Over 1 MB: the reader's blocks; the fast path only (the reference one is slow)."""
    filler = "".join(f"step {i} loss 0.5 data_time 0.1 time 0.3\n" for i in range(30_000))
    for text, want in ((LINE + "\n" + filler + LINE + "\n", ["stuck"]), (LINE + "\n" + filler, [])):
        assert [c.id for c in diagnose_text(features, text).causes] == want


def test_rule_tests_and_the_diagnosis_mean_the_same() -> None:
    repeated = Signature.model_validate(
        {"id": "r", "min_hits": 2, "matchers": [{"type": "substring", "text": AUTOTUNE}]}
    )
    last = Signature.model_validate(
        {"id": "e", "at_end": True, "matchers": [{"type": "substring", "text": SERVER}]}
    )
    assert run_signatures([repeated], [AUTOTUNE]) == []
    assert run_signatures([repeated], [AUTOTUNE, AUTOTUNE])
    assert run_signatures([last], [LINE, "", "```"])
    assert run_signatures([last], [LINE, "1", "2", "3"]) == []


def test_an_at_end_matcher_past_its_maximum_is_given_the_last_lines() -> None:
    sig = Signature.model_validate(
        {"id": "e", "at_end": True, "matchers": [{"type": "substring", "text": SERVER}]}
    )
    last = SignatureMatcher(sig)
    for n in range(1, 40):
        last.feed(n, LINE)
    assert not last.needs(0) and last.saturated  # the fast path stops giving it lines
    assert last.result({60}) is None  # the log ends elsewhere
    last.feed_end([(58, "step 1"), (59, LINE), (60, "")])
    result = last.result({58, 59, 60})
    assert result is not None and result.hits[0].line_no == 59
    assert len(result.hits) == SignatureMatcher.MAX_HITS + 1  # its 20, and the last one
