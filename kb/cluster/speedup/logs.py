"""Measured throughput: `NODESxGPUS=VALUE` points and samples/s read from training logs.

Logs print throughput in many ways (`total images/sec: 204.75`, `333.07
examples/second`, `Speed: 1234.5 samples/sec`, `Total img/sec on 8 GPU(s): ...`).
A final total line wins; otherwise the median of the per-step values after the
first tenth (warm-up) is taken, as DLPerf skips its first iterations.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from kb.util.errors import UserError


@dataclass
class Point:
    nodes: int
    gpus: int
    throughput: float
    file: str = "command line"
    line: int = 0
    text: str = ""


def parse_point(spec: str) -> tuple[int, int, str]:
    """`4x8=9400` -> (4, 8, '9400'); raises UserError on anything else."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*=\s*(\S+)\s*", spec)
    if not m or int(m[1]) < 1 or int(m[2]) < 1:
        raise UserError(f"expected NODESxGPUS=VALUE (e.g. 4x8=9400), got {spec!r}")
    return int(m[1]), int(m[2]), m[3]


_TOTAL = re.compile(
    r"total\s+(?:img|images|samples|examples|sentences|sequences)\s*/\s*sec(?:ond)?"
    r"(?:\s+on\s+\d+\s+GPU\(s\))?\s*:\s*(?P<v>\d+(?:\.\d+)?)",
    re.I,
)
_AFTER = re.compile(
    r"(?P<v>\d+(?:\.\d+)?)\s*(?:img|imgs|images|samples|examples|sentences|sequences|seqs?)"
    r"\s*/\s*(?:s|sec|second)\b",
    re.I,
)
_BEFORE = re.compile(
    r"(?:img|images|samples|examples|sentences|sequences)\s*/\s*(?:s|sec|second)"
    r"(?:\s+per\s+(?:GPU|device))?\s*[:=]\s*(?P<v>\d+(?:\.\d+)?)",
    re.I,
)


def throughput_from_log(path: str, gpus: int, per_gpu: bool = False) -> Point:
    """The job's samples/s from a training log (the total line, else the median after warm-up)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", path) from None
    totals: list[tuple[int, str, float]] = []
    steps: list[tuple[int, str, float, bool]] = []
    for n, line in enumerate(lines, 1):
        m = _TOTAL.search(line)
        if m:
            totals.append((n, line, float(m["v"])))
            continue
        m = _BEFORE.search(line) or _AFTER.search(line)
        if m:
            steps.append(
                (n, line, float(m["v"]), bool(re.search(r"per\s+(?:GPU|device)", line, re.I)))
            )
    if totals:
        n, line, _ = totals[-1]
        value = statistics.median(v for _, _, v in totals)
        return Point(0, 0, value * (gpus if per_gpu else 1), path, n, line.strip())
    if not steps:
        raise UserError(
            "no throughput found (looked for samples/s, images/sec, examples/second, sentences/s)",
            path,
        )
    window = steps[max(1, len(steps) // 10) :] if len(steps) >= 5 else steps
    value = statistics.median(v for _, _, v, _ in window)
    scale = gpus if (per_gpu or all(pg for *_, pg in window)) else 1
    n, line, _, _ = window[-1]
    return Point(0, 0, value * scale, path, n, line.strip())
