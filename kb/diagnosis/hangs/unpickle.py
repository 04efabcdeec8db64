"""A pickle reader that builds plain data only: a Flight Recorder dump is data, not code.

`pickle.load` runs whatever callable a pickle names (`os.system`, any class). Here
`find_class` refuses every global and `persistent_load` every persistent id, so only
what the pickle opcodes build by themselves comes out: dicts, lists, tuples, sets,
str, bytes, numbers, booleans and None.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

MAX_BYTES = 512 * 1024 * 1024  # a dump of 20 000 entries with stacks is tens of MB


class RefusedPickle(Exception):
    """The pickle is not plain data or not whole; the message is one line."""


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise RefusedPickle(
            f"the pickle asks to construct {printable(module)}.{printable(name)}: "
            "a Flight Recorder dump holds "
            "only plain data, so it is refused"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise RefusedPickle("the pickle refers to a persistent object: refused")


def printable(text: str, limit: int = 80) -> str:
    """`text` without control characters, cut to `limit`: it comes from the file."""
    return "".join(c if c.isprintable() else "?" for c in str(text)[:limit])


def loads_plain(data: bytes) -> Any:
    """The object a pickle of plain data holds; `RefusedPickle` for anything else."""
    if len(data) > MAX_BYTES:
        raise RefusedPickle(f"{len(data)} bytes: larger than a Flight Recorder dump can be")
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except RefusedPickle:
        raise
    except EOFError:
        raise RefusedPickle("the pickle ends early (truncated dump)") from None
    except (pickle.UnpicklingError, ValueError, TypeError, IndexError, KeyError) as exc:
        if "truncated" in str(exc):
            raise RefusedPickle("the pickle ends early (truncated dump)") from None
        raise RefusedPickle(f"damaged pickle ({type(exc).__name__}: {exc})"[:200]) from None
    except (MemoryError, RecursionError):
        raise RefusedPickle("the pickle nests or grows beyond reason: refused") from None
