"""A cause's number has one format everywhere (issue 14: '92 %' on one screen, '0.93' on another)."""

from __future__ import annotations

import math

import pytest

from kb.diagnosis.percent import confidence_text, percent


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (0.0, "0%"),
        (0.001, "<1%"),
        (0.004, "<1%"),
        (0.005, "1%"),
        (0.924, "92%"),
        (0.93, "93%"),
        (0.994, "99%"),
        (0.996, ">99%"),
        (1.0, "100%"),
        (-0.1, "0%"),
        (math.nan, "?"),
    ],
)
def test_percent_is_a_whole_percentage_that_never_rounds_to_certainty(p: float, text: str):
    assert percent(p) == text


def test_the_diagnosis_number_reads_confidence_and_a_percentage():
    assert confidence_text(0.93) == "confidence 93%"
