"""Every fuzzy text in the shipped rules has anchor words, so not every line is compared.

The lint warning for a fuzzy text without anchors is tested with the other broken
rule fixtures (tests/core/broken/fuzzy-no-anchor).
"""

from __future__ import annotations

from pathlib import Path

from kb.diagnosis.matching import anchors_of

HERE = Path(__file__).parent
CASE = HERE / "lint" / "fuzzy-no-anchor"
BASE = HERE.parent / "core" / "base_rules"


def test_the_shipped_rules_have_anchor_words_in_every_fuzzy_text(shipped) -> None:
    for rid, sig in shipped.signatures():
        for m in (*sig.matchers, *sig.unless):
            if m.type == "fuzzy":
                assert anchors_of(m.text), (rid, sig.id)
