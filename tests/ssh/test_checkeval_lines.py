"""The one-search shortcut of `kb.checks.evaluate` gives exactly the line-by-line answer.

Checks' `any_line_matches`, `no_line_matches` and `extract` are defined line by line;
`checkeval` first searches the whole output once and skips the per-line loop when that
finds nothing.  Every such pattern of the shipped rules is compared here with the plain
line-by-line search over real recorded outputs and outputs built to trip anchors, word
boundaries and line breaks other than \\n.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.authoring.checked import load_kb
from kb.checks.evaluate import _Lines
from kb.rules.schema.models import Expect
from kb.util.re2syntax import compile_re2

REPO = Path(__file__).resolve().parents[2]
RECORDED = sorted(
    p
    for d in (REPO / "tests" / "ssh" / "fixtures", REPO / "tests" / "cluster" / "fixtures")
    for p in d.rglob("*.txt")
)


def _patterns(expect: Expect | None) -> list[str]:
    if expect is None:
        return []
    out = [p for p in (expect.any_line_matches, expect.no_line_matches) if p is not None]
    for sub in (expect.all or []) + (expect.any or []):
        out += _patterns(sub)
    return out


def _rule_patterns() -> list[str]:
    kb = load_kb(None)
    found: set[str] = set()
    for _cause, check in kb.checks.values():
        found.update(_patterns(check.problem_if) + _patterns(check.ok_if))
        found.update(check.extract.values())
    return sorted(found)


def _outputs(patterns: list[str]) -> list[str]:
    texts = [p.read_text(errors="replace") for p in RECORDED]
    tricky = [
        "",
        "\n\n",
        "first\rsecond\r\nthird\x0bfourth\x0cfifth\u2028sixth",
        "  leading spaces\ttab\nword_end\n-dash-\n",
    ]
    for text in texts[:12]:  # line ends other than \n inside real outputs
        tricky.append(text.replace("\n", "\r\n"))
        tricky.append(text.replace("\n", "\r"))
    return texts + tricky


PATTERNS = _rule_patterns()


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_shortcut_agrees_with_the_line_by_line_search(chunk: int) -> None:
    assert len(PATTERNS) > 50 and len(RECORDED) > 20
    outputs = _outputs(PATTERNS)
    for pattern in PATTERNS[chunk::4]:
        rx = compile_re2(pattern)
        for text in outputs:
            lines = _Lines(text)
            naive = next((m for m in map(rx.search, text.splitlines()) if m is not None), None)
            fast = lines.first(pattern)
            assert (fast is None) == (naive is None), (pattern, text[:200])
            if naive is not None:
                assert fast.group(0) == naive.group(0)
