"""aws-ofi-nccl, the NCCL network plugin over libfabric (EFA on AWS, other providers): its
`NCCL_OFI_WARN`/`NCCL_OFI_INFO` formats, which NCCL's logger prints as `NCCL WARN NET/OFI
<format>` (the macros add the `NET/OFI ` prefix), at every release tag v0.9-v1.21.1
(`-aws` tags read as their release; `rc` left out)."""

from __future__ import annotations

from pathlib import Path

from cprintf import calls
from merge import Found, Seen, scan_releases

MACROS = {"NCCL_OFI_WARN": 0, "NCCL_OFI_INFO": 1, "NCCL_OFI_TRACE": 1}
LEVELS = {"NCCL_OFI_WARN": "warn", "NCCL_OFI_INFO": "info", "NCCL_OFI_TRACE": "info"}
PREFIX = "NET/OFI "


def read(text: str) -> list[Found]:
    found = dict.fromkeys(
        (LEVELS[c.macro], c.template if c.template.startswith(PREFIX) else PREFIX + c.template)
        for c in calls(text, MACROS)
    )
    return [(level, template, {}) for level, template in found]


def keep(path: str) -> bool:
    return path.startswith(("src/", "include/")) and path.endswith((".c", ".cpp", ".h"))


def scan(git_dir: Path) -> tuple[str, list[Seen]]:
    return scan_releases(git_dir, r"v(\d+\.\d+(?:\.\d+)?)(?:-?aws)?", "0.9", keep, read)
