"""A pasted error whose catalogued message says what failed but not why (NCCL's
`socketFinalizeAccept: wrong type`, a UCX transport error) is a failure, with the
likeliest causes of that kind of failure (`basis: symptom`); the same messages in a run
that goes on (NCCL's WARN about libibverbs on a node without InfiniBand) are not."""

from __future__ import annotations

from pathlib import Path

from kb.diagnosis.engine import diagnose_paths, diagnose_text

ROOT = Path(__file__).resolve().parents[2]


def test_pasted_socket_error_is_a_network_failure(shipped) -> None:
    # hiyouga/LLaMA-Factory#3641 (the title, in Chinese around the NCCL message)
    line = (
        "多机多卡训练，在运行程序时，出现了socketFinalizeAccept: wrong type 3 != 4错误。"
        "但是如果我在运行时指定NCCL_IB_DISABLE=1，那么程序就可以正常运行。"
    )
    diag = diagnose_text(shipped, line)
    assert diag.failure is not None
    assert diag.failure.symptom == "network-error-reported"
    ids = [c.id for c in diag.causes]
    assert "nccl-ib-missing" in ids[:3]
    assert all(c.basis in ("symptom", "approximate") for c in diag.causes)
    assert diag.to_json()["failure"]["kind"] == "exception"


def test_same_kind_of_message_in_a_run_that_goes_on_is_no_failure(shipped) -> None:
    log = ROOT / "corpora/healthy/dev/healthy-nccl-tests-82-broadcast-tcp-ib-disabled.log"
    diag = diagnose_paths(shipped, [log])
    assert diag.failure is None and diag.causes == []


def test_pasted_only_is_data(shipped) -> None:
    spec = shipped.symptoms["network-error-reported"].failure
    assert spec["pasted_only"] is True and "connection-failure" in spec["catalogue"]
