"""What the catalogue tests share: the shipped catalogue, loaded once per test module."""

from __future__ import annotations

import pytest

from kb.rules.catalogue import Catalogue, load_catalogue


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return load_catalogue()
