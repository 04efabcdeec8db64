"""Judging measured throughput against DLPerf's published results, and saying where it is lost.

DLPerf measured every framework on the same 4 x 8 V100 cluster, so its scaling
efficiencies (speedup / GPUs) are a fair yardstick for a user's run of the same
framework, model, precision and batch size:

    config = resolve("tf2", "resnet50", "fp32", 128)
    verdict = judge(config, [Point(1, 1, 321.8), Point(4, 8, 9400)])
    verdict.to_json()   # the `speedup --json` document

The reference CSV ships inside the package (`kb/data/dlperf_reference.csv`).
"""

from kb.cluster.speedup.logs import Point, parse_point, throughput_from_log
from kb.cluster.speedup.reference import (
    Config,
    Ref,
    framework_aliases,
    load_reference,
    resolve,
    split_precision,
)
from kb.cluster.speedup.verdict import (
    POOR_REFERENCE,
    REFERENCE_HARDWARE,
    STAGES,
    THRESHOLD,
    Verdict,
    judge,
    to_markdown,
)

__all__ = [
    "POOR_REFERENCE",
    "REFERENCE_HARDWARE",
    "STAGES",
    "THRESHOLD",
    "Config",
    "Point",
    "Ref",
    "Verdict",
    "framework_aliases",
    "judge",
    "load_reference",
    "parse_point",
    "resolve",
    "split_precision",
    "throughput_from_log",
    "to_markdown",
]
