"""The seed notes (DLPerf's summary of test experience) owned by these rules are carried
into the knowledge base in their own Chinese wording, and their commands are runnable."""

from __future__ import annotations

import pytest

from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import text_of

# seed item -> (node id, a phrase of the seed that its zh text or a command must carry)
SEED_PHRASES = [
    ("S1", "code-version-mismatch", "精确地匹配到对应的commit"),
    ("S13", "framework-env-tuning", "horovod参数设置"),
    ("S14", "input-pipeline-bottleneck", "没有使用dali"),
    ("S15", "input-pipeline-bottleneck", "数据读取线程数设置不合理"),
    ("S16", "tfds-version", "tensorflow-datasets==3.0.0"),
    ("S16", "pin-tensorflow-datasets-version", "tensorflow-datasets==3.0.0"),
    (
        "S17",
        "pythonpath-missing",
        "export PYTHONPATH=$PYTHONPATH:/home/leinao/tensorflow/models-2.3.0",
    ),
    ("S17", "export-model-repo-pythonpath", "vim ~/.bashrc"),
    ("S18", "cuda-lib-missing", "libcupti.so.10.1"),
    (
        "S18",
        "symlink-cuda-library-version",
        "sudo ln -s /usr/local/cuda-10.2/targets/x86_64-linux/lib/libcudart.so.10.2 /usr/lib/x86_64-linux-gnu/libcudart.so.10.1",
    ),
    ("S18", "install-cuda-toolkit-version", "/usr/local/cuda软链接到cuda-10.1"),
    ("S19", "tf-distribution-strategy", "all_reduce_alg:'nccl'"),
    ("S19", "tf-distribution-strategy", "gpu.yaml或gpu_fp16.yaml"),
    ("S20", "tf-distribution-strategy", "--all_reduce_alg='ring'"),
    ("S21", "dataset-format", "train_list.txt、val_list.txt"),
    ("S22", "paddle-launch-mode", "python -m paddle.distributed.launch train.py"),
    ("S23", "tune-data-reader-threads", "4卡时thread=12"),
    ("S23", "input-pipeline-bottleneck", "--reader_thread=8"),
    ("S24", "dataset-format", "paddle-bert"),
    ("S27", "code-version-mismatch", "README—额外准备"),
    ("S28", "framework-env-tuning", "runner.sh(Line：70～Line：81)"),
]


def _texts(rules: KnowledgeBase, node_id: str) -> str:
    node = rules.causes.get(node_id) or rules.fixes.get(node_id)
    assert node is not None, f"{node_id} is not in the rules"
    parts = [
        text_of(node.title, "zh"),
        text_of(node.description if hasattr(node, "description") else node.steps, "zh"),
    ]
    if hasattr(node, "commands"):
        parts += [c.run for c in node.commands]
    return "\n".join(parts)


@pytest.mark.parametrize(
    ("item", "node_id", "phrase"), SEED_PHRASES, ids=[f"{i}-{n}" for i, n, _ in SEED_PHRASES]
)
def test_the_seed_wording_is_in_the_rule(
    rules: KnowledgeBase, item: str, node_id: str, phrase: str
) -> None:
    assert phrase in _texts(rules, node_id), f"{item}: {phrase!r} missing from {node_id}"


def test_the_mxnet_runner_variables_of_the_seed_are_all_in_the_fix(rules: KnowledgeBase) -> None:
    runner_lines_70_81 = [
        "MXNET_UPDATE_ON_KVSTORE=0",
        "MXNET_EXEC_ENABLE_ADDTO=1",
        "MXNET_USE_TENSORRT=0",
        "MXNET_GPU_WORKER_NTHREADS=2",
        "MXNET_GPU_COPY_NTHREADS=1",
        "MXNET_OPTIMIZER_AGGREGATION_SIZE=54",
        "HOROVOD_CYCLE_TIME=0.1",
        "HOROVOD_FUSION_THRESHOLD=67108864",
        "HOROVOD_NUM_NCCL_STREAMS=2",
        "MXNET_HOROVOD_NUM_GROUPS=16",
        "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD=999",
        "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD=25",
    ]
    exported = rules.fixes["export-framework-perf-env"].commands[0].run.split()
    assert set(runner_lines_70_81) <= set(exported)
