"""A realistic multi-rank training log of any size, with real failure lines buried in it.

The shape follows what 32 ranks on 4 nodes print with `NCCL_DEBUG=INFO` under
`mpirun --tag-output`: NCCL initialisation per communicator (versions, interfaces,
channels over P2P and NET/IB), then hours of training progress lines, framework
warnings and periodic NCCL chatter, with the numbers, hosts, ranks and pointers
varying line to line. Near the 60 % mark one rank hits an IB completion error; a few
minutes later every rank's watchdog times out. The expected diagnosis is therefore
nccl-ib-fabric-error, with the generic nccl-timeout-hang below it.
"""

from __future__ import annotations

import random
from pathlib import Path

HOSTS = [f"gpu{n:02d}" for n in range(1, 5)]
RANKS = 32
PER_NODE = 8
FAILURE_AT = 0.6


def _prefix(rank: int) -> str:
    return f"[1,{rank}]<stdout>:"


def _nccl(rank: int, pid: int, tid: int) -> str:
    host = HOSTS[rank // PER_NODE]
    return f"{_prefix(rank)}{host}:{pid}:{tid} [{rank % PER_NODE}] NCCL INFO "


def nccl_init(rng: random.Random, comm: int) -> list[str]:
    """The INFO lines of one communicator's initialisation on every rank."""
    out = []
    commid = f"0x{rng.getrandbits(60):x}"
    for r in range(RANKS):
        pid = 4000 + r * 7 + comm
        p = _nccl(r, pid, pid)
        host = HOSTS[r // PER_NODE]
        ip = f"10.0.0.{11 + r // PER_NODE}"
        out += [
            f"{p}Bootstrap : Using ib0:{ip}<0>",
            f"{p}NET/Plugin: Could not find: libnccl-net.so",
            f"{p}cudaDriverVersion 12040",
            f"{p}NCCL version 2.21.5+cuda12.4",
            f"{p}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:{ip}<0>",
            f"{p}Using network IB",
            f"{p}ncclCommInitRank comm 0x{rng.getrandbits(40):x} rank {r} nranks {RANKS} "
            f"cudaDev {r % PER_NODE} nvmlDev {r % PER_NODE} busId {rng.choice('1a3b5c7d')}000 "
            f"commId {commid} - Init START",
            f"{p}Setting affinity for GPU {r % PER_NODE} to ffff,ffffffff",
            f"{p}comm 0x{rng.getrandbits(40):x} rank {r} nRanks {RANKS} nNodes {len(HOSTS)} "
            f"localRanks {PER_NODE} localRank {r % PER_NODE} MNNVL 0",
        ]
        nxt, prv = (r + 1) % RANKS, (r - 1) % RANKS
        for ch in range(16):
            via = "NET/IB/0/GDRDMA" if nxt // PER_NODE != r // PER_NODE else "P2P/IPC"
            out.append(
                f"{p}Channel {ch:02d}/0 : {r}[{r % PER_NODE}] -> {nxt}[{nxt % PER_NODE}] via {via}"
            )
            via = "NET/IB/0/GDRDMA" if prv // PER_NODE != r // PER_NODE else "P2P/IPC"
            out.append(
                f"{p}Channel {ch:02d}/0 : {prv}[{prv % PER_NODE}] -> {r}[{r % PER_NODE}] via {via}"
            )
        out += [
            f"{p}Connected all rings",
            f"{p}Connected all trees",
            f"{p}threadThresholds 8/8/64 | 256/8/64 | 512 | 512",
            f"{p}32 coll channels, 32 collnet channels, 0 nvls channels, 32 p2p channels",
            f"{p}ncclCommInitRank comm 0x{rng.getrandbits(40):x} rank {r} nranks {RANKS} "
            f"cudaDev {r % PER_NODE} busId 1a000 commId {commid} - Init COMPLETE",
            f"{host}:{pid}:{pid} [{r % PER_NODE}] NCCL INFO Init timings: rank {r} nranks "
            f"{RANKS} total {rng.random():.2f}",
        ]
    return out


WARNINGS = [
    "/opt/conda/lib/python3.10/site-packages/torch/optim/lr_scheduler.py:139: UserWarning: "
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`.",
    "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py:557: UserWarning: "
    "This DataLoader will create 16 worker processes in total.",
    "[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified in DDP constructor, "
    "but did not find any unused parameters in the forward pass.",
]


def progress_line(rng: random.Random, rank: int, epoch: int, it: int) -> str:
    t = 0.28 + rng.random() * 0.05
    return (
        f"{_prefix(rank)}2026-11-29 {10 + epoch % 10:02d}:{it % 60:02d}:{rng.randrange(60):02d},"
        f"{rng.randrange(1000):03d} - mmdet - INFO - Epoch [{epoch}][{it}/5000]\t"
        f"lr: {0.1 * rng.random():.3e}, eta: {rng.randrange(24)}:{rng.randrange(60):02d}:"
        f"{rng.randrange(60):02d}, time: {t:.3f}, data_time: {rng.random() * 0.02:.3f}, "
        f"memory: {10000 + rng.randrange(4000)}, loss_cls: {rng.random():.4f}, "
        f"loss_bbox: {rng.random():.4f}, loss: {rng.random() * 3:.4f}, "
        f"grad_norm: {rng.random() * 10:.4f}"
    )


def failure_lines(rng: random.Random) -> list[str]:
    r = 19
    p = f"{_prefix(r)}{HOSTS[r // PER_NODE]}:4133:4190 [{r % PER_NODE}]"
    return [
        f"{p} transport/net_ib.cc:1695 NCCL WARN NET/IB : Got completion from peer 10.0.0.12"
        f"<48821> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.13 "
        f"remoteGids::ffff:10.0.0.12 hca mlx5_0",
        f"{p} NCCL INFO transport/net.cc:1298 -> 6",
        f"{p} NCCL INFO proxy.cc:698 -> 6",
    ]


def timeout_lines(rng: random.Random) -> list[str]:
    return [
        f"{_prefix(r)}[rank{r}]:[E1129 14:21:{10 + r:02d}.{rng.randrange(10**6):06d} "
        f"ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum=183221, OpType=ALLREDUCE, NumelIn=25557032, NumelOut=25557032, "
        f"Timeout(ms)=600000) ran for 600{rng.randrange(1000):03d} milliseconds before timing out."
        for r in range(RANKS)
    ]


def generate(path: Path, size_bytes: int, seed: int = 7) -> Path:
    """Write a log of about `size_bytes` to `path` (reused when it already has that size)."""
    if path.exists() and abs(path.stat().st_size - size_bytes) < size_bytes * 0.05:
        return path
    rng = random.Random(seed)
    tmp = path.with_suffix(".part")
    written = 0
    failed = False
    epoch = it = 0
    with open(tmp, "w", encoding="utf-8", buffering=1 << 20) as fh:
        for comm in range(3):
            block = "\n".join(nccl_init(rng, comm)) + "\n"
            fh.write(block)
            written += len(block)
        while written < size_bytes:
            lines = []
            for _ in range(2000):
                it = (it + 1) % 5000
                epoch += it == 0
                lines.append(progress_line(rng, rng.randrange(RANKS), epoch, it))
                if rng.random() < 0.002:
                    lines.append(_prefix(rng.randrange(RANKS)) + rng.choice(WARNINGS))
            if rng.random() < 0.01:
                lines += nccl_init(rng, 3)[: rng.randrange(50, 400)]
            if not failed and written >= FAILURE_AT * size_bytes:
                lines += failure_lines(rng)
                failed = True
            text = "\n".join(lines) + "\n"
            fh.write(text)
            written += len(text)
        fh.write("\n".join(timeout_lines(rng)) + "\n")
    tmp.replace(path)
    return path


def generate_flood(path: Path, size_bytes: int, seed: int = 11) -> Path:
    """An sshd log of about `size_bytes`: scanners make sshd print a million
    `kex_exchange_identification: Connection closed by remote host` lines, which a rule
    looks for on the *client* side and vetoes (`unless`, scope line) on sshd's lines.
    One client line near the end must still be found. The stress test for a signature
    whose line veto rejects every line its matcher fires on."""
    if path.exists() and abs(path.stat().st_size - size_bytes) < size_bytes * 0.05:
        return path
    rng = random.Random(seed)
    tmp = path.with_suffix(".part")
    written, placed = 0, False
    with open(tmp, "w", encoding="utf-8", buffering=1 << 20) as fh:
        while written < size_bytes:
            lines = []
            for _ in range(5000):
                t = f"Nov 29 {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
                pid = rng.randrange(1000, 99999)
                if rng.random() < 0.8:
                    lines.append(
                        f"{t} gw sshd[{pid}]: error: kex_exchange_identification: "
                        "Connection closed by remote host"
                    )
                else:
                    lines.append(
                        f"{t} gw sshd[{pid}]: Connection closed by {rng.randrange(1, 255)}."
                        f"{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)} port "
                        f"{rng.randrange(1024, 65535)} [preauth]"
                    )
            if not placed and written >= 0.9 * size_bytes:
                lines.append("kex_exchange_identification: Connection closed by remote host")
                placed = True
            text = "\n".join(lines) + "\n"
            fh.write(text)
            written += len(text)
    tmp.replace(path)
    return path
