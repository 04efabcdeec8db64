"""A failed connection to an address no other node can have (kb.diagnosis.analyzers.
virtual_peers), in any library's wording: the docker0 gateway in UCX (openucx/ucx#9383),
a link-local address in NCCL's socket retries (aws-samples/aws-do-eks#54), a container's
bridge address; the same addresses in lines that do not fail say nothing."""

from __future__ import annotations

from typing import Any

import pytest

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from tests import corpora_loader as corpora


@pytest.mark.parametrize(
    ("line", "cause", "address"),
    [
        (
            "[1695675466.657697] [histamine1:7221 :0]            sock.c:323  UCX  ERROR   "
            "connect(fd=43, dest_addr=172.17.0.1:60657) failed: Connection refused",
            "mpi-launch-failure",
            "172.17.0.1",
        ),
        (
            "socketPollConnect: connect to 169.254.170.23<45123> returned Connection refused, "
            "retrying (13/34)",
            "nccl-wrong-interface",
            "169.254.170.23",
        ),
        (
            "[E socket.cpp:860] [c10d] The client socket has timed out after 900s while trying "
            "to connect to (192.168.122.1, 29500).",
            "nccl-wrong-interface",
            "192.168.122.1",
        ),
        (
            "RuntimeError: Gloo connectFullMesh failed with connect to 172.17.0.3:41277 failed: "
            "Connection refused",
            "docker-network-mode",
            "172.17.0.3",
        ),
    ],
)
def test_a_failed_connection_to_an_unreachable_address(
    shipped: Any, line: str, cause: str, address: str
) -> None:
    diag = diagnose_text(shipped, line + "\n")
    named = {c.id: c for c in diag.causes}
    assert cause in named, [c.id for c in diag.causes]
    assert named[cause].params["address"] == address


def test_the_same_addresses_where_nothing_fails_say_nothing(shipped: Any) -> None:
    ok = (
        "node1:12:34 [0] NCCL INFO NET/Socket : Using [0]docker0:172.17.0.1<0>\n"
        "node1:12:34 [0] NCCL INFO Bootstrap : Using eth0:169.254.3.4<0>\n"
    )
    assert not any(
        c.id == "nccl-wrong-interface" and "address" in c.params
        for c in diagnose_text(shipped, ok).causes
    )


def test_gate_batch_2026_12_02d_ucx_on_docker0(shipped: Any) -> None:
    log = corpora.path(
        "batch-2026-12-02d", "c-mpi-launch-failure-ucx-9383-docker0-address-refused.log"
    )
    diag = diagnose_paths(shipped, [log])
    assert [c.id for c in diag.causes][:1] == ["mpi-launch-failure"]
