"""`kb.util.record` classes behave as the dataclasses they replace: the same repr, equality,
hash and dataclass functions, without compiling methods when the module is imported."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import cast

import pytest

from kb.util.record import record


@record(hashable=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    cache: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def __init__(
        self, x: int, y: int = 0, tags: tuple[str, ...] = (), cache: dict[str, int] | None = None
    ) -> None:
        self.x = x
        self.y = y
        self.tags = tags
        self.cache = {} if cache is None else cache


@dataclass(frozen=True)
class PointDC:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    cache: dict[str, int] = field(default_factory=dict, repr=False, compare=False)


@record()
class Box:
    items: list[int] = field(default_factory=list)

    def __init__(self, items: list[int] | None = None) -> None:
        self.items = [] if items is None else items


def test_repr_equality_and_hash_are_the_dataclass_ones() -> None:
    p, q = Point(1, 2, ("a",), {"k": 1}), PointDC(1, 2, ("a",), {"k": 1})
    assert repr(p) == repr(q).replace("PointDC", "Point") == "Point(x=1, y=2, tags=('a',))"
    assert p == Point(1, 2, ("a",)) and p != Point(1, 3, ("a",))  # `cache` is not compared
    assert hash(p) == hash(Point(1, 2, ("a",))) and {p: 1}[Point(1, 2, ("a",))] == 1
    other: object = q  # compared as any object: only the very same class is equal
    assert p != other and (p == cast(object, (1, 2, ("a",)))) is False


def test_dataclass_functions_work() -> None:
    p = Point(1, cache={"k": 1})
    assert dataclasses.is_dataclass(p)
    assert [f.name for f in dataclasses.fields(p)] == ["x", "y", "tags", "cache"]
    assert dataclasses.replace(p, y=5) == Point(1, 5)
    assert dataclasses.asdict(p) == {"x": 1, "y": 0, "tags": (), "cache": {"k": 1}}
    assert vars(p) == {"x": 1, "y": 0, "tags": (), "cache": {"k": 1}}  # fields in order


def test_a_mutable_record_is_unhashable_and_gets_fresh_defaults() -> None:
    a, b = Box(), Box()
    a.items.append(1)
    assert b.items == [] and a == Box([1])
    with pytest.raises(TypeError):
        hash(a)


def test_a_record_must_write_its_init() -> None:
    with pytest.raises(TypeError, match="writes its own __init__"):

        @record()
        class Bare:
            x: int
