"""Every value of a rule file can be traced to its line."""

from __future__ import annotations

import pytest

from kb.util.yamlsrc import YamlSyntaxError, load_located

DOC = """id: x
signatures:
  - id: a
    matchers:
      - type: regex
        pattern: 'abc'
"""


def test_lines_of_nested_keys_and_items() -> None:
    loc = load_located(DOC)
    assert loc.line_of(("signatures", 0, "matchers", 0, "pattern")) == 6
    assert loc.line_of(("signatures", 0, "id")) == 3
    # a pydantic location with a union member name in it still resolves to the deepest known key
    assert loc.line_of(("signatures", 0, "matchers", 0, "regex", "pattern")) == 6


def test_syntax_errors_carry_their_line() -> None:
    with pytest.raises(YamlSyntaxError) as info:
        load_located("a: 1\nb: [1, 2\nc: 3\n")
    assert info.value.line in (2, 3)


def test_duplicate_keys_are_recorded() -> None:
    loc = load_located("a: 1\na: 2\n")
    assert loc.duplicate_keys == [("a", 2)]
