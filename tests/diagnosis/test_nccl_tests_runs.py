"""nccl-tests run once per process (kb.diagnosis.analyzers.nccl_tests_runs ->
benchmark-misconfig): real logs where several single-process tests were written together,
and real runs where one test printed its table once (silent)."""

from __future__ import annotations

from typing import Any

import pytest

from kb.diagnosis.engine import diagnose_paths
from tests import corpora_loader as corpora


@pytest.mark.parametrize(
    ("corpus", "name", "signature"),
    [
        # NVIDIA/nccl-tests#109: `mpirun -np 2 ./all_reduce_perf -g 6`, two headers first
        (
            "batch-2026-12-02",
            "b-benchmisconfig-nccltests-109-standalone-per-host-no-mpi.log",
            "nccl-tests-runs/header",
        ),
        # NVIDIA/nccl-tests#182: two tables interleaved, each size twice in a row
        (
            "batch-2026-12-01e",
            "bench-nccltests-182-two-separate-results-not-built-with-mpi.log",
            "nccl-tests-runs/row",
        ),
        # NVIDIA/nccl-tests#294: a 16-rank mpirun whose every size is printed twice
        ("batch-2026-12-01f", "bench-nccltests-294-busbw-zero.log", "nccl-tests-runs/row"),
    ],
    ids=["two-headers", "rows-twice", "busbw-zero"],
)
def test_gate_batches_each_process_ran_its_own_test(
    shipped: Any, corpus: str, name: str, signature: str
) -> None:
    diag = diagnose_paths(shipped, [corpora.path(corpus, name)])
    assert [c.id for c in diag.causes] == ["benchmark-misconfig"]
    assert {e.signature for e in diag.causes[0].evidence} == {signature}


def test_gate_healthy_a_table_that_starts_at_size_zero_is_one_run(shipped: Any) -> None:
    # EKS EFA mpijob: `-b 0` prints size 0 twice; one run, nothing wrong
    log = corpora.path(
        "batch-2026-11-30a", "healthy-eks-efa-nccltests-mpijob-ssh-known-hosts-warning.log"
    )
    assert diagnose_paths(shipped, [log]).causes == []


def test_sequential_runs_are_not_concurrent_ones(shipped: Any) -> None:
    from kb.diagnosis.engine import diagnose_text

    run = (
        "# nThread 1 nGpus 2 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
        "           8             2     float     sum      -1    10.11    0.00    0.00      0    10.01    0.00    0.00      0\n"
        "          16             4     float     sum      -1    10.12    0.00    0.00      0    10.02    0.00    0.00      0\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 0.00123\n"
    )
    assert diagnose_text(shipped, run + run).causes == []
