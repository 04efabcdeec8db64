"""The survey's sections (what runs on a node) and how their outputs become named facts.

Every fact in `FACTS` ends up in the survey document, either with a value or as
null with a reason under `unavailable`, so that reports can tell "not installed"
from "differs".
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from kb.cluster.survey import gpu, ib, net, software
from kb.cluster.survey.script import Output, Section
from kb.sysinfo import topology

FACTS = (
    "hostname",
    "gpu_model",
    "gpu_count",
    "driver_version",
    "cuda_version",
    "cuda_runtime_versions",
    "cudnn_version",
    "nccl_version",
    "nccl_system_version",
    "python_version",
    "torch_version",
    "tensorflow_version",
    "paddle_version",
    "mxnet_version",
    "horovod_version",
    "horovod_nccl",
    "openmpi_version",
    "ofed_version",
    "ib_devices",
    "ib_verbs_devices",
    "interfaces",
    "shm_size_bytes",
    "memlock_limit",
    "gpu_topology",
    "env",
    "os",
    "kernel",
    "container",
    "boot_id",
)

_IDENTITY = r"""
printf 'hostname=%s\n' "$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)"
printf 'boot_id=%s\n' "$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
if [ -f /.dockerenv ]; then c=docker; elif [ -f /run/.containerenv ]; then c=podman;
elif [ -n "${KUBERNETES_SERVICE_HOST:-}" ]; then c=kubernetes; else c=none; fi
printf 'container=%s\n' "$c"
"""


def sections(python: str = "python3", seconds: int | None = None) -> list[Section]:
    """Everything the survey runs, in order.  All of it is read-only.

    `seconds` caps every command (default: 20 s, 60 s for Python and Horovod).
    """
    py = shlex.quote(python)
    secs = _sections(py, python)
    if seconds is None:
        return secs
    return [Section(s.name, s.shell, s.needs, seconds) for s in secs]


def _sections(py: str, python: str) -> list[Section]:
    return [
        Section("identity", _IDENTITY),
        Section(
            "gpu_query",
            f"nvidia-smi --query-gpu={gpu.QUERY} --format=csv,noheader",
            ("nvidia-smi",),
        ),
        Section("smi", "nvidia-smi", ("nvidia-smi",)),
        Section("topo", "nvidia-smi topo -m", ("nvidia-smi",)),
        Section("loader", gpu.LOADER_SHELL),
        Section("python", f"{py} -c {shlex.quote(gpu.PROBE)}", (python,), 60),
        Section("horovod", "horovodrun --check-build", ("horovodrun",), 60),
        Section("mpi", "mpirun --version", ("mpirun",)),
        Section("ofed", "ofed_info -s", ("ofed_info",)),
        Section("ib", ib.SYSFS_SHELL),
        Section("net", net.SHELL),
        Section("shm", "df -Pk /dev/shm"),
        Section("memlock", "ulimit -l"),
        Section("env", f"env | grep -E '{software.ENV_GREP}' || true"),
        Section("os", "cat /etc/os-release 2>/dev/null; uname -r"),
    ]


class _Facts:
    """Facts being filled in, with the reason for each one left empty."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.why: dict[str, str] = {}

    def put(self, name: str, value: Any) -> None:
        if value is not None and value != "":
            self.values[name] = value
            self.why.pop(name, None)

    def cannot(self, names: tuple[str, ...] | list[str], why: str) -> None:
        for n in names:
            if n not in self.values:
                self.why.setdefault(n, why)


def _read(
    f: _Facts,
    out: Output,
    tool: str,
    names: tuple[str, ...],
    parse: Callable[[str], dict[str, Any]],
) -> None:
    problem = out.why_not(tool)
    if problem and not (out.exit_code is not None and out.text and not out.timed_out):
        f.cannot(names, problem)
        return
    values = parse(out.text)
    for k, v in values.items():
        f.put(k, v)
    missing = [n for n in names if n not in f.values]
    if missing:
        first = next((ln.strip() for ln in out.text.splitlines() if ln.strip()), "no output")
        f.cannot(missing, problem or f"could not read {tool}'s output: {first[:160]}")


def build(
    outputs: dict[str, Output], python: str = "python3"
) -> tuple[dict[str, Any], dict[str, str]]:
    """All facts (a value or None) and the reasons for the None ones."""
    f = _Facts()
    _read(f, outputs["identity"], "hostname", ("hostname",), software.parse_identity)
    _read(
        f,
        outputs["gpu_query"],
        "nvidia-smi",
        ("gpu_model", "gpu_count", "driver_version"),
        lambda t: {k: v for k, v in gpu.parse_gpu_query(t).items() if k != "gpus"},
    )
    _read(f, outputs["smi"], "nvidia-smi", ("cuda_version",), gpu.parse_smi_header)
    _read(f, outputs["topo"], "nvidia-smi topo -m", ("gpu_topology",), _topology)
    _read(
        f,
        outputs["loader"],
        "ldconfig",
        ("nccl_system_version", "cuda_runtime_versions"),
        gpu.parse_loader,
    )
    if "nccl_system_version" in f.why:
        f.why["nccl_system_version"] = (
            "no libnccl.so found by the loader (ldconfig cache, LD_LIBRARY_PATH)"
        )
    _python(f, outputs["python"], python)
    _read(f, outputs["horovod"], "horovodrun --check-build", ("horovod_nccl",), _horovod)
    _read(f, outputs["mpi"], "mpirun", ("openmpi_version",), _mpi)
    _read(
        f,
        outputs["ofed"],
        "ofed_info",
        ("ofed_version",),
        lambda t: {"ofed_version": software.parse_ofed(t)},
    )
    if "ofed_version" in f.why and outputs["ofed"].missing:
        f.why["ofed_version"] = (
            "ofed_info is not installed: no MLNX_OFED userspace (an "
            "inbox rdma-core may still provide IB)"
        )
    _read(
        f,
        outputs["ib"],
        "/sys/class/infiniband",
        ("ib_devices", "ib_verbs_devices"),
        ib.parse_ib_section,
    )
    _read(
        f,
        outputs["net"],
        "ip / /sys/class/net",
        ("interfaces",),
        lambda t: {"interfaces": net.parse_net_section(t)},
    )
    _read(
        f,
        outputs["shm"],
        "df /dev/shm",
        ("shm_size_bytes",),
        lambda t: {"shm_size_bytes": software.parse_shm(t)},
    )
    _read(
        f,
        outputs["memlock"],
        "ulimit -l",
        ("memlock_limit",),
        lambda t: {"memlock_limit": software.parse_ulimit_l(t)},
    )
    _read(f, outputs["env"], "env", ("env",), lambda t: {"env": software.parse_env(t)})
    _read(f, outputs["os"], "os-release", ("os", "kernel"), software.parse_os)
    if "cudnn_version" not in f.values and f.values.get("cudnn_system_versions"):
        f.put("cudnn_version", f.values["cudnn_system_versions"][0])
    f.cannot(("cudnn_version",), "no cuDNN reported by PyTorch nor found by the loader")
    for name in ("ib_devices", "ib_verbs_devices"):  # an empty list is a fact: no IB here
        if name in f.why and outputs["ib"].exit_code == 0:
            f.values[name] = []
            f.why.pop(name)
    if "env" in f.why and outputs["env"].exit_code is not None:
        f.values["env"], _ = {}, f.why.pop("env")
    facts = {name: f.values.get(name) for name in FACTS}
    for extra in (
        "nccl_system_libraries",
        "nccl_pip_version",
        "torch_cuda_version",
        "cudnn_system_versions",
        "horovod_build",
        "mpi_implementation",
        "gpus",
    ):
        if extra in f.values:
            facts[extra] = f.values[extra]
    why = {k: v for k, v in f.why.items() if facts.get(k) is None}
    for name in FACTS:
        if facts[name] is None and name not in why:
            why[name] = "not reported by this node"
    return facts, why


def _topology(text: str) -> dict[str, Any]:
    topo = topology.parse(text)
    return {"gpu_topology": topo.to_json()} if topo.gpus else {}


def _horovod(text: str) -> dict[str, Any]:
    build = software.parse_horovod_build(text)
    if build is None:
        return {}
    return {"horovod_nccl": "NCCL" in build["operations"], "horovod_build": build}


def _mpi(text: str) -> dict[str, Any]:
    version, other = software.parse_mpirun_version(text)
    if version:
        return {"openmpi_version": version}
    return {"mpi_implementation": other} if other else {}


def _python(f: _Facts, out: Output, python: str) -> None:
    names = (
        "python_version",
        "torch_version",
        "tensorflow_version",
        "paddle_version",
        "mxnet_version",
        "horovod_version",
        "nccl_version",
    )
    if out.missing:
        f.cannot(names, f"{python} is not installed (not found on PATH)")
        return
    data = gpu.parse_probe(out.text)
    if data is None:
        f.cannot(names, out.why_not(python) or f"{python} failed: {out.text.strip()[:160]}")
        return
    values, why = gpu.probe_facts(data, python)
    for k, v in values.items():
        f.put(k, v)
    for k, reason in why.items():
        f.cannot((k,), reason)
    if "horovod_version" in f.why:
        f.cannot(("horovod_nccl",), "Horovod is not installed")
