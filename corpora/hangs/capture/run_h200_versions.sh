#!/bin/bash
# A hang in a job whose ranks load different NCCL versions (run on the device host): the
# `sleep` hang of run_h200.sh, with the last rank loading the system libnccl (2.28.3)
# instead of PyTorch's bundled one (2.28.9) through LD_PRELOAD (same soname: the loader
# keeps the preloaded one). OUT is the result folder.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/hangs_out}
SYSTEM_NCCL=${SYSTEM_NCCL:-/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3}
mkdir -p "$OUT"
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,RAS TIMEOUT_S=${TIMEOUT_S:-60} SLEEP_S=${SLEEP_S:-100}
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"
python3 "$HERE/launch.py" sleep "$OUT/nccl_versions" --ranks 3 --backend nccl --one-gpu \
  --port 29700 --ras-port 28200 --ras-at 10,50 --deadline 150 --timeout "$TIMEOUT_S" \
  --victim-env "LD_PRELOAD=$SYSTEM_NCCL" > "$OUT/launch_versions.txt" 2>&1
cat "$OUT/launch_versions.txt"
