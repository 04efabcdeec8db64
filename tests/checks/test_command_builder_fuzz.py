"""Fuzzing the command builder: whatever the values, after `shlex.split` of the filled
command each value is exactly one whole word where its placeholder was, or the builder
refused it with a one-line ValueError naming the placeholder."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.rules.placeholders import fill_command, show_command
from kb.rules.schema.models import ParamDoc
from kb.rules.valuekinds import KINDS

NAMES = ("a", "b", "c")
SHELLISH = st.sampled_from(list("$`'\"\\;&|<>(){}[]*?!#~=%-+,:./ \n\t\r\x00\x1b") + ["ü", "\u202e"])
VALUES = st.text(alphabet=st.one_of(SHELLISH, st.characters(codec="utf-8")), max_size=60)


@settings(max_examples=200, deadline=None)
@given(
    values=st.tuples(VALUES, VALUES, VALUES),
    kinds=st.tuples(*[st.sampled_from(KINDS)] * 3),
    prefix=st.sampled_from(["", "x=", "--opt=", "-p", "pre:"]),
)
def test_every_value_is_one_whole_word_or_refused(
    values: tuple[str, str, str], kinds: tuple[str, str, str], prefix: str
) -> None:
    declared = {n: ParamDoc(description="-", kind=k) for n, k in zip(NAMES, kinds, strict=True)}  # type: ignore[arg-type]
    given_values = dict(zip(NAMES, values, strict=True))
    template = f"cmd {{a}} -x {prefix}{{b}} -- {{c}}; echo {{{{done}}}}"
    try:
        filled = fill_command(template, given_values, declared)
    except ValueError as exc:
        message = str(exc)
        assert message.startswith(("{a}: ", "{b}: ", "{c}: ")) and "\n" not in message
        return
    words = shlex.split(filled.split("; echo ")[0])
    assert words == ["cmd", values[0], "-x", prefix + values[1], "--", values[2]]
    assert filled.endswith("; echo {done}")
    shown = show_command(template, given_values, declared)
    assert shown == filled  # what the user is shown is what runs
