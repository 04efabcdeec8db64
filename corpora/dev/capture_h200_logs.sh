#!/bin/bash
# Provoke known failures (and healthy runs) on a 2-GPU host and keep their logs.
# Usage: capture_h200_logs.sh [first|second|all]
#
# Why: the corpus in corpora/dev needs logs that a real machine printed, not
# hand-written ones. Each case is one command with a short timeout; its output
# goes to h200-<case>.log unchanged, and the command itself to
# commands.txt so labels.csv can say exactly what was done. Everything is
# packed into $OUT/h200-logs.tar.gz at the end (the device returns few files).
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and friends), as the host asks.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
O=${OUT:-/tmp/h200-out}
mkdir -p "$O"
W=$(mktemp -d)
cd "$W" || exit 1

cat >ar.py <<'EOF'
import os, torch, torch.distributed as dist
r = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(r)
dist.init_process_group("nccl")
x = torch.ones(1 << 22, device="cuda"); dist.all_reduce(x); torch.cuda.synchronize()
print(f"rank {dist.get_rank()} sum ok {x[0].item()}")
dist.destroy_process_group()
EOF
cat >dup.py <<'EOF'
import torch, torch.distributed as dist
torch.cuda.set_device(0)  # every rank on GPU 0: the local rank is ignored
dist.init_process_group("nccl")
x = torch.ones(1024, device="cuda"); dist.all_reduce(x); torch.cuda.synchronize()
print("ok")
EOF
cat >stall.py <<'EOF'
import os, time, datetime, torch, torch.distributed as dist
r = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(r)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=20),
                        device_id=torch.device("cuda", r))
x = torch.ones(1024, device="cuda")
for step in range(3):
    if step == 2 and r == 1:
        time.sleep(90)  # rank 1 stalls: it never joins the third all-reduce
    dist.all_reduce(x); torch.cuda.synchronize()
    print(f"rank {r} step {step} ok")
EOF
cat >mismatch.py <<'EOF'
import os, torch, torch.distributed as dist
r = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(r)
dist.init_process_group("nccl", device_id=torch.device("cuda", r))
x = torch.ones(1024 * (r + 1), device="cuda")  # ranks disagree on the shape
dist.all_reduce(x); torch.cuda.synchronize()
print("ok")
EOF
cat >once.py <<'EOF'
import os, datetime, torch, torch.distributed as dist
r = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(r)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=20),
                        device_id=torch.device("cuda", r))
x = torch.ones(1 << 20, device="cuda"); dist.all_reduce(x); torch.cuda.synchronize()
print(f"rank {r} sum ok {x[0].item()}")
dist.destroy_process_group()
EOF
cat >gloo.py <<'EOF'
import torch, torch.distributed as dist
dist.init_process_group("gloo")
x = torch.ones(16); dist.all_reduce(x)
print(f"rank {dist.get_rank()} sum ok {x[0].item()}")
EOF
cat >train.py <<'EOF'
import os, time, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
r = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(r)
dist.init_process_group("nccl", device_id=torch.device("cuda", r))
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).cuda(), device_ids=[r])
opt = torch.optim.SGD(model.parameters(), lr=0.05)
bs = 256
for step in range(1, 61):
    t0 = time.perf_counter()
    xb = torch.randn(bs, 1024, device="cuda"); yb = torch.randint(0, 10, (bs,), device="cuda")
    loss = torch.nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad(); loss.backward(); opt.step(); torch.cuda.synchronize()
    if r == 0 and step % 10 == 0:
        dt = time.perf_counter() - t0
        print(f"step {step}/60 loss {loss.item():.4f} {bs * dist.get_world_size() / dt:.0f} samples/s")
dist.destroy_process_group()
EOF
cat >ar_mpi.py <<'EOF'
import os, torch, torch.distributed as dist
r = int(os.environ["OMPI_COMM_WORLD_RANK"]); n = int(os.environ["OMPI_COMM_WORLD_SIZE"])
torch.cuda.set_device(int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"]))
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29531", rank=r, world_size=n)
x = torch.ones(1 << 22, device="cuda"); dist.all_reduce(x); torch.cuda.synchronize()
print(f"rank {r} sum ok {x[0].item()}")
dist.destroy_process_group()
EOF
cat >fake_rsh <<'EOF'
#!/bin/bash
# Stands in for ssh to a node whose non-interactive shell has no Open MPI on its PATH.
while [[ $# -gt 0 && $1 == -* ]]; do shift; done
shift  # the host name
exec env -i HOME=/root PATH=/usr/local/sbin:/usr/sbin:/sbin /bin/bash -c "$*"
EOF
chmod +x fake_rsh

TR="torchrun --nproc_per_node 2"
L="$W/logs"
mkdir -p "$L"
run() {  # run [-t SECONDS] NAME COMMAND...: the command's output, unchanged, in h200-NAME.log
    local limit=40
    if [[ $1 == -t ]]; then limit=$2; shift 2; fi
    local name=$1; shift
    if ((SECONDS > 460)); then echo "h200-$name.log skipped (time)" >>"$L/commands.txt"; return; fi
    echo "h200-$name.log: $*" >>"$L/commands.txt"
    timeout "$limit" bash -c "$*" >"$L/h200-$name.log" 2>&1
    echo "h200-$name.log exit $? after ${SECONDS}s" >>"$L/commands.txt"
    tar -C "$L" -czf "$O/h200-logs.tar.gz" .  # what is done so far comes back even on a kill
}

first_batch() {
    run nccl-info-tree-simple-healthy "NCCL_DEBUG=INFO NCCL_ALGO=Tree NCCL_PROTO=Simple $TR ar.py"
    run nccl-env-ifname-ibdisable-healthy "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET NCCL_SOCKET_IFNAME=eth0 NCCL_IB_DISABLE=1 $TR ar.py"
    run ddp-training-healthy "NCCL_DEBUG=WARN $TR train.py"
    run mpirun-torch-nccl-healthy "mpirun --allow-run-as-root -np 2 -x NCCL_DEBUG=INFO -x NCCL_NVLS_ENABLE -x PYTHONUNBUFFERED python3 ar_mpi.py"

    python3 -c "import socket,time;s=socket.socket();s.bind(('0.0.0.0',29512));s.listen();time.sleep(120)" &
    HOLD=$!
    sleep 1
    run torchrun-master-port-in-use "$TR --master_addr 127.0.0.1 --master_port 29512 ar.py"
    kill "$HOLD"

    run nccl-duplicate-gpu "$TR dup.py"
    run cuda-visible-devices-one-gpu-two-ranks "CUDA_VISIBLE_DEVICES=0 $TR ar.py"
    run -t 75 watchdog-timeout-stalled-rank "$TR stall.py"
    run mismatched-collective-detail "TORCH_DISTRIBUTED_DEBUG=DETAIL $TR mismatch.py"
    run gloo-socket-ifname-missing "GLOO_SOCKET_IFNAME=eth9 $TR gloo.py"

    # One rank has a wrong CUDA_VISIBLE_DEVICES and dies; the other waits at the rendezvous.
    run -t 60 store-timeout-after-rank-died "export MASTER_ADDR=127.0.0.1 MASTER_PORT=29541 WORLD_SIZE=2; \
      (RANK=0 LOCAL_RANK=0 python3 -c 'import datetime,torch,torch.distributed as d; torch.cuda.set_device(0); d.init_process_group(\"nccl\", timeout=datetime.timedelta(seconds=20)); print(\"rank 0 joined\")' &); \
      sleep 2; RANK=1 LOCAL_RANK=1 CUDA_VISIBLE_DEVICES=0 python3 -c 'import torch; torch.cuda.set_device(1)'; sleep 30"

    run shm-64k-p2p-disabled "unshare -m bash -c 'mount -t tmpfs -o size=64k tmpfs /dev/shm && df -h /dev/shm && NCCL_P2P_DISABLE=1 NCCL_DEBUG=WARN $TR ar.py'"
    run shm-64k-p2p-disabled-cumem-host-off "unshare -m bash -c 'mount -t tmpfs -o size=64k tmpfs /dev/shm && NCCL_P2P_DISABLE=1 NCCL_CUMEM_HOST_ENABLE=0 NCCL_DEBUG=WARN $TR ar.py'"

    run mpirun-no-ssh-remote-host "mpirun --allow-run-as-root -np 2 -H gpu-node-02:1,localhost:1 hostname"
    run mpirun-orted-not-on-remote-path "mpirun --allow-run-as-root -np 2 -H gpu-node-02:1,localhost:1 -mca plm_rsh_agent $W/fake_rsh hostname"

    # libnccl removed from both places the loader looks (restored right after).
    NCCLDIR=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])")/lib
    SYSLIB=/usr/lib/x86_64-linux-gnu
    mkdir -p "$W/hidden/torch" "$W/hidden/sys"
    mv "$NCCLDIR/libnccl.so.2" "$W/hidden/torch/"
    mv "$SYSLIB"/libnccl.so.2 "$SYSLIB"/libnccl.so.2.* "$W/hidden/sys/"
    ldconfig
    run libnccl-missing "NCCL_DEBUG=INFO $TR ar.py"
    mv "$W/hidden/torch/libnccl.so.2" "$NCCLDIR/"
    mv "$W"/hidden/sys/* "$SYSLIB/"
    ldconfig
    ls -la "$NCCLDIR" "$SYSLIB"/libnccl* >>"$L/commands.txt"
}

second_batch() {
    # Each rank in its own container-like /dev/shm (no shared IPC namespace): rank 1 gets a
    # private 64k tmpfs. Legacy /dev/shm buffers (NCCL_CUMEM_HOST_ENABLE=0), P2P off.
    run -t 75 shm-private-per-rank "export MASTER_ADDR=127.0.0.1 MASTER_PORT=29551 WORLD_SIZE=2 \
      NCCL_P2P_DISABLE=1 NCCL_CUMEM_HOST_ENABLE=0 NCCL_DEBUG=WARN; \
      (RANK=0 LOCAL_RANK=0 python3 once.py &); sleep 1; \
      RANK=1 LOCAL_RANK=1 unshare -m bash -c 'mount -t tmpfs -o size=64k tmpfs /dev/shm && python3 once.py'; \
      sleep 45"
    run mpirun-no-ssh-client "mpirun --allow-run-as-root -np 1 -H gpu-node-02:1 hostname"
    run mpirun-orted-not-on-remote-path \
      "mpirun --allow-run-as-root -np 1 -H gpu-node-02:1 -mca plm_rsh_agent $W/fake_rsh hostname"
}

case "${1:-all}" in
    first) first_batch ;;
    second) second_batch ;;
    *) first_batch; second_batch ;;
esac

tar -C "$L" -czf "$O/h200-logs.tar.gz" .
cat "$L/commands.txt"
