#!/bin/bash
# Capture NCCL logs on a 2-GPU host for the NCCL/IB/GPU rules' examples.
# Why: several signatures (NCCL_IB_HCA set without a device, NCCL_P2P_LEVEL=LOC,
# loopback as the socket interface, NCCL_HOSTID, the graph search lines) need lines that
# a real NCCL printed. Each case is one torchrun with a short timeout; its output goes
# unchanged to $OUT/h200-<case>.log. NVLink multicast stays off, as the host asks.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 NCCL_DEBUG=INFO
O=${OUT:-/tmp/h200-nccl-out}
mkdir -p "$O"
W=$(mktemp -d)
cd "$W" || exit 1
cat >ar.py <<'PY'
import os, torch, torch.distributed as dist
r = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(r)
dist.init_process_group("nccl", device_id=torch.device("cuda", r))
x = torch.ones(1 << 22, device="cuda"); dist.all_reduce(x); torch.cuda.synchronize()
print(f"rank {dist.get_rank()} sum ok {x[0].item()}")
dist.destroy_process_group()
PY
run() {  # run NAME ENV... : torchrun ar.py with extra environment, 90 s at most
  local name=$1; shift
  echo "$name: $*" >>"$O/commands.txt"
  env "$@" timeout 90 torchrun --nproc_per_node 2 --master_port 29533 ar.py >"$O/h200-$name.log" 2>&1
  echo "  exit $?" >>"$O/commands.txt"
}
run ib-hca-set-no-device NCCL_IB_HCA=mlx5_0
run p2p-level-loc NCCL_P2P_LEVEL=LOC
run socket-ifname-lo-p2p-shm-off NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
run hostid-set NCCL_HOSTID=node1
run graph-subsys NCCL_DEBUG_SUBSYS=INIT,GRAPH
