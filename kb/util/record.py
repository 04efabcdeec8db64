"""Dataclass-like classes that cost nothing to define: `@record` on a class with its own
`__init__`.

`@dataclass` writes each class's `__init__`, `__repr__`, `__eq__` (and, frozen,
`__hash__`, `__setattr__`, `__delattr__`) as source text and compiles it when the module
is imported: about a millisecond a class, which `diagnose` paid at every start for the
forty classes of its path; and importing `dataclasses` at all pulls `inspect`, `ast`,
`dis` and `tokenize` (a tenth of a pasted log's run). A record needs neither: the class
writes its `__init__` itself (compiled once, into the module's bytecode), and `record`
reads the fields from the class's annotations (in their order, `ClassVar`s left out, a
base record's first), and adds `__repr__` and `__eq__` (and `__hash__`) that behave as
the generated ones: the fields in their order, compared as a tuple only with an object of
the very same class. `field(...)` marks a field's default factory, or a field left out
of the repr or the comparison, as `dataclasses.field` does; `fields(...)` and
`replace(...)` stand for their namesakes in `dataclasses`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:  # `typing` has it from Python 3.11 on; only type checkers read it
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorator: decorator


T = TypeVar("T", bound=type)
R = TypeVar("R")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """One field of a record: its name, its default or default factory, and whether the
    repr shows it and equality compares it."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        repr: bool = True,
        compare: bool = True,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare

    def __repr__(self) -> str:
        return (
            f"Field(name={self.name!r}, default={self.default!r}, "
            f"default_factory={self.default_factory!r}, repr={self.repr}, "
            f"compare={self.compare})"
        )


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field's default factory (its class then has no attribute of that name, as with
    `dataclasses.field`), or a field left out of `repr` or equality."""
    return Field(default, default_factory, repr, compare)


@dataclass_transform(field_specifiers=(field,))  # type checkers see a dataclass
def record(*, hashable: bool = False, init_pickle: bool = False) -> Callable[[T], T]:
    """Make the class (which defines `__init__`) a record with the usual `__repr__` and
    `__eq__`; `hashable`: also `__hash__`, as `frozen=True` would (the class must then not
    change its fields after `__init__`). `init_pickle`: pickled as a call of the class with
    its fields' values, in order (its `__init__` must take them so): a cache of thousands
    of them loads in half the time of setting each one's `__dict__` (the instances made
    by `__init__` share their attribute keys, which a `__dict__` set by pickle does not)."""

    def make(cls: T) -> T:
        if "__init__" not in cls.__dict__:
            raise TypeError(f"{cls.__qualname__}: a record writes its own __init__")
        found: dict[str, Field] = {}
        for base in reversed(cls.__mro__[1:]):
            for f in base.__dict__.get("__record_fields__", ()):
                found[f.name] = f
        own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (inspect: the cost avoided)
        for name, annotation in own.items():
            if _is_classvar(annotation):
                continue
            value = cls.__dict__.get(name, MISSING)
            if isinstance(value, (list, dict, set)):
                raise ValueError(f"{cls.__qualname__}.{name}: a mutable default needs a factory")
            f = value if isinstance(value, Field) else Field(default=value)
            f.name = name
            if isinstance(value, Field):  # as dataclasses: the default stays, a factory goes
                if f.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, f.default)
            found[name] = f
        every = tuple(found.values())
        cls.__record_fields__ = every  # type: ignore[attr-defined]
        shown = tuple(f.name for f in every if f.repr)
        compared = tuple(f.name for f in every if f.compare)
        cls.__repr__ = _repr(shown)  # type: ignore[assignment]
        cls.__eq__ = _eq(compared)  # type: ignore[assignment]
        cls.__hash__ = _hash(compared) if hashable else None  # type: ignore[assignment]
        if init_pickle:
            cls.__reduce__ = _reduce(tuple(f.name for f in every))  # type: ignore[assignment]
        return cls

    return make


def _is_classvar(annotation: object) -> bool:
    """`ClassVar[...]`, as a string (`from __future__ import annotations`) or not."""
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or getattr(annotation, "__origin__", None) is ClassVar


def fields(obj: object) -> tuple[Field, ...]:
    """The record's (or record class's) fields, in their order."""
    found = getattr(obj if isinstance(obj, type) else type(obj), "__record_fields__", None)
    if found is None:
        raise TypeError(f"not a record: {obj!r}")
    return found  # type: ignore[no-any-return]


def replace(obj: R, **changes: Any) -> R:
    """A new record of the same class, its fields those of `obj` but for `changes`, made by
    calling the class with every field as a keyword (as `dataclasses.replace` does)."""
    every = fields(obj)
    unknown = set(changes) - {f.name for f in every}
    if unknown:
        raise TypeError(f"{type(obj).__qualname__} has no field {sorted(unknown)[0]!r}")
    values = {f.name: changes[f.name] if f.name in changes else getattr(obj, f.name) for f in every}
    return type(obj)(**values)


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


def _reduce(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    values = _values(names)

    def __reduce__(self: Any) -> tuple[Any, ...]:
        return type(self), values(self)

    return __reduce__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__
