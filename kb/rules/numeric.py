"""Numeric conditions over the values a regex matcher extracts (`where:` in a rule).

A rule compares numbers by their value, never by spelling them out digit by digit in a
regex: `where: {data_time: {ge: 0.5 * batch_time}}` holds on a match whose `data_time`
group reads as a number at least half its `batch_time` group. A bound is a number, the
name of another group of the same match, or `<number> * <group>`. Plain Python, no
pydantic: the schema validates bounds with it and the diagnosis evaluates them with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from kb.util import recache
from kb.util.record import record

OPERATORS = ("lt", "le", "gt", "ge", "eq")

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_OPERAND = recache.compile(rf"^\s*(?:(?P<factor>{_NUMBER})\s*\*\s*)?(?P<group>[A-Za-z_]\w*)\s*$")


@record(hashable=True)
class Bound:
    """One comparison: `group <op> number`, or `group <op> number * other`."""

    group: str
    op: str  # one of OPERATORS
    number: float  # the bound itself, or the factor of `other`
    other: str | None = None

    def __init__(self, group: str, op: str, number: float, other: str | None = None) -> None:
        self.group = group
        self.op = op
        self.number = number
        self.other = other

    def holds(self, values: Mapping[str, str | None]) -> bool:
        """Whether the match's values satisfy it; a value that is missing or does not
        read as a number satisfies nothing."""
        left = as_number(values.get(self.group))
        if left is None:
            return False
        right: float | None = self.number
        if self.other is not None:
            other = as_number(values.get(self.other))
            right = None if other is None else self.number * other
        return right is not None and compare(self.op, left, right)

    def to_json(self) -> list[object]:
        return [self.group, self.op, self.number, self.other]

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> Bound:
        group, op, number, other = data
        return cls(str(group), str(op), float(number), None if other is None else str(other))


def parse_operand(value: float | int | str) -> tuple[float, str | None]:
    """A bound as written: (the number, None), or (the factor, the other group's name).

    Raises ValueError with a one-line reason for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"a bound is a number or a group name, not {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"a bound must be a finite number, not {value!r}")
        return float(value), None
    number = as_number(value)
    if number is not None:
        return number, None
    m = _OPERAND.match(value)
    if m is None:
        raise ValueError(f"bound {value!r} is not a number, a group name or '<number> * <group>'")
    return float(m["factor"] or 1.0), m["group"]


def bounds_of(group: str, ops: Mapping[str, float | int | str | None]) -> list[Bound]:
    """The bounds written under one group name (`{ge: 0.5 * batch_time, lt: 100}`)."""
    out: list[Bound] = []
    for op in OPERATORS:
        value = ops.get(op)
        if value is not None:
            number, other = parse_operand(value)
            out.append(Bound(group, op, number, other))
    return out


def as_number(text: str | None) -> float | None:
    """`text` as a finite number, or None."""
    if text is None:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def compare(op: str, left: float, right: float) -> bool:
    if op == "lt":
        return left < right
    if op == "le":
        return left <= right
    if op == "gt":
        return left > right
    if op == "ge":
        return left >= right
    if op == "eq":
        return left == right
    raise ValueError(f"unknown comparison {op!r}")
