"""A line pasted cut mid-word: the piece of a word it ends with is that word, so the
approximate matcher still finds the message it was cut from. The lines are the rules'
own real examples, cut where a terminal selection or a title would cut them."""

from __future__ import annotations

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.approximate import cut_ends, shape
from kb.diagnosis.engine import diagnose_text


@pytest.fixture(scope="module")
def rules():  # type: ignore[no-untyped-def]
    return load_rules()


@pytest.mark.parametrize(
    ("paste", "cause"),
    [
        # rules/ib/nccl-ib-missing.yaml: '[rank1]: Failed to initialize any NET plugin'
        ("[rank1]: Failed to initial", "nccl-ib-missing"),
        # rules/gpu/gpu-rank-mapping.yaml: 'RuntimeError: CUDA error: invalid device ordinal'
        ("^^:     ^^CUDA error: inva", "gpu-rank-mapping"),
    ],
)
def test_a_line_cut_mid_word_finds_the_message_it_was_cut_from(  # type: ignore[no-untyped-def]
    rules, paste: str, cause: str
) -> None:
    got = [c.id for c in diagnose_text(rules, paste + "\n").causes]
    assert cause in got[:3], got


def test_the_ends_of_a_line_are_its_first_and_last_words() -> None:
    assert cut_ends(shape("annot open shared object file: No such fi")) == ("annot", "such")
    assert cut_ends(shape("12345 <> 678")) == ("", "")


def test_a_cut_word_does_not_make_prose_a_message(rules) -> None:  # type: ignore[no-untyped-def]
    """Random prose ending in a piece of a word still matches nothing."""
    got = diagnose_text(rules, "we tried it again yesterday and the whole thing was fi\n")
    assert got.causes == [] and got.failure is None


def test_a_message_re_flowed_inside_a_markdown_quote_is_joined(shipped) -> None:
    # AI-Hypercomputer/xpk#492: the quoted NCCL warning, wrapped by the poster at ~90 columns
    text = (
        "> failed: INTERNAL: NCCL operation ncclGroupEnd() failed: unhandled system error (run with \n"
        "> NCCL_DEBUG=INFO for details). Last NCCL warning(error) log entry (may be unrelated)  'Error \n"
        "> while creating shared memory segment /dev/shm/nccl-TfciGV (size 31850880), error: No space\n"
        "> left on device (28)'.\n"
    )
    assert [c.id for c in diagnose_text(shipped, text).causes][:1] == ["nccl-shm-too-small"]
