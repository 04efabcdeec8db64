"""The shipped rules as a fixture, for the rule-family tests that take `rules`."""

from __future__ import annotations

import pytest

from kb.rules.knowledge import KnowledgeBase
from tests.shipped_rules import knowledge


@pytest.fixture(scope="session")
def rules() -> KnowledgeBase:
    """The shipped rules (loaded even while another area has lint errors)."""
    return knowledge()
