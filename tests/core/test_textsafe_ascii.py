"""`safe` returns printable ASCII (with tabs and newlines) as it is without compiling its
pattern, and that shortcut gives what the long way gives, for every ASCII character."""

from __future__ import annotations

import random

from kb.util import textsafe
from kb.util.textsafe import safe


def test_every_ascii_character_is_treated_as_the_long_way_treats_it() -> None:
    for code in range(128):
        for text in (chr(code), f"a{chr(code)}b\n", f"\t{chr(code)}\r\n"):
            for keep_sgr in (False, True):
                assert safe(text, keep_sgr=keep_sgr) == textsafe._safe(text, keep_sgr), repr(text)


def test_random_ascii_texts_agree_and_controls_never_pass() -> None:
    rng = random.Random(13)
    alphabet = [chr(c) for c in range(128)] + ["\x1b[31m", "\x1b]0;t\x07", "\r\n"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert safe(text) == textsafe._safe(text, False), repr(text)
        assert "\x1b" not in safe(text) and "\x00" not in safe(text)
    plain = "OSError: libcudart.so.10.1: cannot open\n\tshared object file"
    assert safe(plain) is plain  # nothing to do: the same string back
