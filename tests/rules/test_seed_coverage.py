"""A reader finds every item of the user's seed notes in the whole runbook.

Each entry is one item of ../shared/seed/dlperf-summary-of-test-experience.txt
(numbered as in the PR checklist) with the commands, values and Chinese wording
that the knowledge base must carry for it.
"""

from __future__ import annotations

from functools import cache

import pytest

from kb.authoring.checked import load_kb
from kb.markdown import runbook

SEED_ITEMS = {
    "S1 pin the model-repo commit": ["精确到commit", "commit"],
    "S2 horovodrun/mpirun need passwordless ssh on the job's port": [
        "--start-timeout 600",
        "plm_rsh_args",
        "StrictHostKeyChecking=no",
        "btl_tcp_if_include",
        "-x LD_LIBRARY_PATH",
        "-bind-to none",
        "-map-by slot",
        "-mca pml ob1",
        "btl ^openib",
    ],
    "S3 containers ssh each other on the chosen port": ["ssh root@", "免密"],
    "S4 docker host mode and the container sshd port": ["--net=host", "sshd_config"],
    "S5 docker bridge mode maps ports with -p (not -v)": ["-p 9000:9000", "bridge"],
    "S6 communication libraries installed, same NCCL on every node": [
        "通信库没有正确安装",
        "NCCL_DEBUG=INFO",
    ],
    "S7 Open MPI build from source": [
        "openmpi-4.0.0.tar.gz",
        "--enable-orterun-prefix-by-default",
        "--with-cuda",
        "make install",
    ],
    "S8 numa library missing while building": ["libnuma-dev"],
    "S9 Open MPI on PATH and LD_LIBRARY_PATH": ["/usr/local/openmpi/bin", "/usr/local/openmpi/lib"],
    "S10 Horovod installed with NCCL operations": [
        "HOROVOD_GPU_OPERATIONS=NCCL",
        "--no-cache-dir horovod",
    ],
    "S11 virtual NICs and NCCL_SOCKET_IFNAME": [
        "fe80::a480:7fff:fecf:1ed9",
        "ping -s 10240",
        "bwm-ng",
        "ifconfig",
        "veth",
        "NCCL_SOCKET_IFNAME=enp",
        "存在虚拟网卡",
    ],
    "S12 no IB driver lowers speedup": ["没安装IB驱动"],
    "S13 Horovod parameters": ["HOROVOD_FUSION_THRESHOLD", "HOROVOD_CYCLE_TIME"],
    "S14 DALI not used": ["DALI", "没有使用dali"],
    "S15 data-reader threads": ["reader_thread", "数据读取线程数"],
    "S16 tensorflow-datasets pinned": ["tensorflow-datasets==3.0.0"],
    "S17 PYTHONPATH for the models repo": ["export PYTHONPATH=$PYTHONPATH:"],
    "S18 TF 2.3 needs the CUDA 10.1 libraries": [
        "libcudart.so.10.1",
        "libcupti",
        "ln -s",
        "/usr/local/cuda-10.1",
    ],
    "S19 mirrored vs multi_worker_mirrored with all_reduce_alg nccl": [
        "mirrored",
        "multi_worker_mirrored",
        "all_reduce_alg",
    ],
    "S20 TF2 BERT multi-node only with the ring algorithm": ["ring"],
    "S21 Paddle ImageNet list files": ["train_list.txt", "val_list.txt"],
    "S22 Paddle multi-process launch": ["paddle.distributed.launch"],
    "S23 Paddle reader_thread values": ["reader_thread=8", "12"],
    "S24 Paddle BERT data per the DLPerf documentation": ["DLPerf文档"],
    "S25 NGC containers need passwordless ssh between them": ["NGC容器间", "authorized_keys"],
    "S26 IB driver improves multi-node speedup": ["加速比", "IB驱动"],
    "S27 container code differs from the official code": ["容器内提供的代码", "额外准备"],
    "S28 MXNet environment variables": ["MXNET_"],
    "S29 gluon-nlp BERT install": ["gluonnlp==0.10.0", "mxnet-cu102mkl==1.6.0.post0"],
    "S30 GPU topology legend": ["nvidia-smi topo -m", "PIX", "PHB", "NODE", "SYS", "NV#", "mlx5_0"],
    "S31 NCCL troubleshooting and environment documentation": ["troubleshooting", "env.html"],
}


@cache
def whole_runbook() -> str:
    return runbook.render(load_kb())


@pytest.mark.parametrize("item", sorted(SEED_ITEMS))
@pytest.mark.slow
def test_the_runbook_carries_the_seed_item(item: str) -> None:
    text = whole_runbook()
    missing = [p for p in SEED_ITEMS[item] if p not in text]
    assert missing == [], f"{item}: not in the runbook: {missing}"
