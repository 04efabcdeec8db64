"""`kb.util.record` classes behave as the dataclasses they replace (the same repr, equality,
hash, field order, defaults and `replace`), without importing `dataclasses` or compiling
methods when the module is imported."""

from __future__ import annotations

import pickle
import pickletools
import subprocess
import sys
from dataclasses import dataclass
from dataclasses import field as dc_field
from dataclasses import fields as dc_fields
from dataclasses import replace as dc_replace
from typing import ClassVar, cast

import pytest

from kb.util.record import MISSING, field, fields, record, replace


@record(hashable=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    cache: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    ORIGIN: ClassVar[str] = "origin"  # not a field

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
    cache: dict[str, int] = dc_field(default_factory=dict, repr=False, compare=False)
    ORIGIN: ClassVar[str] = "origin"


@record()
class Box:
    items: list[int] = field(default_factory=list)

    def __init__(self, items: list[int] | None = None) -> None:
        self.items = [] if items is None else items


@record()
class Labelled(Box):
    label: str = "x"

    def __init__(self, items: list[int] | None = None, label: str = "x") -> None:
        super().__init__(items)
        self.label = label


def test_repr_equality_and_hash_are_the_dataclass_ones() -> None:
    p, q = Point(1, 2, ("a",), {"k": 1}), PointDC(1, 2, ("a",), {"k": 1})
    assert repr(p) == repr(q).replace("PointDC", "Point") == "Point(x=1, y=2, tags=('a',))"
    assert p == Point(1, 2, ("a",)) and p != Point(1, 3, ("a",))  # `cache` is not compared
    assert hash(p) == hash(Point(1, 2, ("a",))) and {p: 1}[Point(1, 2, ("a",))] == 1
    other: object = q  # compared as any object: only the very same class is equal
    assert p != other and (p == cast(object, (1, 2, ("a",)))) is False


def test_fields_and_class_attributes_are_the_dataclass_ones() -> None:
    assert [f.name for f in fields(Point)] == [f.name for f in dc_fields(PointDC)]
    assert [(f.repr, f.compare) for f in fields(Point)] == [
        (f.repr, f.compare) for f in dc_fields(PointDC)
    ]
    assert fields(Point(1)) == fields(Point) and fields(Point)[1].default == 0
    assert fields(Point)[0].default is MISSING and fields(Point)[3].default_factory is dict
    # as dataclasses leaves them: a plain default stays a class attribute, a factory's goes
    assert Point.y == PointDC.y == 0 and Point.ORIGIN == "origin"
    assert not hasattr(Point, "cache") and not hasattr(PointDC, "cache")
    assert vars(Point(1, cache={"k": 1})) == {"x": 1, "y": 0, "tags": (), "cache": {"k": 1}}
    with pytest.raises(TypeError, match="not a record"):
        fields(PointDC)


def test_replace_calls_the_class_with_every_field() -> None:
    p = Point(1, 2, ("a",), {"k": 1})
    r = replace(p, y=5)
    assert r == Point(1, 5, ("a",)) and r.cache == {"k": 1} and p.y == 2
    assert repr(r) == repr(dc_replace(PointDC(1, 2, ("a",)), y=5)).replace("PointDC", "Point")
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(p, z=1)


@record(hashable=True, init_pickle=True)
class Span:
    start: int
    end: int = 0
    label: str = ""

    def __init__(self, start: int, end: int = 0, label: str = "") -> None:
        self.start = start
        self.end = end
        self.label = label


def test_a_record_pickles_by_its_fields_or_by_its_dict() -> None:
    """`init_pickle`: pickled as a call of the class with its fields, read back equal (a
    cache holds thousands); without it, as any object (its `__dict__`)."""
    s = Span(3, 9, "x")
    data = pickle.dumps(s, 5)
    back = pickle.loads(data)
    assert back == s and vars(back) == vars(s) and type(back) is Span
    assert s.__reduce__() == (Span, (3, 9, "x"))
    ops = {op.name for op, _arg, _pos in pickletools.genops(data)}
    assert "REDUCE" in ops and "BUILD" not in ops  # made by __init__, no __dict__ set
    plain = pickle.dumps(Point(1, 2, ("a",)), 5)
    assert "BUILD" in {op.name for op, _arg, _pos in pickletools.genops(plain)}
    assert pickle.loads(plain) == Point(1, 2, ("a",))


def test_a_mutable_record_is_unhashable_and_gets_fresh_defaults() -> None:
    a, b = Box(), Box()
    a.items.append(1)
    assert b.items == [] and a == Box([1])
    with pytest.raises(TypeError):
        hash(a)


def test_a_subclass_adds_its_fields_after_its_bases() -> None:
    assert [f.name for f in fields(Labelled)] == ["items", "label"]
    assert repr(Labelled([1], "y")) == "Labelled(items=[1], label='y')"
    assert Labelled([1]) != Box([1]) and Labelled([1]) == Labelled([1], "x")


def test_a_record_must_write_its_init_and_take_no_mutable_default() -> None:
    with pytest.raises(TypeError, match="writes its own __init__"):

        @record()
        class Bare:
            x: int

    with pytest.raises(ValueError, match="needs a factory"):

        @record()
        class Shared:
            items: list[int] = []  # noqa: RUF012 (the mistake refused)

            def __init__(self) -> None:
                self.items = []


def test_the_diagnose_path_imports_no_dataclasses() -> None:
    """The point of records: the modules of a pasted log's diagnosis, records included, load
    without `dataclasses` (and `inspect`, `ast`, `dis` behind it)."""
    code = (
        "import sys, kb.diagnosis.engine, kb.diagnosis.approximate, kb.diagnosis.render, "
        "kb.cli.diagnose, kb.rules.fixchoice; "
        "print(sorted(m for m in ('dataclasses', 'inspect', 'ast', 'dis') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
