"""Hugging Face Accelerate and PyTorch Lightning: the launch and distributed layer of two
wrappers of torch.distributed, read from their git mirrors at every release tag.

Accelerate (`v0.5.0` on): `state.py` (the process group and device it sets up),
`launchers.py` (notebook_launcher), `commands/launch.py` (`accelerate launch`), and the
helpers it launches through: `utils/launch.py`, `utils/environment.py`,
`utils/dataclasses.py` (the plugin and config checks), before 0.8 all in `utils.py`.

Lightning (`1.0.0` on), in each layout the package had (`pytorch_lightning/` in 1.x,
`src/pytorch_lightning/` from 1.7, `src/lightning_lite/` 1.8, `src/lightning_fabric/`
1.9, `src/lightning/{fabric,pytorch}/` from 2.0): the cluster environments (SLURM,
torchelastic, kubeflow, LSF, MPI), the strategies and training-type plugins (DDP, spawn,
DeepSpeed, FSDP and their launchers; not the XLA/TPU/IPU/HPU/Bagua/ColossalAI ones), the
GPU/CUDA accelerators and the 1.0 DDP accelerators, the accelerator and SLURM connectors
(devices, num_nodes, backend), Fabric's connector, `utilities/distributed.py` and
`device_parser.py`. Lightning's `rank_zero_warn` / `rank_zero_deprecation` are read as
warnings and `rank_zero_info` as info (`debug` lines are left out, as pyextract does).

    python scripts/catalogue/build.py accelerate --git-dir /path/to/accelerate.git
    python scripts/catalogue/build.py lightning --git-dir /path/to/pytorch-lightning.git
"""

from __future__ import annotations

import re
from pathlib import Path

import pyextract
from merge import Found, Seen, scan_releases

ACCELERATE_FILES = (
    "src/accelerate/state.py", "src/accelerate/launchers.py", "src/accelerate/commands/launch.py",
    "src/accelerate/utils.py", "src/accelerate/utils/launch.py",
    "src/accelerate/utils/environment.py", "src/accelerate/utils/dataclasses.py",
)  # fmt: skip

LIGHTNING_ROOTS = (
    "pytorch_lightning/", "src/pytorch_lightning/", "src/lightning_lite/",
    "src/lightning_fabric/", "src/lightning/fabric/", "src/lightning/pytorch/",
)  # fmt: skip
# paths under a root whose messages are kept
_LIGHTNING_PARTS = re.compile(
    r"(cluster_environments/|plugins/environments/|strategies/|plugins/training_type/|"
    r"accelerators/(accelerator_connector|accelerator|ddp\w*|gpu\w*|cuda)\.py$|"
    r"trainer/connectors/(accelerator|slurm|signal)_connector\.py$|connector\.py$|"
    r"utilities/(distributed|device_parser)\.py$)"
)
# accelerators and strategies for other hardware than GPUs over NCCL/Gloo
_LIGHTNING_OTHER = re.compile(r"(xla|tpu|ipu|hpu|bagua|colossalai|hivemind|mps)")

# Lightning's rank-zero helpers, read as the logger calls they are (not their definitions)
_RANK_ZERO = re.compile(
    r"(?<![\w.])(?<!def )(rank_zero_warn|rank_zero_deprecation|rank_zero_info)\("
)
_AS_LOGGER = {
    "rank_zero_warn": "warning",
    "rank_zero_deprecation": "warning",
    "rank_zero_info": "info",
}


def accelerate_wanted(path: str) -> bool:
    return path in ACCELERATE_FILES


def lightning_wanted(path: str) -> bool:
    """Whether a repository path is one of the Lightning files the catalogue keeps."""
    if not path.endswith(".py") or "/tests" in path or path.startswith("tests"):
        return False
    for root in LIGHTNING_ROOTS:
        if path.startswith(root):
            rest = path[len(root) :]
            return bool(_LIGHTNING_PARTS.match(rest)) and not _LIGHTNING_OTHER.search(rest)
    return False


def lightning_messages(text: str) -> list[Found]:
    """(level, template, {}) of one Lightning file: pyextract's, its rank-zero helpers
    read as logger calls."""
    text = _RANK_ZERO.sub(lambda m: f"_rank_zero_log.{_AS_LOGGER[m.group(1)]}(", text)
    found = dict.fromkeys((m.level, m.template) for m in pyextract.messages(text))
    return [(level, template, {}) for level, template in found]


def accelerate_messages(text: str) -> list[Found]:
    found = dict.fromkeys((m.level, m.template) for m in pyextract.messages(text))
    return [(level, template, {}) for level, template in found]


def scan_accelerate(git_dir: Path) -> tuple[str, list[Seen]]:
    return scan_releases(
        git_dir, r"v(\d+\.\d+\.\d+)", "0.5.0", accelerate_wanted, accelerate_messages,
        ("src/accelerate",),
    )  # fmt: skip


def scan_lightning(git_dir: Path) -> tuple[str, list[Seen]]:
    return scan_releases(
        git_dir, r"(\d+\.\d+\.\d+)", "1.0.0", lightning_wanted, lightning_messages,
        ("pytorch_lightning", "src"),
    )  # fmt: skip
