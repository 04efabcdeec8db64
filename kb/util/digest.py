"""BLAKE2b for the caches' keys, without `hashlib`'s start-up.

`hashlib.blake2b` is `_blake2.blake2b` itself (hashlib never takes BLAKE2 from OpenSSL),
but importing hashlib also loads OpenSSL's `_hashlib`, a few milliseconds that every
`diagnose` of a pasted log paid for nothing. A Python built without `_blake2` falls back
to hashlib: the digests are the same either way.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - CPython always has it
    from hashlib import blake2b

__all__ = ["blake2b"]
