"""Start the ranks of `hang_job.py` as separate processes and keep their output.

Unlike torchrun, nothing here kills the other ranks when one dies, so a dead rank
leaves the others hanging and dumping, as on a real cluster. Usage:

    python launch.py CASE OUTDIR [--ranks N] [--backend gloo|nccl] [--ras-at 10,65]

OUTDIR receives run.log (every rank's lines, prefixed `[rankN]:` like torchrun
--tee) and fr_dumps/rank_<N> (the Flight Recorder dumps); with --ras-at, ras_<i>.txt:
what NCCL's RAS answered to VERBOSE STATUS on rank 0's RAS port, that many seconds
after the victim misbehaved. On a cluster, run `ncclras -v` on any node instead.

--one-gpu runs every rank on GPU 0 of one machine (a test rig, not a cluster): each
rank gets its own NCCL_HOSTID (NCCL then treats the ranks as different nodes and
connects them over sockets on loopback) and its own RAS port (NCCL_RAS_ADDR).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def ras_status(port: int = 28028, timeout: float = 20.0) -> str:
    """The RAS STATUS text, over RAS's text protocol (what the `ncclras` client sends)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        f = s.makefile("rwb")
        f.write(b"CLIENT PROTOCOL 2\n")
        f.flush()
        f.readline()  # SERVER PROTOCOL n
        f.write(b"TIMEOUT 5\n")
        f.flush()
        f.readline()  # OK
        f.write(b"VERBOSE STATUS\n")
        f.flush()
        return f.read().decode("utf-8", "replace")


def _hang_started(log: Path, deadline: float) -> float:
    """When the victim's misbehaviour showed in the log (it prints `step N: ...`)."""
    while time.monotonic() < deadline:
        if (
            ": sleeping" in log.read_text()
            or "an extra all_reduce" in log.read_text()
            or ("killing myself" in log.read_text())
        ):
            return time.monotonic()
        time.sleep(0.2)
    return time.monotonic()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["sleep", "extra", "kill"])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--backend", default="gloo")
    ap.add_argument("--ras-at", default="", help="seconds after the hang to query RAS")
    ap.add_argument("--ras-port", type=int, default=28028)
    ap.add_argument("--one-gpu", action="store_true")
    ap.add_argument("--deadline", type=float, default=240.0)
    ap.add_argument("--port", type=int, default=29511)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument(
        "--victim-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the misbehaving rank only (the last one), e.g. "
        "LD_PRELOAD of another libnccl",
    )
    args = ap.parse_args()
    out = args.outdir
    (out / "fr_dumps").mkdir(parents=True, exist_ok=True)
    prefix = str(out / "fr_dumps" / "rank_")
    base = dict(os.environ)
    base.update(
        HANG_CASE=args.case,
        HANG_BACKEND=args.backend,
        WORLD_SIZE=str(args.ranks),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(args.port),
        TIMEOUT_S=str(args.timeout),
        TORCH_FR_BUFFER_SIZE="2000",
        TORCH_NCCL_TRACE_BUFFER_SIZE="2000",
        TORCH_NCCL_DUMP_ON_TIMEOUT="1",
        TORCH_FR_DUMP_TEMP_FILE=prefix,
        TORCH_NCCL_DEBUG_INFO_TEMP_FILE=prefix,
        PYTHONUNBUFFERED="1",
    )
    log = open(out / "run.log", "w")  # noqa: SIM115
    lock = threading.Lock()
    procs = []
    for r in range(args.ranks):
        env = dict(base, RANK=str(r), LOCAL_RANK=str(r))
        if args.one_gpu:
            env.update(
                NCCL_HOSTID=f"fakehost{r}",
                NCCL_RAS_ADDR=f"127.0.0.1:{args.ras_port + r}",
                NCCL_SOCKET_IFNAME="lo",
                NCCL_IB_DISABLE="1",
                LOCAL_RANK="0",
            )
        if r == args.ranks - 1:
            env.update(kv.split("=", 1) for kv in args.victim_env)
        p = subprocess.Popen(
            [sys.executable, str(HERE / "hang_job.py")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        procs.append(p)

        def pump(p: subprocess.Popen[str] = p, r: int = r) -> None:
            assert p.stdout is not None
            for line in p.stdout:
                with lock:
                    log.write(f"[rank{r}]:{line}")
                    log.flush()

        threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + args.deadline
    if args.ras_at:
        start = _hang_started(out / "run.log", deadline)
        for i, at in enumerate(float(x) for x in args.ras_at.split(",")):
            time.sleep(max(0.0, start + at - time.monotonic()))
            try:
                (out / f"ras_{i}.txt").write_text(ras_status(args.ras_port))
            except OSError as exc:
                print(f"RAS query failed: {exc}", file=sys.stderr)
    for p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
    time.sleep(0.5)
    log.close()
    print(
        f"{args.case}: exit codes {[p.returncode for p in procs]}; "
        f"dumps {sorted(os.listdir(out / 'fr_dumps'))}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
