"""One way to write a cause's number, the same on the CLI, in the TUI and in a runbook.

Two numbers exist for a cause and each has one word: the log's `confidence` (how strongly
the log shows it, from the diagnosis) and the walk's `likelihood now` (its share among the
candidates, moved by each answered step). Both are written by `percent`, so "0.93" on one
screen and "92%" on another for the same cause no longer happens.
"""

from __future__ import annotations

import math

CONFIDENCE = "confidence"
LIKELIHOOD = "likelihood now"


def percent(p: float) -> str:
    """A share as a whole percentage; never "100%" or "0%" for what is only nearly so."""
    if math.isnan(p):
        return "?"
    if p <= 0.0:
        return "0%"
    if p >= 1.0:
        return "100%"
    if p < 0.005:
        return "<1%"
    if p >= 0.995:
        return ">99%"
    return f"{math.floor(p * 100 + 0.5)}%"  # half up: 0.005 is 1%, as a reader rounds


def confidence_text(p: float) -> str:
    """The diagnosis's number for a cause, as every output writes it: 'confidence 93%'."""
    return f"{CONFIDENCE} {percent(p)}"
