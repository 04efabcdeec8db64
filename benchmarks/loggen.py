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


# ---------------------------------------------------------------- INFO-dense


DENSE_HOSTS = [f"node{n:03d}" for n in range(8)]
DENSE_RANKS = 64


def _dense_prefix(rank: int, pid: int, tid: int) -> str:
    host = DENSE_HOSTS[rank // PER_NODE]
    return f"[1,{rank}]<stdout>:{host}:{pid}:{tid} [{rank % PER_NODE}] NCCL INFO "


def dense_init(rng: random.Random, comm: int, rank: int) -> list[str]:
    """One rank's INFO lines for one communicator, in the shapes NCCL 2.18-2.21 prints
    (corpora/dev, corpora/healthy/batch-*/healthy-*.log): versions and plugins, NET/IB
    devices, Init START, ring orders, Trees, per-channel connections over P2P and
    NET/IB, proxy connections, thresholds, Init COMPLETE and its timings."""
    r, n = rank, DENSE_RANKS
    pid = 20000 + r * 13 + comm
    tid = pid + 7 + rng.randrange(40)
    p = _dense_prefix(r, pid, tid)
    ip = f"10.1.{r // PER_NODE}.{11 + r // PER_NODE}"
    local = r % PER_NODE
    commid = f"0x{(comm * 0x9E3779B97F4A7C15) & (2**64 - 1):x}"
    out = [
        f"{p}Bootstrap : Using ib0:{ip}<0>",
        f"{p}NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
        f"{p}cudaDriverVersion 12040",
        f"{p}NCCL version 2.21.5+cuda12.4",
        f"{p}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; "
        f"OOB ib0:{ip}<0>",
        f"{p}Using non-device net plugin version 0",
        f"{p}Using network IB",
        f"{p}ncclCommInitRank comm 0x{rng.getrandbits(44):x} rank {r} nranks {n} cudaDev "
        f"{local} nvmlDev {local} busId {rng.choice('1a3b5c7d')}000 commId {commid} - Init START",
        f"{p}Setting affinity for GPU {local} to ffffffff,00000000,ffffffff",
        f"{p}NVLS multicast support is not available on dev {local}",
        f"{p}comm 0x{rng.getrandbits(44):x} rank {r} nRanks {n} nNodes {len(DENSE_HOSTS)} "
        f"localRanks {PER_NODE} localRank {local} MNNVL 0",
    ]
    order = " ".join(f"{(r + k) % n:4d}" for k in range(16))
    for ch in range(0, 32, 4):
        out.append(f"{p}Channel {ch:02d}/32 : {order}")
    up, down = (r - 1) // 2 if r else -1, 2 * r + 1 if 2 * r + 1 < n else -1
    trees = " ".join(f"[{t}] {down}/-1/-1->{r}->{up}" for t in range(8))
    out.append(f"{p}Trees {trees}")
    out.append(f"{p}P2P Chunksize set to 131072")
    nxt, prv = (r + 1) % n, (r - 1) % n
    for ch in range(32):
        cross = nxt // PER_NODE != r // PER_NODE
        via = f"NET/IB/{ch % 4}/GDRDMA" if cross else "P2P/CUMEM/read"
        side = "[send] " if cross else ""
        out.append(
            f"{p}Channel {ch:02d}/0 : {r}[{local}] -> {nxt}[{nxt % PER_NODE}] {side}via {via}"
        )
        cross = prv // PER_NODE != r // PER_NODE
        via = f"NET/IB/{ch % 4}/GDRDMA" if cross else "P2P/CUMEM/read"
        side = "[receive] " if cross else ""
        out.append(
            f"{p}Channel {ch:02d}/0 : {prv}[{prv % PER_NODE}] -> {r}[{local}] {side}via {via}"
        )
        if ch % 4 == 0:
            kind = rng.choice(("send", "recv"))
            out.append(
                f"{p}New proxy {kind} connection {ch // 4} from local rank {local}, transport 2"
            )
            out.append(
                f"{p}Connected to proxy localRank {local} -> connection 0x{rng.getrandbits(44):x}"
            )
    out += [
        f"{p}Connected all rings",
        f"{p}Connected all trees",
        f"{p}threadThresholds 8/8/64 | 512/8/64 | 512 | 512",
        f"{p}32 coll channels, 32 collnet channels, 0 nvls channels, 32 p2p channels, "
        "32 p2p channels per peer",
        f"{p}TUNER/Plugin: Plugin load returned 11 : libnccl-tuner.so: cannot open shared object "
        "file: No such file or directory.",
        f"{p}ncclCommInitRank comm 0x{rng.getrandbits(44):x} rank {r} nranks {n} cudaDev "
        f"{local} nvmlDev {local} busId 1a000 commId {commid} - Init COMPLETE",
        f"{p}Init timings - ncclCommInitRankConfig: rank {r} nranks {n} total "
        f"{rng.random() * 3:.2f} (kernels 0.{rng.randrange(99):02d}, alloc 0.01, bootstrap "
        f"0.{rng.randrange(99):02d}, allgathers 0.00, topo 0.{rng.randrange(99):02d}, graphs "
        f"0.00, connections 0.{rng.randrange(99):02d}, rest 0.00)",
    ]
    return out


def dense_failures(rng: random.Random) -> list[str]:
    """The two failure lines buried in the INFO-dense log: one rank's IB completion
    error, and its watchdog's timeout."""
    r = 43
    host = DENSE_HOSTS[r // PER_NODE]
    return [
        f"[1,{r}]<stdout>:{host}:20572:20601 [{r % PER_NODE}] transport/net_ib.cc:1695 NCCL "
        f"WARN NET/IB : Got completion from peer 10.1.4.15<48821> with status=12 opcode=0 "
        f"len=0 vendor err 129 (Send) localGid ::ffff:10.1.5.16 remoteGids::ffff:10.1.4.15 "
        f"hca mlx5_2",
        f"[1,{r}]<stdout>:[rank{r}]:[E1129 14:21:{rng.randrange(60):02d}.{rng.randrange(10**6):06d}"
        f" ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum=183221, OpType=ALLREDUCE, NumelIn=25557032, NumelOut=25557032, "
        f"Timeout(ms)=600000) ran for 600{rng.randrange(1000):03d} milliseconds before timing out.",
    ]


def generate_dense(path: Path, size_bytes: int, seed: int = 13) -> Path:
    """An INFO-dense log of about `size_bytes`: what 64 ranks on 8 nodes print with
    `NCCL_DEBUG=INFO` when the job builds communicators again and again (sub-groups,
    restarts, nccl-tests sweeps): about 85 % of the lines are NCCL INFO lines, the rest
    training progress; two failure lines (IB completion error near 60 %, the watchdog's
    timeout near the end) are buried in them. The expected diagnosis is
    nccl-ib-fabric-error."""
    if path.exists() and abs(path.stat().st_size - size_bytes) < size_bytes * 0.05:
        return path
    rng = random.Random(seed)
    tmp = path.with_suffix(".part")
    written, comm, epoch, it = 0, 0, 0, 0
    failures = dense_failures(rng)
    with open(tmp, "w", encoding="utf-8", buffering=1 << 20) as fh:
        while written < size_bytes:
            lines: list[str] = []
            for r in rng.sample(range(DENSE_RANKS), 16):
                lines += dense_init(rng, comm, r)
                for _ in range(rng.randrange(8, 24)):
                    it = (it + 1) % 5000
                    epoch += it == 0
                    lines.append(progress_line(rng, r, epoch, it))
            comm += 1
            if failures and written >= (0.6 if len(failures) == 2 else 0.97) * size_bytes:
                lines.insert(rng.randrange(len(lines)), failures.pop(0))
            text = "\n".join(lines) + "\n"
            fh.write(text)
            written += len(text)
        for line in failures:  # a tiny size: both still present
            fh.write(line + "\n")
    tmp.replace(path)
    return path
