"""Which causes an NCCL error's kind points at, among a bare error's candidates.

A trait `err-<kind>` makes NCCL's error of that kind point at a cause (x2.5); a cause
NCCL reports with that kind only in some setups or versions carries `err-<kind>-at-times`
(x1: neither raised nor lowered), a cause it never does gets the observation's
`otherwise` (x0.6). InfiniBand missing is mostly a silent fall-back to sockets (cause-ids:
"NCCL falls back to sockets"): an internal error is its kind only when the IB user space
is half there (nccl-tests#41, a provider library missing), while a bootstrap without a
usable interface fails init with it (NVIDIA/nccl#1837); NCCL 2.2x reports both a missing
socket interface and a missing NET plugin as invalid usage, the classic kind of ranks
sharing a GPU.
"""

from __future__ import annotations

from kb.diagnosis.compiled import ensure_compiled
from kb.diagnosis.engine import diagnose_text

# https://github.com/NVIDIA/nccl-tests/issues/166 (its title)
INTERNAL = (
    "Test NCCL failure common.cu:958 'internal error - please report this issue to the NCCL "
    "developers / '"
)
# https://github.com/vllm-project/vllm/issues/7548 (its title)
INVALID_USAGE = "[Bug]: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)"


def _ids(rules, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.id for c in diagnose_text(rules, text + "\n").causes]


def test_a_bare_internal_error_points_at_the_interface_before_missing_ib(shipped) -> None:
    ids = _ids(shipped, INTERNAL)
    assert ids[0] == "nccl-wrong-interface", ids
    why = {c.id: c.explanation for c in diagnose_text(shipped, INTERNAL + "\n").causes}
    assert "internal error: x2.5" in why["nccl-wrong-interface"]


def test_missing_ib_is_neither_raised_nor_lowered_by_an_internal_error(shipped) -> None:
    rules = ensure_compiled(shipped)
    traits = rules.causes["nccl-ib-missing"].traits
    assert "err-internal-at-times" in traits and "err-internal" not in traits
    assert rules.vocabulary.traits["err-internal-at-times"] == {"nccl-error-internal": 1.0}


def test_a_bare_invalid_usage_still_points_at_ranks_sharing_a_gpu(shipped) -> None:
    diag = diagnose_text(shipped, INVALID_USAGE + "\n")
    assert diag.causes[0].id == "gpu-rank-mapping", [c.id for c in diag.causes]
    # the interface and the NET plugin are reported so too, but they are not its kind
    rules = ensure_compiled(shipped)
    for cid in ("nccl-wrong-interface", "nccl-ib-missing"):
        assert "err-invalid-usage-at-times" in rules.causes[cid].traits, cid


def test_ib_found_missing_lifts_missing_ib_over_the_interface(shipped) -> None:
    # NCCL 2.28 on a host without IB but NCCL_NET=IB (the project's 2xH200 capture,
    # corpora/dev/h200-nccl-net-ib-no-device.log): the no-device line and invalid usage
    text = (
        "vm:975:975 [1] NCCL INFO NET/IB : No device found.\n"
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/"
        "distributed/c10d/NCCLUtils.cpp:93, invalid usage (run with NCCL_DEBUG=WARN for "
        "details), NCCL version 2.28.9"
    )
    ids = _ids(shipped, text)
    assert "nccl-ib-missing" in ids[:1], ids
