"""The shipped rules, loaded once per test process, and what they make of a text.

Rule-family tests in several folders ask the same two questions of the same rules; one
definition keeps them asking it the same way.
"""

from __future__ import annotations

from functools import cache

from kb.diagnosis.engine import diagnose_text
from kb.rules import loader
from kb.rules.knowledge import KnowledgeBase
from kb.util.paths import rules_dir


@cache
def knowledge() -> KnowledgeBase:
    """The shipped rules (loaded even while another area has lint errors)."""
    kb, _ = loader.load(rules_dir())
    return kb


def ranked(text: str) -> list[str]:
    """The cause ids `diagnose` lists for `text`, best first."""
    return [c.id for c in diagnose_text(knowledge(), text).causes]


def fired(text: str) -> list[str]:
    """The causes a rule fired for (not those listed only as a failure's likely causes)."""
    return [c.id for c in diagnose_text(knowledge(), text).causes if c.basis != "symptom"]
