"""The restricted unpickler: plain data in, anything that names a global refused."""

from __future__ import annotations

import collections
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

import pytest

from kb.diagnosis.hangs.unpickle import RefusedPickle, loads_plain

CORPUS = Path(__file__).resolve().parents[2] / "corpora" / "hangs"


@dataclass
class Rank:
    rank: int


class Shell:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.path}",))


def test_plain_containers_and_scalars_load() -> None:
    value = {"a": [1, 2.5, (3, "x")], "b": b"z", "c": None, "d": True, "e": {1, 2}, "f": -7}
    for protocol in range(4, pickle.HIGHEST_PROTOCOL + 1):  # 2 and 3 build sets by a global
        assert loads_plain(pickle.dumps(value, protocol=protocol)) == value


def test_a_class_instance_is_refused_naming_the_class() -> None:
    with pytest.raises(RefusedPickle, match=r"construct \S*test_unpickle\.Rank:"):
        loads_plain(pickle.dumps(Rank(3)))


def test_a_callable_is_never_called(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    data = pickle.dumps(Shell(str(marker)))
    with pytest.raises(RefusedPickle, match=r"construct (posix|os)\.system"):
        loads_plain(data)
    assert not marker.exists()


@pytest.mark.parametrize(
    "value",
    [collections.OrderedDict(a=1), collections.Counter("ab"), range(3), complex(1, 2)],
)
def test_even_harmless_library_classes_are_refused(value: object) -> None:
    with pytest.raises(RefusedPickle, match="construct"):
        loads_plain(pickle.dumps(value))


def test_protocol_2_sets_need_a_global_and_are_refused() -> None:
    with pytest.raises(RefusedPickle, match=r"construct (__builtin__|builtins)\.set"):
        loads_plain(pickle.dumps({1, 2}, protocol=2))


def test_control_characters_in_the_named_global_are_not_echoed() -> None:
    data = b"\x80\x04c\x1b[31mevil\nname\n."
    with pytest.raises(RefusedPickle) as info:
        loads_plain(data)
    assert "\x1b" not in str(info.value)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "ends early"),
        (pickle.dumps([1, 2, 3])[:-3], "truncated"),
        (b"\x80\x04K\x01\xff.", "damaged"),
    ],
)
def test_truncated_or_damaged_pickles_are_refused(data: bytes, why: str) -> None:
    with pytest.raises(RefusedPickle, match=why):
        loads_plain(data)


def test_real_dumps_are_plain_data() -> None:
    dumps = sorted(CORPUS.glob("*/fr_dumps/rank_*"))
    assert len(dumps) >= 12
    for path in dumps:
        obj = loads_plain(path.read_bytes())
        assert isinstance(obj, dict) and isinstance(obj["entries"], list), path
