"""Regenerate catalogue/<library>.yaml from the library's source (a bare git mirror, as
the `fetch` tool or `git clone --mirror` leaves it):

    python scripts/catalogue/build.py nccl --git-dir /path/to/nccl.git
    python scripts/catalogue/build.py --reclassify     # re-apply classify.yaml only

Every message is classified by catalogue/classify.yaml; one that no rule classifies
stops the build with its text, so the table is extended rather than a message left
unknown.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from classify import Table
from merge import Seen, span
from yamlout import write

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "catalogue"


def _nccl(git_dir: Path) -> tuple[str, list[Seen]]:
    import csources

    return csources.scan(git_dir)


def _rccl(git_dir: Path) -> tuple[str, list[Seen]]:
    """RCCL where it differs from NCCL: the templates catalogue/nccl.yaml lacks."""
    import csources

    versions, seen = csources.scan(git_dir, r"rocm-(\d+\.\d+\.\d+)", "5.0.0")
    ours = yaml.safe_load((CATALOGUE / "nccl.yaml").read_text(encoding="utf-8"))
    known = {(m["level"], m["template"]) for m in ours["messages"]}
    return versions, [s for s in seen if (s.level, s.template) not in known]


def _openssh(git_dir: Path) -> tuple[str, list[Seen]]:
    import csources

    return csources.scan_openssh(git_dir)


def _ompi(git_dir: Path) -> tuple[str, list[Seen]]:
    import showhelp

    return showhelp.scan(git_dir)


def _prrte(git_dir: Path) -> tuple[str, list[Seen]]:
    import showhelp

    return showhelp.scan(git_dir, r"v(\d+\.\d+\.\d+)", "2.0.0")


def _pmix(git_dir: Path) -> tuple[str, list[Seen]]:
    import pmix_src

    return pmix_src.scan(git_dir)


def _cuda(git_dir: Path) -> tuple[str, list[Seen]]:
    import errstrings

    return errstrings.scan_hip(git_dir)


def _glibc(git_dir: Path) -> tuple[str, list[Seen]]:
    import csources

    return csources.scan_glibc(git_dir)


def _horovod(git_dir: Path) -> tuple[str, list[Seen]]:
    import pyextract

    return pyextract.scan(git_dir, r"v(\d+\.\d+\.\d+)", "0.16.0", ("horovod",))


def _torchelastic(git_dir: Path) -> tuple[str, list[Seen]]:
    import pyextract

    return pyextract.scan(git_dir, r"v(\d+\.\d+\.\d+)", "0.2.0", ("torchelastic",))


def _deepspeed(git_dir: Path) -> tuple[str, list[Seen]]:
    """DeepSpeed's launcher (`deepspeed` / pdsh / mpirun / slurm runners), its comm layer
    over torch.distributed, and elasticity: what a multi-node launch prints."""
    import pyextract

    paths = ("deepspeed/launcher", "deepspeed/comm", "deepspeed/elasticity")
    return pyextract.scan(git_dir, r"v(\d+\.\d+\.\d+)", "0.5.0", paths)


def _ucx(git_dir: Path) -> tuple[str, list[Seen]]:
    import csources

    return csources.scan_ucx(git_dir)


def _gloo(git_dir: Path) -> tuple[str, list[Seen]]:
    import csources

    return csources.scan_gloo(git_dir)


def _slurm(git_dir: Path) -> tuple[str, list[Seen]]:
    import slurm_src

    return slurm_src.scan(git_dir)


def _pyxis(git_dir: Path) -> tuple[str, list[Seen]]:
    import slurm_src

    return slurm_src.scan_pyxis(git_dir)


def _accelerate(git_dir: Path) -> tuple[str, list[Seen]]:
    import accelerate_lightning

    return accelerate_lightning.scan_accelerate(git_dir)


def _lightning(git_dir: Path) -> tuple[str, list[Seen]]:
    import accelerate_lightning

    return accelerate_lightning.scan_lightning(git_dir)


# libraries read as snapshots (`tfsources`: git trees of forks and google/tsl, and released
# wheels, listed one a line): `build.py tensorflow --snapshots FILE`
SNAPSHOT_SOURCES = {
    "tensorflow": (
        "https://github.com/tensorflow/tensorflow (1.13-2.1 tags; Python of the 2.2-2.20 wheels;"
        " C++ of google/tsl and of 2.19-2.22 trees)",
        "tf_keep",
    ),
    "tensorflow-datasets": ("https://github.com/tensorflow/datasets (PyPI wheels)", "tfds_keep"),
}

# libraries read file by file (`dirscan`: `<dir>/VERSIONS` and one folder per version),
# where the repository is too large for a mirror: `build.py torch --src-dir DIR`
DIR_SOURCES = {
    "torch": "https://github.com/pytorch/pytorch (torch.distributed: c10d, elastic, run; DDP, torch.cuda init, DataLoader)",
    "tensorflow": "https://github.com/tensorflow/tensorflow",
    "paddle": "https://github.com/PaddlePaddle/Paddle (PyPI wheels, the last release of each"
    " minor: paddlepaddle 1.8.5, 2.6.2, 3.0.0-3.3.1, paddlepaddle-gpu 2.0.2-2.5.2:"
    " paddle.distributed, DataLoader, paddle.device, cpp_extension, shipped headers; .cc files"
    " read one stored version each as 2.x/3.x: dynload, gpu_info, comm id, TCP store,"
    " imperative/data_loader)",
    "mxnet": "https://github.com/apache/mxnet",
    "paramiko": "https://github.com/paramiko/paramiko (PyPI sdists)",
    "dali": "https://github.com/NVIDIA/DALI (nvidia-dali-cuda120 wheels: Python, C++ headers)",
    "vllm": "https://github.com/vllm-project/vllm (PyPI wheels, the first and last release of"
    " each minor 0.2-0.33, 0.21.0 having no x86_64 wheel: distributed, executors, workers,"
    " platforms, utils' NCCL/port/CUDA helpers, envs)",
    "nvidia-container": "https://github.com/NVIDIA/nvidia-container-toolkit (first and last"
    " release of each minor v1.0.5-v1.20.0: hook, runtime, CDI, discovery, lookups);"
    " NVIDIA/open-gpu-kernel-modules (first and last of each branch 515-595: NVRM errors of"
    " nv.c, nv-pci.c, osapi.c); nvidia-ml-py 7.352.0-13.615.71 (pynvml's NVMLError table);"
    " NVIDIA/libnvidia-container and moby/moby's device request read file by file, and"
    " nvidia-smi's documented lines (scripts/catalogue/snapshots/nvidia-container.yaml)",
}

SOURCES: dict[str, tuple[str, Callable[[Path], tuple[str, list[Seen]]]]] = {
    "gloo": ("https://github.com/facebookincubator/gloo", _gloo),
    "ucx": ("https://github.com/openucx/ucx", _ucx),
    "torchelastic": ("https://github.com/pytorch/elastic", _torchelastic),
    "horovod": ("https://github.com/horovod/horovod", _horovod),
    "deepspeed": ("https://github.com/deepspeedai/DeepSpeed", _deepspeed),
    "glibc-ld": ("https://sourceware.org/git/glibc.git (mirror: github.com/bminor/glibc)", _glibc),
    # errno_src.py: strerror/gai_strerror texts as CPython's OSError prints them
    "glibc-errno": (
        "https://sourceware.org/git/glibc.git (mirror: github.com/bminor/glibc; every release"
        " tag 2.17-2.42: sysdeps/gnu/errlist.c/.h, sysdeps/posix/gai_strerror-strs.h), in the"
        " `[Errno N] text` form of CPython's OSError (ConnectionRefusedError, socket.gaierror)",
        lambda git_dir: __import__("errno_src").scan(git_dir),
    ),
    # HIP's error strings are CUDA's cudaGetErrorString texts for the codes it mirrors
    # (its own "ROCm" wordings are left out); versions are ROCm/clr releases
    "cuda": ("https://github.com/ROCm/clr", _cuda),
    "nccl": ("https://github.com/NVIDIA/nccl", _nccl),
    # ofi_src.py: the EFA/libfabric network plugin's NET/OFI messages
    "aws-ofi-nccl": (
        "https://github.com/aws/aws-ofi-nccl (every release tag v0.9-v1.21.1, -aws tags as"
        " their release: src/ and include/, NCCL_OFI_WARN/INFO/TRACE)",
        lambda git_dir: __import__("ofi_src").scan(git_dir),
    ),
    "rccl": ("https://github.com/ROCm/rccl", _rccl),
    "openssh": ("https://github.com/openssh/openssh-portable", _openssh),
    # csources.scan_openssh_server: sshd's own files, apart from the client's, whose rules
    # in classify.yaml read any openssh message by its words alone
    "openssh-server": (
        "https://github.com/openssh/openssh-portable (every release tag V_7_2_P1-V_10_5_P1:"
        " sshd.c, sshd-session.c, sshd-auth.c, servconf.c, auth.c, auth-rhosts.c, auth2*.c)",
        lambda git_dir: __import__("csources").scan_openssh_server(git_dir),
    ),
    "ompi": ("https://github.com/open-mpi/ompi", _ompi),
    "prrte": ("https://github.com/openpmix/prrte", _prrte),
    "pmix": ("https://github.com/openpmix/openpmix", _pmix),
    # rdma_src.py: stdio formats and rdma-core's logging wrappers, path by path
    "rdma-core": (
        "https://github.com/linux-rdma/rdma-core (the first and last tag of each release,"
        " v17-v64.0: libibverbs and its examples (ibv_devinfo, ibv_devices, pingpongs),"
        " librdmacm and its examples, providers/mlx5, libibmad, libibumad, infiniband-diags)",
        lambda git_dir: __import__("rdma_src").scan_rdma_core(git_dir),
    ),
    "perftest": (
        "https://github.com/linux-rdma/perftest (every release tag 4.1-0.2 to 26.04.17, betas"
        " left out, read as 4.1.0.2-26.04.17: src/, ib_*_bw/_lat, raw_ethernet_*)",
        lambda git_dir: __import__("rdma_src").scan_perftest(git_dir),
    ),
    "slurm": (
        "https://github.com/SchedMD/slurm (first and last release of each minor, 17.11.0-26.05.3:"
        " srun, salloc, sbatch, slurmstepd, mpi plugins, task/cgroup, cgroup, gres/gpu,"
        " step-launch API, socket layer, slurm_errno.c)",
        _slurm,
    ),
    "pyxis": ("https://github.com/NVIDIA/pyxis (every release tag 0.1.0-0.24.0)", _pyxis),
    # mpich_src.py: Hydra (and hydra2), the PMI client, errnames.txt, the library's stderr
    "mpich": (
        "https://github.com/pmodels/mpich (every release tag v3.0-v5.0.1, rc/alpha/beta left"
        " out: src/pm/hydra and src/pm/hydra2 (HYDU_ERR_*/HYD_ERR_*, HYDU_ASSERT), src/pmi,"
        " the tree's errnames.txt, the library's stderr prints and assembled abort lines)",
        lambda git_dir: __import__("mpich_src").scan(git_dir),
    ),
    # jax_src.py: jax.distributed, its cluster environments, xla_bridge, version checks
    "jax": (
        "https://github.com/jax-ml/jax (every release tag jax-v0.3.0-jax-v0.11.0, -rc left out:"
        " jax/_src/distributed.py, jax/_src/clusters/, xla_bridge.py, the jax/jaxlib version"
        " checks, jax_plugins/cuda and rocm; XLA's coordinator errors are openxla/xla's C++)",
        lambda git_dir: __import__("jax_src").scan(git_dir),
    ),
    "accelerate": (
        "https://github.com/huggingface/accelerate (every release tag v0.5.0-v1.14.0: state.py,"
        " launchers.py, commands/launch.py, utils/launch.py, utils/environment.py,"
        " utils/dataclasses.py; utils.py before 0.8)",
        _accelerate,
    ),
    "lightning": (
        "https://github.com/Lightning-AI/pytorch-lightning (every release tag 1.0.0-2.6.5;"
        " pytorch_lightning/, lightning_lite/, lightning_fabric/, lightning/{fabric,pytorch}/:"
        " cluster environments, strategies and training-type plugins, GPU/CUDA accelerators,"
        " accelerator/SLURM/signal connectors, Fabric's connector, utilities/distributed.py and"
        " device_parser.py)",
        _lightning,
    ),
}


def emit(library: str, source: str, versions: str, seen: list[Seen], table: Table) -> int:
    rows: list[dict[str, Any]] = []
    for s in seen:
        row: dict[str, Any] = {
            "template": s.template,
            "level": s.level,
            "file": s.file,
            "versions": span(s.first, s.last),
            **s.extra,
        }
        row.update(table.classify(library, s.level, s.file, s.template, s.extra.get("topic", "")))
        rows.append(row)
    return write(CATALOGUE / f"{library}.yaml", library, source, versions, rows)


def reclassify(table: Table) -> None:
    """Re-apply the table to every committed catalogue file (no source needed)."""
    for path in sorted(CATALOGUE.glob("*.yaml")):
        if path.name in ("symptoms.yaml", "classify.yaml"):
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        seen = []
        for m in data["messages"]:
            first, _, last = str(m["versions"]).partition("-")
            extra = {"topic": m["topic"]} if m.get("topic") else {}
            seen.append(Seen(m["template"], m["level"], first, last or first, m["file"], extra))
        n = emit(data["library"], data["source"], data["versions"], seen, table)
        print(f"{path.name}: {n} messages")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "library", nargs="?", choices=sorted({*SOURCES, *DIR_SOURCES, *SNAPSHOT_SOURCES})
    )
    ap.add_argument("--git-dir", type=Path)
    ap.add_argument("--src-dir", type=Path, help="files read one by one (see dirscan.py)")
    ap.add_argument("--snapshots", type=Path, help="snapshot listing (see tfsources.py)")
    ap.add_argument("--reclassify", action="store_true")
    args = ap.parse_args(argv)
    try:
        table = Table(CATALOGUE / "classify.yaml")
        if args.reclassify:
            reclassify(table)
            return 0
        if args.library in SNAPSHOT_SOURCES and args.snapshots:
            import tfsources

            source, keep = SNAPSHOT_SOURCES[args.library]
            snapshots = tfsources.read_listing(args.snapshots)
            versions, seen = tfsources.scan(snapshots, getattr(tfsources, keep))
        elif args.library in DIR_SOURCES and args.src_dir:
            import dirscan

            source = DIR_SOURCES[args.library]
            scan_dir = dirscan.scan
            if args.library == "dali":  # DALI_ENFORCE/make_string, not the generic readers
                import dali_src

                scan_dir = dali_src.scan
            if args.library == "vllm":  # its wheels' scoped files, once-only logger calls
                import vllm_src

                scan_dir = vllm_src.scan
            if args.library == "nvidia-container":  # git mirrors, wheels, transcribed files
                import nvidia_container_src

                scan_dir = nvidia_container_src.scan
            versions, seen = scan_dir(args.src_dir)
        elif args.library in SOURCES and args.git_dir:
            source, scan = SOURCES[args.library]
            versions, seen = scan(args.git_dir)
        else:
            ap.error("give a library and --git-dir, --src-dir for " + ", ".join(DIR_SOURCES))
        n = emit(args.library, source, versions, seen, table)
    except (LookupError, ValueError, OSError) as exc:
        print(f"build: {exc}", file=sys.stderr)
        return 1
    print(f"{args.library}: {n} messages, versions {versions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
