"""A catalogued message cut short at the end of a line (an issue's title, a terminal's
width, a paste cut at a value) still names its message, through the whole diagnosis,
with hyperscan and with RE2 alike; a cut that a message of another meaning shares is
left out, so the shorter text never claims the wrong cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.rules.catalogue import Catalogue, load_catalogue
from tests.catalogue.entry_label import catalogue_folder

ROOT = Path(__file__).resolve().parents[2]
# google-research/pegasus#116, its title (the message goes on: "; Detected an installation
# of version {present}. Please upgrade TensorFlow to proceed.")
PEGASUS_TITLE = (
    "ImportError: This version of TensorFlow Datasets requires TensorFlow version >= 2.1.0"
)
CATALOGUED = "catalogued: tensorflow-datasets ImportError: This version of TensorFlow Datasets"


@pytest.fixture(scope="module")
def rules():  # type: ignore[no-untyped-def]
    return load_rules()


def labels(cat: Catalogue, line: str) -> set[str]:
    return {m.label for m in cat.match(line)}


def test_the_shipped_catalogue_names_a_cut_title() -> None:
    assert labels(load_catalogue(), PEGASUS_TITLE) == {"cause/tfds-version"}


@pytest.mark.parametrize("use_hyperscan", [True, False])
def test_a_cut_title_pasted_is_diagnosed(rules, use_hyperscan: bool) -> None:  # type: ignore[no-untyped-def]
    diag = diagnose_text(rules, PEGASUS_TITLE + "\n", use_hyperscan=use_hyperscan)
    out = diag.to_json(explain=True)
    assert [c["id"] for c in out["causes"]][:1] == ["tfds-version"], out["causes"]
    assert CATALOGUED in out["causes"][0]["explanation"]  # the cut template, no rule


@pytest.mark.parametrize("use_hyperscan", [True, False])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_cut_line_in_a_log_file_is_found_where_the_line_ends(  # type: ignore[no-untyped-def]
    rules, tmp_path: Path, use_hyperscan: bool, newline: str
) -> None:
    """The block scan (hyperscan, many lines at once) and the line matcher agree on where
    a line ends: mid-block, before a CRLF, and at the end of a file without a newline."""
    before = [
        "Traceback (most recent call last):",
        '  File "pegasus/data/all_datasets.py", line 21, in <module>',
        "    import tensorflow_datasets as tfds",
    ]
    for where, tail in (
        ("middle", ["$ pip list | grep tensorflow", "tensorflow 1.15.2"]),
        ("end", []),
    ):
        log = tmp_path / f"{where}.log"
        body = newline.join([*before, PEGASUS_TITLE, *tail])
        log.write_bytes(body.encode() + (newline.encode() if tail else b""))
        out = diagnose_paths(rules, [log], use_hyperscan=use_hyperscan).to_json(explain=True)
        assert [c["id"] for c in out["causes"]][:1] == ["tfds-version"], (where, out["causes"])
        assert CATALOGUED in out["causes"][0]["explanation"]


@pytest.mark.parametrize("use_hyperscan", [True, False])
def test_the_prefix_followed_by_other_text_is_no_cut(rules, use_hyperscan: bool) -> None:  # type: ignore[no-untyped-def]
    text = PEGASUS_TITLE + " is what the README says; we run 2.3.0 and it works\n"
    out = diagnose_text(rules, text, use_hyperscan=use_hyperscan).to_json(explain=True)
    assert all(CATALOGUED not in c.get("explanation", "") for c in out["causes"]), out


def test_a_prefix_another_meaning_shares_is_no_cut() -> None:
    """Paddle prints "Can't find your gpus ..." from Python (a rank-to-GPU mapping cause)
    and from C++ (a symptom): a line cut after the gpus may be either, so the cause's cut
    is left out; the whole message still names the cause."""
    cat = load_catalogue()
    assert "cause/gpu-rank-mapping" not in labels(cat, "AssertionError: Can't find your gpus 0,1")
    whole = "AssertionError: Can't find your gpus 0,1 in CUDA_VISIBLE_DEVICES[2,3]."
    assert "cause/gpu-rank-mapping" in labels(cat, whole)


LIBRARY = """library: demo
source: https://example.org/demo
versions: 1.0-1.0
messages:
- template: 'Cannot open the rendezvous store at %s: the connection was refused by %s (check the store port)'
  level: error
  file: store.cc
  versions: 1.0
  class: cause
  cause: rendezvous-port
- template: 'Cannot open the rendezvous store at %s'
  level: info
  file: store.cc
  versions: 1.0
  class: benign
- template: 'Lost the connection to the training coordinator at %s after %d retries'
  level: error
  file: client.cc
  versions: 1.0
  class: cause
  cause: coordinator-lost
- template: 'Lost the connection to the training coordinator at %s, reconnecting'
  level: warn
  file: client.cc
  versions: 1.0
  class: cause
  cause: coordinator-lost
"""


def test_shared_prefixes_are_judged_across_the_catalogue(tmp_path: Path) -> None:
    root = catalogue_folder(tmp_path, LIBRARY)
    from kb.rules.catalogue import catalogue as module

    module._load.cache_clear()
    try:
        cat = load_catalogue(root)
        # the benign message is the cause's prefix: a line that ends there is the benign one
        assert labels(cat, "Cannot open the rendezvous store at node1:29500") == {"benign"}
        # a line that shows more of the cause than the benign message has is the cause's
        line = "Cannot open the rendezvous store at node1:29500: the connection was refused by n1"
        assert labels(cat, line) == {
            "benign",
            "cause/rendezvous-port",
        }
        # two messages of one meaning share their prefix: the cut stays
        assert labels(cat, "Lost the connection to the training coordinator at 10.0.0.1") == {
            "cause/coordinator-lost"
        }
    finally:
        module._load.cache_clear()
