"""Rules over the survey's facts: NCCL, hostnames, OFED/IB, limits, versions, driver, GPUs.

Each compares a fact across nodes (a difference is the finding) or reads one node
alone (a 64 MB /dev/shm, an HCA without its verbs device, a CUDA runtime newer
than the driver) and records a finding (`kb.cluster.findings`, defined in
rules/vocabulary/findings.yaml) with evidence in the `CauseBook`; the rules' `named_by`
say which causes it names.
"""

from __future__ import annotations

import re
from typing import Any

from kb.cluster.findings import Finding
from kb.cluster.report.causes import CauseBook
from kb.cluster.report.compare import Report, Row, show
from kb.cluster.report.load import Node
from kb.cluster.report.rulekit import Pairs, diff_finding, ev, spread
from kb.sysinfo import topology

SHM_MIN = 1 << 30  # NCCL needs far more than docker's default 64 MB


def _nccl(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    for fact, label in (
        ("nccl_version", "the NCCL the framework loads"),
        ("nccl_system_version", "the system libnccl"),
    ):
        diff_finding(
            Finding.NCCL_VERSION_DIFFERS,
            0.9,
            fact,
            f"{label} differs between nodes; NCCL must be the same version on every rank",
        )(nodes, rows, book, notes, report)


def _same_machine(a: Node, b: Node) -> bool | None:
    """Same network identity (shared MACs), or else the same boot id; None when unknown.

    Two containers of one host with their own network namespaces count as two nodes:
    NCCL would still take them for one (same hostname, same boot id).
    """

    def macs(n: Node) -> set[str]:
        return {
            i.get("mac")
            for i in n.facts.get("interfaces") or []
            if i.get("mac") and i.get("kind") != "loopback" and set(i["mac"]) - {"0", ":"}
        }

    ma, mb = macs(a), macs(b)
    if ma and mb:
        return bool(ma & mb)
    ba, bb = a.facts.get("boot_id"), b.facts.get("boot_id")
    if ba and bb:
        return bool(ba == bb)
    return None


def _hostnames(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    groups: dict[str, Pairs] = {}
    for name, n in nodes:
        if n.facts.get("hostname"):
            groups.setdefault(str(n.facts["hostname"]).lower(), []).append((name, n))
    for host, members in groups.items():
        if len(members) < 2:
            continue
        first = members[0][1]
        distinct = [m for m in members[1:] if _same_machine(first, m[1]) is not True]
        if not distinct:
            notes.append(
                {
                    "id": "same-node-twice",
                    "text": f"{', '.join(m[0] for m in members)} "
                    f"look like the same machine (same interfaces or boot id) surveyed twice.",
                    "evidence": [ev(m[0], m[1], "hostname", f"hostname = {host}") for m in members],
                }
            )
            continue
        row = rows["hostname"]
        row.differs = True
        boots = {m[1].facts.get("boot_id") for m in members}
        params = {"hostname": host, "nodes": ", ".join(m[0] for m in members)}
        if len(boots) == 1 and None not in boots:
            params["why"] = (
                "one kernel, separate networks: containers of one host that share a "
                "hostname; NCCL takes them for one node (shared memory, P2P)"
            )
        book.found(
            Finding.HOSTNAME_DUPLICATE,
            0.95,
            [ev(m[0], m[1], "hostname", f"hostname = {m[1].facts['hostname']}") for m in members],
            params,
        )


def ib_active(n: Node) -> bool:
    return any(p.get("state") == "ACTIVE" for p in n.facts.get("ib_devices") or [])


def _ofed_and_ib(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    diff_finding(
        Finding.OFED_VERSION_DIFFERS,
        0.6,
        "ofed_version",
        "OFED differs between nodes; inside a container it must not be newer than the "
        "host's, else IB is not used and NCCL falls back to sockets",
    )(nodes, rows, book, notes, report)
    with_ib = [name for name, n in nodes if ib_active(n)]
    if with_ib and len(with_ib) < len(nodes):
        lacking = [(name, n) for name, n in nodes if name not in with_ib]
        book.found(
            Finding.IB_INACTIVE_ON_SOME_NODES,
            0.8,
            [
                ev(name, n, "ib_devices", f"ib_devices = {show(n.facts.get('ib_devices'))}")
                for name, n in lacking
            ],
            {
                "nodes": ", ".join(name for name, _ in lacking),
                "why": "these nodes have no active IB port while " + ", ".join(with_ib) + " do",
            },
        )
    for name, n in nodes:
        if (
            ib_active(n)
            and n.facts.get("ib_verbs_devices") is not None
            and not any(str(d).startswith("uverbs") for d in n.facts.get("ib_verbs_devices") or [])
        ):
            book.found(
                Finding.IB_VERBS_DEVICE_MISSING,
                0.7,
                [
                    ev(
                        name,
                        n,
                        "ib_verbs_devices",
                        "the HCA is active but /dev/infiniband has "
                        f"no uverbs device ({show(n.facts.get('ib_verbs_devices'))})",
                    )
                ],
                {
                    "nodes": name,
                    "why": "HCA visible, verbs device missing: start the "
                    "container with --device=/dev/infiniband (or --privileged)",
                },
            )


def _limits(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    memlock_named: list[str] = []
    for name, n in nodes:
        shm = n.facts.get("shm_size_bytes")
        if isinstance(shm, int) and shm < SHM_MIN:
            differs = bool(rows.get("shm_size_bytes") and rows["shm_size_bytes"].differs)
            book.found(
                Finding.SHM_TOO_SMALL,
                0.75 if differs else 0.6,
                [ev(name, n, "shm_size_bytes", f"/dev/shm is {shm / 2**20:.0f} MiB")],
                {"nodes": name, "shm_size_bytes": str(shm)},
            )
        lock = n.facts.get("memlock_limit")
        if isinstance(lock, int) and (n.facts.get("ib_devices") or ib_active(n)):
            memlock_named += book.found(
                Finding.MEMLOCK_LIMIT_ON_IB_NODE,
                0.7,
                [ev(name, n, "memlock_limit", f"ulimit -l = {lock} KiB on a node with IB")],
                {"nodes": name, "memlock_limit": str(lock)},
            )
    row = rows.get("memlock_limit")
    if row and row.differs and not memlock_named:
        notes.append(
            {
                "id": "memlock-differs",
                "text": f"ulimit -l differs: {spread(row)} (matters once RDMA is used).",
                "evidence": [],
            }
        )


def _software(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    for fact in (
        "torch_version",
        "tensorflow_version",
        "paddle_version",
        "mxnet_version",
        "horovod_version",
        "python_version",
        "cudnn_version",
    ):
        diff_finding(
            Finding.FRAMEWORK_VERSION_DIFFERS,
            0.6,
            fact,
            "framework versions must match on every node",
        )(nodes, rows, book, notes, report)
    diff_finding(
        Finding.OPENMPI_VERSION_DIFFERS,
        0.6,
        "openmpi_version",
        "mpirun starts orted on every node: mixed Open MPI versions (or none) fail",
    )(nodes, rows, book, notes, report)
    for name, n in nodes:
        if n.facts.get("horovod_nccl") is False:
            build = n.facts.get("horovod_build") or {}
            book.found(
                Finding.HOROVOD_WITHOUT_NCCL_OPS,
                0.85,
                [
                    ev(
                        name,
                        n,
                        "horovod_nccl",
                        "horovodrun --check-build lists no NCCL "
                        f"operations (operations: {', '.join(build.get('operations') or []) or 'none'})",
                    )
                ],
                {"nodes": name},
            )


def _version(v: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", str(v))[:3])


def _driver(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    for name, n in nodes:
        need, have = n.facts.get("torch_cuda_version"), n.facts.get("cuda_version")
        if need and have and _version(need)[:2] > _version(have)[:2]:
            book.found(
                Finding.CUDA_NEWER_THAN_DRIVER,
                0.8,
                [
                    ev(
                        name,
                        n,
                        "cuda_version",
                        f"PyTorch is built for CUDA {need}; the driver supports up to CUDA {have}",
                    )
                ],
                {"nodes": name},
            )
    for fact in ("driver_version", "cuda_version"):
        row = rows.get(fact)
        if row and row.differs:
            notes.append(
                {
                    "id": f"{fact}-differs",
                    "text": f"{fact} differs: {spread(row)}.",
                    "evidence": [],
                }
            )


def _gpus(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    diff_finding(
        Finding.GPU_COUNT_DIFFERS,
        0.4,
        "gpu_count",
        "a launcher that starts the same number of ranks per node oversubscribes the "
        "node with fewer GPUs",
    )(nodes, rows, book, notes, report)
    row = rows.get("gpu_model")
    if row and row.differs:
        notes.append(
            {
                "id": "gpu-model-differs",
                "text": f"GPU models differ ({spread(row)}): a "
                "synchronous job runs at the pace of the slowest.",
                "evidence": [],
            }
        )


def _topology(
    nodes: Pairs, rows: dict[str, Row], book: CauseBook, notes: list[dict[str, Any]], report: Report
) -> None:
    topos = {
        name: topology.Topology.from_json(n.facts["gpu_topology"])
        for name, n in nodes
        if isinstance(n.facts.get("gpu_topology"), dict)
    }
    for name, n in nodes:
        topo = topos.get(name)
        for f in topo.findings() if topo else []:
            if f.severity == "slow":
                book.found(
                    Finding.GPU_LINK_SLOW,
                    0.5,
                    [ev(name, n, "gpu_topology", f.text)],
                    {"nodes": name},
                )
    row = rows.get("gpu_topology")
    if row and row.differs and len(topos) > 1:
        ref_name = max(
            topos,
            key=lambda k: (
                -sum(
                    topology.rank(topos[k].link(a, b)) for a in topos[k].gpus for b in topos[k].gpus
                )
            ),
        )
        for name, topo in topos.items():
            diff = topology.differences(topos[ref_name], topo)
            if diff and name != ref_name:
                text = "; ".join(f"{a}-{b}: {x} on {ref_name}, {y} here" for a, b, x, y in diff[:4])
                book.found(
                    Finding.GPU_TOPOLOGY_DIFFERS,
                    0.5,
                    [ev(name, dict(nodes)[name], "gpu_topology", text)],
                    {"nodes": name},
                )


RULES = (_nccl, _hostnames, _ofed_and_ib, _limits, _software, _driver, _gpus, _topology)
