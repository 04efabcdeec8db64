"""A module-level regex compiled the first time it is used.

Why it exists: compiling a regex costs 0.1-1 ms, and a module of the diagnose path holds
up to thirty that a small log never needs (secrets only in some texts, the RAS report's
grammar only for a RAS report). `LazyPattern` stands where the `re.compile(...)` stood and
is used the same way (`.search`, `.sub`, ...); the first call compiles, and from then on
each method is the compiled pattern's own (bound into the instance), so it costs no more
than the pattern itself; its code comes from `kb.util.recache`, compiled once per user.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, AnyStr, Generic

from kb.util import recache

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern(Generic[AnyStr]):
    """`re.compile(pattern, flags)`, compiled on first use."""

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern: AnyStr = pattern
        self.flags = flags

    def compiled(self) -> re.Pattern[AnyStr]:
        """The compiled pattern; each method of this object is its own from now on."""
        rx = recache.compile(self.pattern, self.flags)
        self.__dict__.update({name: getattr(rx, name) for name in _METHODS})
        self.__dict__["compiled"] = lambda: rx
        return rx

    @property
    def groups(self) -> int:
        return self.compiled().groups

    # each method compiles once and hands over to the compiled pattern's

    def search(
        self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[AnyStr] | None:
        return self.compiled().search(string, pos, endpos)

    def match(
        self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[AnyStr] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(
        self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[AnyStr] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(
        self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[AnyStr]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(
        self,
        repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr],
        string: AnyStr,
        count: int = 0,
    ) -> AnyStr:
        return self.compiled().sub(repl, string, count)

    def subn(
        self,
        repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr],
        string: AnyStr,
        count: int = 0,
    ) -> tuple[AnyStr, int]:
        return self.compiled().subn(repl, string, count)

    def split(self, string: AnyStr, maxsplit: int = 0) -> list[AnyStr | Any]:
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"
