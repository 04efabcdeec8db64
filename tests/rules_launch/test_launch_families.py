"""The launch rules judge a family of messages by its context, not by one wording.

Some launch messages mean a failure only next to another line: `[ ] MXNet` in
`horovodrun --check-build` is normal unless the install asked for MXNet, and a
172.17.x.x address is a Docker bridge problem only when a connection or rendezvous
fails. These tests take real check-build output and real healthy logs, add or remove
the deciding line, and check the diagnosis follows; and they keep every healthy log of
the held-out and shared corpora free of launch causes.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import pytest

from kb import loader
from kb.diagnosis.engine import diagnose_text
from kb.knowledge import KnowledgeBase
from kb.paths import rules_dir

TESTS = Path(__file__).parent.parent
CHECK_BUILD = TESTS / "data" / "logs" / "healthy-horovod-3051-check-build-nccl.log"
SHARED_DEV = Path("/work/shared/corpus/dev")
LAUNCH_CAUSES = {
    "ssh-passwordless-missing",
    "ssh-port-unreachable",
    "docker-network-mode",
    "mpi-launch-failure",
    "mpi-build-deps",
    "horovod-built-without-nccl",
}


@cache
def knowledge() -> KnowledgeBase:
    kb, _ = loader.load(rules_dir())
    return kb


def ranked(text: str) -> list[str]:
    return [c.id for c in diagnose_text(knowledge(), text).causes]


def check_build() -> str:
    if not CHECK_BUILD.exists():
        pytest.skip("no repository test data")
    return CHECK_BUILD.read_text(encoding="utf-8")


def test_an_unchecked_framework_nobody_asked_for_is_not_a_failure() -> None:
    text = check_build()
    assert "    [ ] MXNet" in text
    assert ranked(text) == []
    assert ranked("HOROVOD_WITH_TENSORFLOW=1 pip install horovod[tensorflow]\n" + text) == []


@pytest.mark.parametrize(
    "request_line",
    [
        "$ HOROVOD_WITH_MXNET=1 HOROVOD_GPU_OPERATIONS=NCCL pip install --no-cache-dir horovod",
        "$ pip install --no-cache-dir horovod[mxnet]",
        "import horovod.mxnet as hvd",
    ],
)
def test_an_unchecked_framework_the_job_asked_for_is_a_failed_extension(request_line: str) -> None:
    assert ranked(request_line + "\n" + check_build())[:1] == ["horovod-built-without-nccl"]


def test_an_unchecked_mpi_controller_counts_only_when_mpi_was_requested() -> None:
    text = check_build().replace("    [X] MPI", "    [ ] MPI")
    assert ranked(text) == []
    asked = "$ HOROVOD_WITH_MPI=1 pip install --no-cache-dir horovod\n" + text
    assert ranked(asked)[:1] == ["mpi-build-deps"]


def test_a_bridge_address_alone_is_a_working_single_host_container() -> None:
    line = "e82c50601d13:213:213 [0] NCCL INFO Bootstrap : Using [0]eth0:172.17.0.3<0>\n"
    assert ranked(line * 3) == []
    failed = (
        "e82c50601d13:213:213 [0] include/socket.h:333 NCCL WARN Call to bind failed : "
        "Cannot assign requested address\n"
    )
    assert ranked(line + failed)[:1] == ["docker-network-mode"]


def test_the_docker0_gateway_is_not_read_as_another_container() -> None:
    text = (
        "node2:18553:18611 [0] include/socket.h:360 NCCL WARN Connect to 172.17.0.1<38847> "
        "failed : Connection refused\n"
    )
    assert "docker-network-mode" not in ranked(text)


def _healthy(folder: Path) -> list[Path]:
    labels = folder / "labels.csv"
    if not labels.exists():
        return []
    with open(labels, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["cause_id"].strip() == "none"]
    out = []
    for r in rows:
        for p in (folder / r["file"], folder / "logs" / r["file"]):
            if p.exists():
                out.append(p)
                break
    return out


HEALTHY = _healthy(TESTS / "heldout") + _healthy(SHARED_DEV)


@pytest.mark.parametrize("path", HEALTHY, ids=[p.name for p in HEALTHY])
def test_no_launch_cause_on_a_healthy_log(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    assert not LAUNCH_CAUSES & set(ranked(text))
