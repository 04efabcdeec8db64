"""Dataclasses that cost nothing to define: `@record` on a class with its own `__init__`.

`@dataclass` writes each class's `__init__`, `__repr__`, `__eq__` (and, frozen,
`__hash__`, `__setattr__`, `__delattr__`) as source text and compiles it when the module
is imported: about a millisecond a class, which `diagnose` paid at every start for the
forty classes of its path (a fifth of a pasted log's run). A record is still a dataclass
(`dataclasses.fields`, `replace`, `asdict` work; `__dataclass_fields__` is there), made
with `init=False, repr=False, eq=False`, which compiles nothing; the class writes its
`__init__` itself (compiled once, into the module's bytecode), and `record` adds
`__repr__` and `__eq__` (and `__hash__`) that behave as the generated ones: the fields in
their order, compared as a tuple only with an object of the very same class.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # `typing` has it from Python 3.11 on; only type checkers read it
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorator: decorator


T = TypeVar("T", bound=type)


@dataclass_transform()  # type checkers see a dataclass (its own `__init__` stands)
def record(*, hashable: bool = False) -> Callable[[T], T]:
    """Make the class (which defines `__init__`) a dataclass with the usual `__repr__` and
    `__eq__`; `hashable`: also `__hash__`, as `frozen=True` would (the class must then not
    change its fields after `__init__`)."""

    def make(cls: T) -> T:
        if "__init__" not in cls.__dict__:
            raise TypeError(f"{cls.__qualname__}: a record writes its own __init__")
        dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
        fields = dataclasses.fields(cls)
        shown = tuple(f.name for f in fields if f.repr)
        compared = tuple(f.name for f in fields if f.compare)
        cls.__repr__ = _repr(shown)  # type: ignore[assignment]
        cls.__eq__ = _eq(compared)  # type: ignore[assignment]
        cls.__hash__ = _hash(compared) if hashable else None  # type: ignore[assignment]
        return cls

    return make


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields' values as a tuple (at C speed: `attrgetter`)."""
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    if not names:
        return lambda obj: ()
    return operator.attrgetter(*names)


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


def _eq(names: tuple[str, ...]) -> Callable[[Any, object], bool]:
    values = _values(names)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(values(self) == values(other))

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__
