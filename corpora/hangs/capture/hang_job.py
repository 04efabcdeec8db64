"""One rank of a job that hangs on purpose, with PyTorch's Flight Recorder on.

Run it through `launch.py` (or torchrun: it reads RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT). Every rank all-reduces a 1024-float tensor for STEPS steps; at step
HANG_STEP the victim rank (VICTIM, default the last rank) misbehaves:

- `sleep`: it sleeps SLEEP_S seconds before the collective (a stuck or slow rank);
- `extra`: it first issues an extra all_reduce (same shape) the others never issue, so
  from there on its collectives are one ahead of theirs (desync): after the loop the
  others write a checkpoint (sleep POST_S) while it waits in a collective nobody joins;
- `kill`:  it kills itself with SIGKILL (a dead peer).

The healthy ranks time out after TIMEOUT_S. With NCCL, PyTorch's watchdog then writes
each rank's Flight Recorder buffer to `$TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>` (and
signals the other ranks to dump theirs). Gloo has no watchdog: this script does the
same by hand (on its collective's exception the rank dumps and raises a dump signal in
the store; a thread on every rank dumps when it sees the signal), with the very
`_dump_fr_trace()` bytes the recorder would write.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import signal
import sys
import threading
import time

import torch
import torch.distributed as dist

CASE = os.environ.get("HANG_CASE", "sleep")
BACKEND = os.environ.get("HANG_BACKEND", "gloo")
STEPS = int(os.environ.get("STEPS", "8"))
HANG_STEP = int(os.environ.get("HANG_STEP", "4"))
TIMEOUT_S = float(os.environ.get("TIMEOUT_S", "10"))
SLEEP_S = float(os.environ.get("SLEEP_S", "40"))
PREFIX = os.environ.get("TORCH_FR_DUMP_TEMP_FILE") or os.environ.get(
    "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "/tmp/nccl_trace_rank_"
)
POST_S = float(os.environ.get("POST_S", str(3 * TIMEOUT_S)))
SIGNAL_KEY = "fr_dump_signal"
_LOCK = threading.Lock()


def dump(rank: int, why: str) -> None:
    """Write this rank's Flight Recorder buffer once, as the watchdog would."""
    path = f"{PREFIX}{rank}"
    with _LOCK:
        if os.path.exists(path):
            return
        from torch._C._distributed_c10d import _dump_fr_trace

        data = _dump_fr_trace()
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
    print(f"[rank{rank}] wrote Flight Recorder dump {path} ({why})", flush=True)


def watch_signal(store: dist.Store, rank: int) -> None:
    """The dump signal of the other ranks (Gloo only; NCCL's heartbeat monitor does this)."""
    while True:
        try:
            if store.check([SIGNAL_KEY]):
                dump(rank, "dump signal from " + store.get(SIGNAL_KEY).decode())
                return
        except Exception:
            return
        time.sleep(0.2)


def main() -> int:
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    victim = int(os.environ.get("VICTIM", str(world - 1)))
    device = "cpu"
    if BACKEND == "nccl":
        local = int(os.environ.get("LOCAL_RANK", rank))
        device = f"cuda:{local % torch.cuda.device_count()}"
        torch.cuda.set_device(device)
    store = dist.TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]) + 1,
        world,
        rank == 0,
        timeout=datetime.timedelta(seconds=TIMEOUT_S * 10),
    )
    dist.init_process_group(
        BACKEND, rank=rank, world_size=world, timeout=datetime.timedelta(seconds=TIMEOUT_S)
    )
    print(
        f"[rank{rank}] init done on {os.uname().nodename} pid {os.getpid()} "
        f"backend {BACKEND} case {CASE}",
        flush=True,
    )
    if BACKEND == "gloo":
        threading.Thread(target=watch_signal, args=(store, rank), daemon=True).start()
    x = torch.ones(1024, device=device)
    try:
        for step in range(STEPS):
            if step == HANG_STEP and rank == victim:
                if CASE == "sleep":
                    print(f"[rank{rank}] step {step}: sleeping {SLEEP_S}s", flush=True)
                    time.sleep(SLEEP_S)
                elif CASE == "extra":
                    print(f"[rank{rank}] step {step}: an extra all_reduce", flush=True)
                    dist.all_reduce(torch.ones(1024, device=device))
                elif CASE == "kill":
                    print(f"[rank{rank}] step {step}: killing myself", flush=True)
                    os.kill(os.getpid(), signal.SIGKILL)
            dist.all_reduce(x)
            if BACKEND == "nccl":
                torch.cuda.synchronize()
            print(f"[rank{rank}] step {step} done", flush=True)
    except Exception as exc:
        print(f"[rank{rank}] collective failed: {type(exc).__name__}: {exc}", flush=True)
        if BACKEND == "gloo":
            dump(rank, "collective failed")
            with contextlib.suppress(Exception):  # the store may be gone
                store.set(SIGNAL_KEY, str(rank))
        time.sleep(3)  # let the others dump
        return 1
    print(f"[rank{rank}] training done; writing a checkpoint", flush=True)
    time.sleep(POST_S)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
