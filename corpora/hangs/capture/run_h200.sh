#!/bin/bash
# The three hangs with NCCL on one machine (run on the device host; OUT is the result folder).
# 3 ranks share GPU 0 (launch.py --one-gpu); RAS is queried twice during each hang.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/hangs_out}
mkdir -p "$OUT"
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,RAS TIMEOUT_S=${TIMEOUT_S:-75} SLEEP_S=${SLEEP_S:-110}
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"
i=0
for c in sleep extra kill; do
  python3 "$HERE/launch.py" $c "$OUT/nccl_$c" --ranks 3 --backend nccl --one-gpu \
    --port $((29600 + 10 * i)) --ras-port $((28100 + 10 * i)) --ras-at 10,66 --deadline 170 \
    --timeout "$TIMEOUT_S" > "$OUT/launch_$c.txt" 2>&1 &
  i=$((i + 1))
done
wait
cat "$OUT"/launch_*.txt
