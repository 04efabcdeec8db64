"""Messages in another form than one plain line: re-flowed at a word boundary, broken
inside a sentence of prose, URL-encoded,
quoted in prose; and optional-plugin probes that are never evidence.

Each form is tested on the real log it came from (corpora/batch-2026-11-30a) with the fixture rules,
whose patterns are written for the plain message, and on constructed variants that must
*not* be joined (stack frames, tables, log records). The fast and the reference paths
agree on all of it, and a message never counts twice.
"""

from __future__ import annotations

from typing import Any

import pytest

from kb.diagnosis.engine import diagnose_text
from kb.diagnosis.matching import run_signatures
from kb.diagnosis.unwrap import WORD_WRAP_BYTES, logical_lines
from kb.rules.schema.models import Signature
from tests import corpora_loader as corpora

from .conftest import agreed

HELDOUT2 = corpora.Corpus("batch-2026-11-30a")  # once tests/heldout2


def _marked(rules: Any, text: str, cid: str) -> list[str]:
    """The marked part of each evidence line of cause `cid` (the fast path)."""
    [cause] = [c for c in diagnose_text(rules, text).causes if c.id == cid]
    return [e.text[e.start : e.end] for e in cause.evidence]


def _cause(out: dict[str, Any], cid: str) -> dict[str, Any]:
    found = [c for c in out["causes"] if c["id"] == cid]
    assert found, out["causes"]
    return found[0]


# ---------------------------------------------------------------- word-boundary wraps


def test_a_message_reflowed_at_a_word_boundary_is_matched_whole(rules) -> None:
    """deepspeedai/DeepSpeed#3916: `(errno: 98 - Address` / `already in use)`."""
    out = agreed(rules, paths=[HELDOUT2 / "port-deepspeed-3916-srun-29600-wrapped.log"])
    cause = out["causes"][0]
    assert cause["id"] == "port-in-use"
    assert cause["params"]["port"] == "29600"
    [ev] = cause["evidence"]  # both occurrences sit in one message: one hit
    assert ev["line"] == 4  # the line where the match starts
    assert "Address already in use)" in ev["text"]


PARAGRAPH = (
    "RuntimeError: The server socket has failed to listen on any local network\n"
    "address. The server socket has failed to bind to [::]:29600 (errno: 98 - Address\n"
    "already in use). The server socket has failed to bind to 0.0.0.0:29600 (errno:\n"
    "98 - Address already in use).\n"
)


def test_a_match_inside_one_physical_line_is_not_counted_again(rules) -> None:
    lines = [
        "RuntimeError: The server socket has failed to listen on any local network",
        "address: failed to bind to [::]:29600 (errno: 98 - Address already in use),",
        "then it gave up.",
    ]
    assert [(m.line_no, m.last) for m in logical_lines(1, lines)] == [(1, 3)]
    out = agreed(rules, "\n".join(lines) + "\n")
    assert [e["line"] for e in _cause(out, "port-in-use")["evidence"]] == [2]


@pytest.mark.parametrize(
    "lines",
    [
        [  # stack frames: indented, each its own record
            '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/rendezvous.py",',
            "    line 176, in _create_c10d_store and the rest of it goes on here for a while",
        ],
        [  # a table: runs of spaces between columns
            "GPU0     X      NV12    NV12    NV12    0-63    0    N/A      yes",
            "GPU1    NV12     X      NV12    NV12    0-63    0    N/A      yes",
        ],
        [  # log records: a new timestamped line, an exception line, a prompt
            "[2024-01-01 10:00:00] INFO worker 3 connected to the store at 10.0.0.1:29500 ok",
            "[2024-01-01 10:00:01] INFO worker 4 connected to the store at 10.0.0.1:29500 ok",
        ],
        [
            "torch.distributed.elastic.multiprocessing.api: failed (exitcode: 1) local_rank:",
            "RuntimeError: The server socket has failed to listen on any local network",
        ],
        [  # the next line's first word would have fitted: a short line is a line
            "The server socket has failed to listen on any local address.",  # 61 < 72
            "ok",
        ],
    ],
)
def test_frames_tables_and_records_are_not_joined(lines: list[str]) -> None:
    assert logical_lines(1, lines) == []


# a message quoted inside a paragraph, broken where the author's editor broke the
# sentence: the first line is far wider than any wrap width (pytorch/pytorch#5040 form)
QUOTED_PROSE = (
    "I run the training in a docker container and after a few iterations it stops with "
    "the following message, every time at the same place in the first epoch of the run:"
    ' "RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus\n'
    "error. It is possible that dataloader's workers are out of shared\n"
    'memory. Please try to raise your shared memory limit." What should I change?\n'
)


def test_a_sentence_broken_inside_prose_is_joined_at_any_width() -> None:
    joined = [m for m in logical_lines(1, QUOTED_PROSE.splitlines()) if " " in m.text[-40:]]
    assert any(
        "killed by signal: Bus error. It is possible" in m.text
        and "out of shared memory. Please" in m.text
        and (m.line_no, m.last) == (1, 3)
        for m in joined
    )


@pytest.mark.parametrize(
    "lines",
    [
        [  # wider than any wrap width, and the next line starts a new sentence
            "The job was started on both nodes with the usual arguments " * 5 + "and then it",
            "Stopped after the first iteration without any error on the console.",
        ],
        [  # the line ends on a value, not inside a sentence
            "step 1200/5000 loss 0.4312 lr 0.000100 throughput 2351.2 samples/sec 0.54",
            "step 1300/5000 loss 0.4301 lr 0.000100 throughput 2349.8 samples/sec 0.54",
        ],
    ],
)
def test_lines_that_do_not_break_a_sentence_are_not_joined(lines: list[str]) -> None:
    # (a cut inside a word, joined with nothing, is another form: not judged here)
    spaced = [m for m in logical_lines(1, lines) for j in m.joins if m.text[j - 1] == " "]
    assert spaced == []


def test_word_wraps_are_looked_for_only_in_the_first_megabyte() -> None:
    filler = ["short line"] * (WORD_WRAP_BYTES // len("short line\n") + 10)
    wrapped = PARAGRAPH.splitlines()
    joined = "Address already in use"  # a word-boundary join (a mid-word one has no space)
    assert any(joined in m.text for m in logical_lines(1, wrapped))
    assert not any(joined in m.text for m in logical_lines(1, filler + wrapped))


# ---------------------------------------------------------------- URL-encoded lines


def test_a_url_encoded_line_is_decoded_and_shown_as_the_log_has_it(rules) -> None:
    """turboderp/exllamav2#530: `libtorch_cuda.so:%20undefined%20symbol:%20ncclCommRegister`."""
    out = agreed(rules, paths=[HELDOUT2 / "ncclmis-exllamav2-530-urlencoded-ncclcommregister.log"])
    cause = _cause(out, "nccl-missing-or-mismatch")
    assert cause["params"]["symbol"] == "ncclCommRegister"
    [ev] = cause["evidence"]
    assert ev["text"] == "libtorch_cuda.so:%20undefined%20symbol:%20ncclCommRegister"
    text = (HELDOUT2 / "ncclmis-exllamav2-530-urlencoded-ncclcommregister.log").read_text()
    assert _marked(rules, text, "nccl-missing-or-mismatch") == [ev["text"]]  # all of it


def test_decoding_maps_the_match_back_and_splits_at_encoded_newlines(rules) -> None:
    line = "GET /report?msg=start%0AImportError:%20/x/libtorch_cuda.so:%20undefined%20symbol:%20ncclAlltoAll%0Adone"
    out = agreed(rules, "header\n" + line + "\n")
    [ev] = _cause(out, "nccl-missing-or-mismatch")["evidence"]
    assert ev["line"] == 2 and ev["text"] == line
    assert _marked(rules, "header\n" + line + "\n", "nccl-missing-or-mismatch") == [
        "libtorch_cuda.so:%20undefined%20symbol:%20ncclAlltoAll"
    ]


def test_a_plain_line_with_the_message_counts_once(rules) -> None:
    plain = "ImportError: /x/libtorch_cuda.so: undefined symbol: ncclCommRegister%20%20"
    out = agreed(rules, plain + "\n")
    assert len(_cause(out, "nccl-missing-or-mismatch")["evidence"]) == 1


def test_one_escape_is_not_an_encoded_line() -> None:
    assert logical_lines(1, ["progress 100%20 items", "loss 0.5 at 50%"]) == []


# ---------------------------------------------------------------- prose quotes


@pytest.mark.parametrize(
    "line",
    [
        "After the upgrade I get `No IB devices found` on every node.",
        'ibv_devinfo says "No IB devices found   " and nothing else',
    ],
)
def test_an_anchored_rule_fires_on_a_message_quoted_in_prose(rules, line: str) -> None:
    agreed(rules, "intro\n" + line + "\n")
    [marked] = _marked(rules, "intro\n" + line + "\n", "nccl-ib-missing")
    assert marked.strip() == "No IB devices found"


def test_an_anchored_rule_does_not_fire_on_unquoted_prose(rules) -> None:
    # the rule's `^\s*No IB devices found\s*$` is the tool's whole line, not a sentence's
    # words; (the catalogue's unanchored template of the same line may still say it)
    agreed(rules, "intro\nIt said No IB devices found, then stopped.\n")  # both paths agree
    diag = diagnose_text(rules, "intro\nIt said No IB devices found, then stopped.\n")
    fired = [e.signature for c in diag.causes for e in c.evidence]
    assert not any(s.startswith("nccl-ib-missing/") and "/catalogued:" not in s for s in fired)


# ---------------------------------------------------------------- optional-plugin probes


def test_an_optional_plugin_probe_is_never_evidence(rules) -> None:
    """NVIDIA/nccl#1231: the `NET/Plugin ... libnccl-net.so: cannot open shared object
    file` INFO line is printed by healthy runs too."""
    out = agreed(rules, paths=[HELDOUT2 / "nvls-nccl-1231-cuda-802-system-not-yet-initialized.log"])
    for cause in out["causes"]:
        assert all("Plugin" not in e["text"] for e in cause["evidence"]), cause
    assert "shared-library-missing" not in [c["id"] for c in out["causes"]]


def test_the_same_words_outside_a_probe_are_evidence(rules) -> None:
    probe = (
        "vm:7:7 [0] NCCL INFO NET/Plugin : Plugin load returned 2 : libnccl-net.so: cannot "
        "open shared object file: No such file or directory : when loading libnccl-net.so"
    )
    real = "OSError: libnvinfer.so.8: cannot open shared object file: No such file or directory"
    assert agreed(rules, probe + "\n")["causes"] == []
    out = agreed(rules, probe + "\n" + real + "\n")
    [ev] = _cause(out, "shared-library-missing")["evidence"]
    assert ev["line"] == 2


def test_rule_tests_see_the_same_forms() -> None:
    """`rules test` runs examples through `run_signatures`: joined, decoded, no probes."""
    sig = Signature.model_validate(
        {
            "id": "s",
            "matchers": [{"type": "regex", "pattern": r"errno: 98 - Address already in use"}],
        }
    )
    assert run_signatures([sig], PARAGRAPH.splitlines())
    enc = Signature.model_validate(
        {"id": "u", "matchers": [{"type": "substring", "text": "undefined symbol: nccl"}]}
    )
    assert run_signatures([enc], ["x.so:%20undefined%20symbol:%20ncclSend"])
    probe = Signature.model_validate(
        {"id": "p", "matchers": [{"type": "substring", "text": "cannot open shared object"}]}
    )
    line = "h:1:1 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file"
    assert run_signatures([probe], [line]) == []


def test_a_message_after_a_full_width_colon_is_quoted(shipped) -> None:
    # DLLXW/baby-llama2-chinese#45: `使用transformers==4.35.2时会报错：AttributeError: ...`
    from kb.diagnosis.decorations import quoted

    line = "使用transformers==4.35.2时会报错：AttributeError: 'ChatGLMTokenizer' object has no attribute 'tokenizer'"
    ((start, end),) = quoted(line)
    assert line[start:end].startswith("AttributeError: 'ChatGLMTokenizer'")
    diag = diagnose_text(shipped, line + "\n")
    assert diag.failure is not None and diag.failure.symptom == "python-exception"
    assert diag.causes[0].id == "code-version-mismatch"
    assert quoted("报错：短") == []  # too short to be a message
