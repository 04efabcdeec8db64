"""Real wordings of the NCCL/IB/GPU message families, beyond the ones the rules were first
written from, each give their cause first; healthy look-alikes give none.

The logs of `corpora/dev-nccl` are excerpts of public threads (sources in its `labels.csv`):
UCX and Open MPI wordings of an IB completion error, Open MPI's memlock help text, the
PyTorch heartbeat monitor, CUDA's old `invalid device ordinal` codes and nccl-tests'
`Test CUDA failure ... 'invalid device ordinal'`, CUDA error 217 (peer access) and 802
(fabric manager) in their runtime, driver and NCCL wordings, link-time NCCL errors,
statements that a job works with `NCCL_P2P_DISABLE=1`, missing libibverbs providers,
NCCL RAS reporting ranks that diverged, Gloo peers told to connect to loopback. The
healthy ones carry the same words in a run that works (a single-node Gloo loopback
fallback, GeForce GPUs without P2P, an RCCL warning in a completed test, an unlimited
memlock, and TCP-only or single-node runs printing `NET/IB : No device found`, an RDMA
plugin with no HCA, or NCCL's RAS port already bound). They go through the engine's API,
one log at a time.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from kb.authoring.checked import load_kb
from kb.diagnosis.engine import diagnose_paths
from tests import corpora_loader as corpora

CORPUS = "dev-nccl"


def rows() -> list[tuple[str, str]]:
    return [(r.file, r.cause_id) for r in corpora.rows(CORPUS)]


@cache
def knowledge() -> Any:
    return load_kb()


def cause_ids(name: str) -> list[str]:
    return [c.id for c in diagnose_paths(knowledge(), [corpora.path(CORPUS, name)]).causes]


@pytest.mark.parametrize(("name", "want"), rows(), ids=[r[0] for r in rows()])
@pytest.mark.slow
def test_each_family_log_gives_its_cause_first_or_none_when_healthy(name: str, want: str) -> None:
    ids = cause_ids(name)
    if want == "none":
        assert ids == []
    else:
        assert ids[:1] == [want], ids


def test_every_family_log_is_labelled() -> None:
    labelled = {name for name, _ in rows()}
    present = {p.name for p in corpora.logs(CORPUS)}
    assert present == labelled
