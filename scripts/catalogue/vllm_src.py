"""vLLM's messages where a distributed launch fails or says how it is set up, read file by
file: its git history is too large for a mirror here, so each sampled release's Python is
taken from its PyPI wheel (`wheel_tree`: the wheel holds `vllm/...` at its repository
paths) into one labelled folder as `dirscan` describes.

Kept: the distributed layer (`vllm/distributed/**`: parallel_state, pynccl and its
wrapper, custom all-reduce, shm_broadcast, cuda_wrapper, EPLB; not the KV / encoder-cache /
weight transfer connectors, `LEFT_OUT`; before 0.4.1 the
same code was `vllm/model_executor/parallel_utils/**`), the executors (`vllm/executor/**`,
`vllm/v1/executor/**`; `vllm/engine/ray_utils.py` before 0.4), the workers
(`vllm/worker/**`, `vllm/v1/worker/**`), the platforms, the utils' NCCL/port/CUDA helpers
(`vllm/utils.py`; later `vllm/utils/` network, system, platform, memory, torch and nccl
modules) and `vllm/envs.py`. Messages: raises, `logger.error` /
`warning` (and vLLM's `warning_once`, `print_warning_once`), `warnings.warn`; an `info`
only where it tells how the job is laid out or talks (NCCL, ports, ray, ranks, devices,
memory, all-reduce): a plain progress line (a model loaded, a graph captured) is left out.

    python scripts/catalogue/vllm_src.py --wheels DIR --src-dir DIR   # lay the wheels out
    python scripts/catalogue/build.py vllm --src-dir DIR
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import dirscan
import pyextract
from merge import Seen
from srckit import wheel_name_version, wheels_main, write_versions

PARTS = (
    "vllm/distributed/", "vllm/model_executor/parallel_utils/", "vllm/executor/",
    "vllm/v1/executor/", "vllm/engine/ray_utils.py", "vllm/worker/", "vllm/v1/worker/",
    "vllm/platforms/", "vllm/utils.py", "vllm/envs.py",
) + tuple(
    f"vllm/utils/{name}.py"  # the package the one utils.py became: its NCCL/port/CUDA helpers
    for name in ("__init__", "nccl", "network_utils", "system_utils", "platform_utils",
                 "mem_utils", "torch_utils")
)  # fmt: skip
# vLLM's own once-only logger methods and the old helper, read as the calls they wrap
_ONCE = re.compile(r"\.(warning|info|error)_once\(")
_PRINT_ONCE = re.compile(r"(?<![\w.])print_warning_once\(")
# an info line worth knowing: how ranks, devices, transports and memory are set up
_INFO_KEPT = re.compile(
    r"(?i)(nccl|rccl|gloo|all.?reduce|p2p|peer|shm|shared memory|ray\b|placement group|"
    r"port\b|address|\bip\b|host|rank|world.?size|distributed|cuda|device|gpu|nvml|"
    r"memory|# \w+ blocks|kv cache size|platform|fall(ing)? ?back|disabl|timed? ?out|fail|"
    r"not (supported|available|found|installed))"
)
_WHEEL = r"vllm-(\d+(?:\.\d+)+(?:\.post\d+)?)-"


# the disaggregated-serving connectors under vllm/distributed (KV / encoder-cache /
# weight transfer through NIXL, Mooncake, LMCache, ...): not the launch and collective
# layer this catalogue is for
LEFT_OUT = tuple(
    f"vllm/distributed/{p}"
    for p in ("kv_transfer/", "ec_transfer/", "weight_transfer/", "aux_output_connector/",
              "mooncake_store.py", "kv_events.py", "nixl_utils.py")
)  # fmt: skip


def wanted(path: str) -> bool:
    """Whether a repository path is one whose messages the catalogue keeps."""
    if not path.endswith(".py") or "/tests/" in path or "/test_" in path:
        return False
    return path.startswith(PARTS) and not path.startswith(LEFT_OUT)


def wheel_version(wheel: Path) -> str:
    return wheel_name_version(wheel, _WHEEL, "a vllm wheel (vllm-<version>-...whl)")


def wheel_tree(wheel: Path, out: Path) -> int:
    """One release's kept files under `out`, at their repository paths."""
    return dirscan.wheel_tree(wheel, out, lambda m: m if m.startswith("vllm/") else None, wanted)


def file_messages(path: str, text: str) -> list[tuple[str, str]]:
    """(level, template) of one file: pyextract's, vLLM's once-only calls included, with
    the info lines that say nothing of the setup left out."""
    text = _PRINT_ONCE.sub("logger.warning(", _ONCE.sub(r".\1(", text))
    found = []
    for m in pyextract.messages(text):
        if m.level == "info" and not _INFO_KEPT.search(m.template):
            continue
        found.append((m.level, m.template))
    return list(dict.fromkeys(found))


def scan(src: Path) -> tuple[str, list[Seen]]:
    return dirscan.scan(src, wanted, file_messages)


def main(argv: list[str] | None = None) -> int:
    return wheels_main(
        argv, __doc__, "vllm_src", "vllm-*.whl", wheel_version, wheel_tree, write_versions
    )


if __name__ == "__main__":
    sys.exit(main())
