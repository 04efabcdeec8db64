"""Accelerate and Lightning in the catalogue: the reader keeps their launch and distributed
layer across the package layouts of each release, reads Lightning's rank-zero helpers as
the logger calls they are, and a line as either library prints it (filled from its source's
format strings) matches the entry its source prints with that entry's class."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import check_pasted_lines, label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import accelerate_lightning as al  # noqa: E402


def test_rank_zero_helpers_are_read_as_logger_calls_not_their_definitions() -> None:
    # shapes of lightning/fabric/plugins/environments/slurm.py (2.x) and
    # lightning/fabric/utilities/rank_zero.py, pytorch_lightning/utilities/distributed.py (1.5)
    src = """
def rank_zero_warn(message, stacklevel=4, **kwargs):
    warnings.warn(message, stacklevel=stacklevel, **kwargs)
def _validate_srun_used():
    if _is_srun_used():
        return
    rank_zero_warn(
        "The `srun` command is available on your system but is not used. HINT: If your"
        f" intention is to run Lightning on SLURM, prepend your python command with `srun`"
        f" like so: {hint} ...",
        category=PossibleUserWarning,
    )
    rank_zero_info("Multiprocessing is handled by SLURM.")
    rank_zero_deprecation("`Trainer(gpus=...)` is deprecated in v1.7")
    rank_zero_debug("not printed by default")
    log.info(f"Initializing distributed: GLOBAL_RANK: {global_rank}, MEMBER: {global_rank + 1}/{world_size}")
    raise MisconfigurationException(f"You requested gpu: {gpus}\\n But your machine only has: {avail}")
"""
    got = {(level, template) for level, template, _ in al.lightning_messages(src)}
    assert got == {
        (
            "warn",
            "The `srun` command is available on your system but is not used. HINT: If your "
            "intention is to run Lightning on SLURM, prepend your python command with `srun` "
            "like so: {} ...",
        ),
        ("info", "Multiprocessing is handled by SLURM."),
        ("warn", "`Trainer(gpus=...)` is deprecated in v1.7"),
        ("info", "Initializing distributed: GLOBAL_RANK: {}, MEMBER: {}/{}"),
        (
            "error",
            "MisconfigurationException: You requested gpu: {}\n But your machine only has: {}",
        ),
    }


def test_the_scope_is_the_launch_and_distributed_layer_of_each_layout() -> None:
    kept = [
        "pytorch_lightning/cluster_environments/slurm_environment.py",  # 1.0
        "pytorch_lightning/accelerators/ddp_accelerator.py",  # 1.0
        "pytorch_lightning/plugins/training_type/ddp.py",  # 1.2-1.5
        "pytorch_lightning/utilities/device_parser.py",
        "src/pytorch_lightning/trainer/connectors/accelerator_connector.py",  # 1.7-1.9
        "src/lightning_lite/connector.py",  # 1.8
        "src/lightning_fabric/plugins/environments/lsf.py",  # 1.9
        "src/lightning/fabric/strategies/launchers/subprocess_script.py",
        "src/lightning/fabric/accelerators/cuda.py",
        "src/lightning/fabric/utilities/distributed.py",
        "src/lightning/pytorch/strategies/deepspeed.py",
    ]
    left = [
        "src/lightning/fabric/strategies/xla_fsdp.py",
        "src/lightning/pytorch/accelerators/mps.py",
        "src/lightning/pytorch/trainer/trainer.py",
        "src/lightning/fabric/utilities/seed.py",
        "tests/tests_fabric/plugins/environments/test_slurm.py",
        "src/lightning/app/utilities/network.py",
        "docs/source-pytorch/accelerators/gpu.rst",
    ]
    assert [p for p in kept if not al.lightning_wanted(p)] == []
    assert [p for p in left if al.lightning_wanted(p)] == []
    assert al.accelerate_wanted("src/accelerate/utils/launch.py")
    assert al.accelerate_wanted("src/accelerate/utils.py")  # before 0.8 one module
    assert not al.accelerate_wanted("src/accelerate/accelerator.py")
    assert not al.accelerate_wanted("src/accelerate/utils/modeling.py")


@pytest.mark.parametrize(
    ("name", "versions", "causes"),
    [
        (
            "accelerate",
            "0.5.0-1.14.0",
            {"port-in-use", "gpu-rank-mapping", "nccl-p2p-failure", "code-version-mismatch"},
        ),
        ("lightning", "1.0.0-2.6.5", {"gpu-rank-mapping", "code-version-mismatch"}),
    ],
)
def test_both_are_catalogued_over_their_releases_all_classified(
    cat: Catalogue, name: str, versions: str, causes: set[str]
) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs[name].versions == versions
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == name]
    assert row["messages"] > 150
    assert row["classified"] == row["messages"] == row["causes"] + row["symptoms"] + row["benign"]
    assert {m.cause for m in cat.by_library(name) if m.class_ == "cause"} == causes
    # most of what they print is a symptom or benign: a cause only where the text names it
    assert row["causes"] < row["messages"] / 10


# (a line as the library prints it, the library, the label of its most specific entry)
LINES = [
    (  # accelerate utils/launch.py prepare_multi_gpu_env: its port check before torch binds
        "ConnectionError: Tried to launch distributed communication on port `29500`, but "
        "another process is utilizing it. Please specify a different port (such as using the "
        "`--main_process_port` flag or specifying a different `main_process_port` in your "
        "config file) and rerun your script. To automatically use the next open port (on a "
        "single node), you can set this to `0`.",
        "accelerate",
        "cause/port-in-use",
    ),
    (  # accelerate state.py on consumer GPUs without P2P
        "NotImplementedError: Using RTX 4000 series doesn't support faster communication "
        'broadband via P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" '
        "or use `accelerate launch` which will do this automatically.",
        "accelerate",
        "cause/nccl-p2p-failure",
    ),
    (  # accelerate commands/launch.py: --multi_gpu --gpu_ids 0
        "ValueError: Less than two GPU ids were configured and tried to run on on multiple "
        "GPUs. Please ensure at least two are specified for `--gpu_ids`, or use "
        "`--gpu_ids='all'`.",
        "accelerate",
        "cause/gpu-rank-mapping",
    ),
    (  # accelerate utils/dataclasses.py on an old torch
        "ImportError: FSDP2 requires PyTorch >= 2.6.0",
        "accelerate",
        "cause/code-version-mismatch",
    ),
    (  # accelerate state.py, a multi-node run without MASTER_ADDR
        "ValueError: Tried to launch on distributed with multinode, but `MASTER_ADDR` env was "
        "not set, please try exporting rank 0's hostname as `MASTER_ADDR`",
        "accelerate",
        "symptom/invalid-config",
    ),
    (  # accelerate utils/launch.py, --use_mpi on a node without MPI
        "OSError: mpirun or mpiexec were not found. Ensure that Intel MPI, Open MPI, or "
        "MVAPICH are installed.",
        "accelerate",
        "symptom/launch-failure",
    ),
    (  # accelerate 1.8+: the port taken, another one found for a single node
        "The following warning: Port `29500` is already in use. Accelerate will attempt to "
        "launch in a standalone-like mode by finding an open port automatically for this "
        "session. If this current attempt fails, or for more control in future runs, please "
        "specify a different port (e.g., `--main_process_port <your_chosen_port>`) or use "
        "`--main_process_port 0` for automatic selection in your launch command or Accelerate "
        "config file.",
        "accelerate",
        "benign",
    ),
    (  # Lightning 1.x device_parser: Trainer(gpus=[0, 1]) on a one-GPU machine
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested "
        "GPUs: [0, 1]",
        "lightning",
        "cause/gpu-rank-mapping",
    ),
    (  # fabric plugins/environments/slurm.py: devices vs #SBATCH --ntasks-per-node
        "ValueError: You set `devices=4` in Lightning, but the number of tasks per node "
        "configured in SLURM `--ntasks-per-node=8` does not match. HINT: Set `devices=8`.",
        "lightning",
        "cause/gpu-rank-mapping",
    ),
    (  # fabric plugins/environments/torchelastic.py: torchrun's world vs devices x num_nodes
        "ValueError: You set `devices=2` and `num_nodes=2` in Lightning, but the product "
        "(2 * 2) does not match the world size (8).",
        "lightning",
        "cause/gpu-rank-mapping",
    ),
    (  # fabric accelerators/cuda.py find_usable_cuda_devices
        "ValueError: You requested to find 8 devices but this machine only has 4 GPUs.",
        "lightning",
        "cause/gpu-rank-mapping",
    ),
    (  # pytorch trainer/connectors/accelerator_connector.py in a notebook
        "lightning.fabric.utilities.exceptions.MisconfigurationException: "
        "`Trainer(strategy='ddp')` is not compatible with an interactive environment. Run "
        "your code as a script, or choose a notebook-compatible strategy: "
        "`Trainer(strategy='ddp_notebook')`. In case you are spawning processes yourself, "
        "make sure to include the Trainer creation inside the worker function.",
        "lightning",
        "symptom/unsupported",
    ),
    (  # fabric plugins/environments/lsf.py outside jsrun
        "ValueError: Cannot determine global rank. Environment variable `JSM_NAMESPACE_RANK` "
        "not found. Make sure you run your executable with `jsrun`.",
        "lightning",
        "symptom/launch-failure",
    ),
    (  # fabric plugins/environments/slurm.py, a salloc shell without srun
        "/opt/conda/lib/python3.10/site-packages/lightning/fabric/plugins/environments/"
        "slurm.py:204: PossibleUserWarning: The `srun` command is available on your system "
        "but is not used. HINT: If your intention is to run Lightning on SLURM, prepend your "
        "python command with `srun` like so: srun python train.py --devices 4 ...",
        "lightning",
        "benign",
    ),
    (  # fabric utilities/distributed.py _init_dist_connection, every healthy DDP start
        "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8",
        "lightning",
        "benign",
    ),
    (  # pytorch_lightning 1.2-1.4 plugins/training_type/ddp.py
        "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/4",
        "lightning",
        "benign",
    ),
    (  # pytorch accelerators/cuda.py
        "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
        "lightning",
        "benign",
    ),
]


@pytest.mark.parametrize(("line", "library", "label"), LINES)
def test_a_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, library: str, label: str
) -> None:
    got, template = label_of(cat, line, library)
    assert got == label, (line, template)


# the progress bar a Lightning run prints once training goes on: a log that ends at its
# rendezvous line instead reads as a start that stalled (the engine's hang reading)
EPOCH = "Epoch 0: 100%|##########| 250/250 [00:41<00:00,  6.04it/s, v_num=0, train_loss=0.213]"


def test_a_pasted_cause_line_ranks_its_cause_first_a_benign_line_fires_nothing() -> None:
    check_pasted_lines([(line, label) for line, _library, label in LINES], EPOCH)
