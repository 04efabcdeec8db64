"""Parsers for the small text outputs of the survey: OFED, Open MPI, Horovod, limits, env.

Each takes a command's text and returns plain values (or None when the text is not
what that command prints), so they also work on outputs pasted by a user.
"""

from __future__ import annotations

import re
from typing import Any

_OFED = re.compile(r"\b(?:MLNX_OFED_LINUX|OFED-internal|OFED)-(?P<v>\d[\w.-]*?)(?::|\s|$)")


def parse_ofed(text: str) -> str | None:
    """`ofed_info -s`: `MLNX_OFED_LINUX-5.4-3.1.0.0:` -> `5.4-3.1.0.0`."""
    m = _OFED.search(text)
    return m["v"] if m else None


_OMPI = re.compile(r"\(Open MPI\)\s+(?P<v>\d[\w.]*)|Open MPI:\s+(?P<v2>\d[\w.]*)")


def parse_mpirun_version(text: str) -> tuple[str | None, str | None]:
    """`mpirun --version` -> (Open MPI version, other MPI's name when it is not Open MPI)."""
    m = _OMPI.search(text)
    if m:
        return m["v"] or m["v2"], None
    low = text.lower()
    for key, name in (
        ("intel(r) mpi", "Intel MPI"),
        ("hydra", "MPICH"),
        ("mpich", "MPICH"),
        ("mvapich", "MVAPICH"),
    ):
        if key in low:
            return None, name
    return None, None


_HVD_VERSION = re.compile(r"Horovod v(?P<v>[\w.+-]+):")
_HVD_ITEM = re.compile(r"^\s*\[(?P<mark>[xX ])\]\s+(?P<name>\S.*?)\s*$")


def parse_horovod_build(text: str) -> dict[str, Any] | None:
    """`horovodrun --check-build`: version and the [X] items of each block."""
    blocks: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        head = line.strip()
        if head.startswith("Available ") and head.endswith(":"):
            current = head[len("Available ") : -1].lower().replace(" ", "_")
            blocks[current] = []
            continue
        m = _HVD_ITEM.match(line)
        if m and current is not None and m["mark"] in "xX":
            blocks[current].append(m["name"])
    if not blocks:
        return None
    v = _HVD_VERSION.search(text)
    return {
        "version": v["v"] if v else None,
        "frameworks": blocks.get("frameworks", []),
        "controllers": blocks.get("controllers", []),
        "operations": blocks.get("tensor_operations", []),
    }


def parse_ulimit_l(text: str) -> int | str | None:
    """`ulimit -l`: 'unlimited' or the limit in KiB."""
    for line in text.splitlines():
        word = line.strip()
        if word == "unlimited":
            return "unlimited"
        if word.isdigit():
            return int(word)
        m = re.search(r"max locked memory\s+\(kbytes, -l\)\s+(\S+)", line)  # `ulimit -a`
        if m:
            return "unlimited" if m[1] == "unlimited" else int(m[1]) if m[1].isdigit() else None
    return None


_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_shm(text: str) -> int | None:
    """Size of /dev/shm in bytes from `df -Pk /dev/shm`, `df -h`, or `mount` (`size=...k`)."""
    size = None
    for line in text.splitlines():
        cells = line.split()
        if len(cells) >= 6 and cells[-1] == "/dev/shm" and cells[1].isdigit():
            size = int(cells[1]) * 1024  # df -Pk: 1024-blocks
        elif len(cells) >= 6 and cells[-1] == "/dev/shm":
            m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)", cells[1])
            if m:
                size = int(float(m[1]) * _UNITS[m[2].lower()])
        m2 = re.search(r"on /dev/shm type tmpfs \(.*\bsize=(\d+)([kmgt]?)", line)
        if m2 and size is None:
            size = int(m2[1]) * _UNITS[m2[2]]
    return size


def _stack_env() -> dict[str, Any]:
    """kb/data/stack_env.yaml: which environment variables belong to the training stack."""
    import yaml

    from kb.util.paths import data_dir

    data = yaml.safe_load((data_dir() / "stack_env.yaml").read_text(encoding="utf-8"))
    return dict(data)


_STACK = _stack_env()
ENV_PREFIXES: tuple[str, ...] = (*_STACK["prefixes"], *_STACK["names"])
_OTHER_PREFIXES: tuple[str, ...] = tuple(_STACK["not_of_the_stack"].get("prefixes", []))
_OTHER_NAMES = frozenset(_STACK["not_of_the_stack"].get("names", []))
ENV_GREP = (
    "^(" + "|".join(p.rstrip("_") + ("_" if p.endswith("_") else "=") for p in ENV_PREFIXES) + ")"
)


def of_the_stack(name: str) -> bool:
    """Whether an environment variable steers the training stack (kb/data/stack_env.yaml):
    `TF_XLA_FLAGS` does, Terraform's `TF_CLI_CONFIG_FILE` does not."""
    if name in _STACK["names"]:
        return True
    if not name.startswith(tuple(_STACK["prefixes"])):
        return False
    return name not in _OTHER_NAMES and not name.startswith(_OTHER_PREFIXES)


def parse_env(text: str) -> dict[str, str]:
    """`env` lines, kept only for the prefixes that steer distributed training."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and of_the_stack(name) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            out[name] = value
    return dict(sorted(out.items()))


def parse_os(text: str) -> dict[str, str]:
    """`/etc/os-release` and `uname -r`."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            out["os"] = line.split("=", 1)[1].strip().strip('"')
        elif re.fullmatch(r"\d+\.\d+[\w.+-]*", line.strip()):
            out["kernel"] = line.strip()
    return out


def parse_identity(text: str) -> dict[str, str]:
    """Our `identity` section: `key=value` lines (hostname, boot_id, container)."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in ("hostname", "boot_id", "container") and value.strip():
            out[key] = value.strip()
    return out
