"""A Python exception whose message the catalogue knows as a failure of its own kind (a
refused or reset connection, an unresolvable host: glibc's errno texts in CPython's
`[Errno N] text` form, a c10d store's `Socket Timeout`) is reported as that failure, with
that failure's causes, not a generic exception's (`generic: true` on python-exception);
an exception the catalogue does not place stays a Python exception."""

from __future__ import annotations

from typing import Any

import pytest

from kb.diagnosis.engine import diagnose_text

TRACEBACK = """\
Traceback (most recent call last):
  File "train.py", line 12, in <module>
    dist.init_process_group("nccl")
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/rendezvous.py", line 155, in _create_c10d_store
    return TCPStore(
{last}
"""
GENERIC_CAUSES = {"code-version-mismatch", "dataset-format", "pythonpath-missing"}


@pytest.mark.parametrize(
    ("last", "symptom"),
    [
        ("ConnectionResetError: [Errno 104] Connection reset by peer", "network-error-reported"),
        ("ConnectionRefusedError: [Errno 111] Connection refused", "network-error-reported"),
        ("socket.gaierror: [Errno -2] Name or service not known", "network-error-reported"),
        ("torch.distributed.DistStoreError: Socket Timeout", "network-error-reported"),
    ],
)
def test_a_traceback_ending_in_a_catalogued_failure_is_that_failure(
    shipped: Any, last: str, symptom: str
) -> None:
    for text in (TRACEBACK.format(last=last), last):  # a whole traceback, and its line pasted
        diag = diagnose_text(shipped, text)
        assert diag.failure is not None, text
        assert diag.failure.symptom == symptom
        assert diag.failure.evidence.text == last
        ids = [c.id for c in diag.causes]
        assert ids and ids[0] not in GENERIC_CAUSES, ids


def test_an_exception_the_catalogue_does_not_place_stays_generic(shipped: Any) -> None:
    last = "ValueError: too many values to unpack (expected 2)"
    diag = diagnose_text(shipped, TRACEBACK.format(last=last))
    assert diag.failure is not None and diag.failure.symptom == "python-exception"
    assert diag.causes[0].id in GENERIC_CAUSES


def test_an_errno_text_that_says_nothing_of_the_kind_stays_generic(shipped: Any) -> None:
    last = "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.txt'"
    diag = diagnose_text(shipped, TRACEBACK.format(last=last))
    assert diag.failure is not None and diag.failure.symptom == "python-exception"


def test_a_taken_address_names_its_cause(shipped: Any) -> None:
    diag = diagnose_text(
        shipped, TRACEBACK.format(last="OSError: [Errno 98] Address already in use")
    )
    assert [c.id for c in diag.causes][:1] == ["port-in-use"]


def test_generic_is_data(shipped: Any) -> None:
    assert shipped.symptoms["python-exception"].failure["generic"] is True
    assert not shipped.symptoms["network-error-reported"].failure["generic"]
