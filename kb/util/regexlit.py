"""Literal text as a regex that RE2 and hyperscan both read the same way.

Its own module so that the catalogue can build its templates without importing the
scanner (and RE2 and hyperscan with it)."""

from __future__ import annotations

_PUNCT = set("\\.^$|?*+()[]{}-/#&~!\"%',:;<=>@`")


def literal(text: str) -> str:
    """`text` as a regex that matches it literally (RE2 and hyperscan alike)."""
    out = []
    for ch in text:
        if ch in _PUNCT:
            out.append("\\" + ch)
        elif ch.isascii() and not ch.isprintable():
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)
