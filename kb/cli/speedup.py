"""`dlperf-help speedup`: is this throughput, at 1 GPU and at N GPUs x M nodes, as DLPerf's?

    dlperf-help speedup --framework tf2 --model resnet50 --precision fp32 \\
        --batch-per-gpu 128 --throughput 1x1=321.8 --throughput 1x8=2458.7 --throughput 4x8=9400

Throughputs come from `--throughput NODESxGPUS=SAMPLES_PER_S` or from training logs
(`--log NODESxGPUS=FILE`).  Exit status: 0 every point is ok, 1 a point is low,
2 the configuration is unknown, ambiguous or was not published by DLPerf (the
message lists the nearest choices).
"""

from __future__ import annotations

import argparse
import math
import re

HELP = "judge measured throughput and scaling against DLPerf's published results"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--framework", required=True, help="e.g. tf2, tensorflow2.3.0, paddle, ngc-pytorch"
    )
    p.add_argument("--model", required=True, help="e.g. resnet50, bert-base")
    p.add_argument(
        "--precision", required=True, help="fp32 or amp/fp16, with knobs: amp+xla, fp32+dali"
    )
    p.add_argument(
        "--batch-per-gpu", type=int, required=True, metavar="N", help="batch size per GPU"
    )
    p.add_argument(
        "--throughput",
        action="append",
        default=[],
        metavar="NODESxGPUS=VALUE",
        help="samples/s measured at that shape, e.g. 1x1=321.8 or 4x8=9400 (repeatable)",
    )
    p.add_argument(
        "--log",
        action="append",
        default=[],
        metavar="[NODESxGPUS=]FILE",
        help="a training log that prints samples/s (img/s, examples/second, ...)",
    )
    p.add_argument(
        "--per-gpu",
        action="store_true",
        help="the logs print per-GPU (per-rank) throughput: multiply by the GPU count",
    )
    p.add_argument("--json", action="store_true", help="print the verdict as one JSON object")


def run(args: argparse.Namespace) -> int:
    from kb.cli.common import print_json
    from kb.cluster import speedup
    from kb.cluster.report.causes import CauseBook
    from kb.util.errors import UserError

    if not 1 <= args.batch_per_gpu <= MAX_BATCH:
        raise UserError(
            f"--batch-per-gpu {args.batch_per_gpu}: give a batch size from 1 to {MAX_BATCH}"
        )
    config = speedup.resolve(args.framework, args.model, args.precision, args.batch_per_gpu)
    points = []
    for spec in args.throughput:
        n, g, value = speedup.parse_point(spec)
        points.append(
            speedup.Point(
                n, g, _throughput(value, f"--throughput {spec}"), text=f"--throughput {spec}"
            )
        )
    for spec in args.log:
        n, g, path = _log_shape(spec)
        p = speedup.throughput_from_log(path, n * g, args.per_gpu)
        p.nodes, p.gpus = n, g
        points.append(p)
    if not points:
        raise UserError("give at least one --throughput NODESxGPUS=VALUE or --log NODESxGPUS=FILE")
    verdict = speedup.judge(config, points, CauseBook.shipped())
    if args.json:
        print_json(verdict.to_json(), "speedup")
    else:
        from kb.cli.output import write

        write(to_text(verdict))
    return 1 if verdict.low else 0


MAX_BATCH = 1 << 20
MAX_THROUGHPUT = 1e8  # samples/s: far above any cluster DLPerf measured (about 1e5)


def _throughput(value: str, where: str) -> float:
    """A measured throughput: a finite, positive number of samples per second."""
    from kb.util.errors import UserError

    try:
        number = float(value)
    except ValueError:
        raise UserError(f"not a number: {value!r} in {where}") from None
    if not math.isfinite(number) or number <= 0 or number > MAX_THROUGHPUT:
        raise UserError(
            f"{value!r} in {where} is not a throughput: give samples/s, above 0 and "
            f"at most {MAX_THROUGHPUT:.0e}"
        )
    return number


def _log_shape(spec: str) -> tuple[int, int, str]:
    from kb.util.errors import UserError

    m = re.fullmatch(r"(\d+)[xX](\d+)=(.+)", spec)
    if m:
        return int(m[1]), int(m[2]), m[3]
    try:
        with open(spec, encoding="utf-8", errors="replace") as fh:
            gpus = re.findall(r"on (\d+) GPU\(s\)", fh.read())
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", spec) from None
    if gpus and gpus[-1] == "1":
        return 1, 1, spec
    raise UserError(f"say which shape this log is, e.g. --log 1x8={spec}")


def to_text(v: object) -> str:
    from kb.cluster.speedup import REFERENCE_HARDWARE, Verdict

    assert isinstance(v, Verdict)
    c = v.config
    lines = [
        f"DLPerf reference: {c.framework} {c.model} {c.precision}, batch {c.batch} per GPU",
        f"  ({REFERENCE_HARDWARE})",
        "",
        "  point  throughput  speedup  efficiency  DLPerf        verdict",
    ]
    for p in v.points:
        shape = f"{p['nodes']}x{p['gpus_per_node']}"
        if p["verdict"] == "not published":
            lines.append(
                f"  {shape:<5}  {p['throughput']:>10g}  {'-':>7}  {'-':>10}  {'-':>11}  "
                f"not published (DLPerf has {', '.join(p['published'])})"
            )
        elif "reference_throughput" in p:
            lines.append(
                f"  {shape:<5}  {p['throughput']:>10g}  {'1':>7}  {'-':>10}  "
                f"{p['reference_throughput']:>8g} /s  {p['verdict']}"
            )
        else:
            lines.append(
                f"  {shape:<5}  {p['throughput']:>10g}  {p['speedup']:>7g}  "
                f"{p['efficiency']:>10.2f}  {p['reference_efficiency']:>8.2f} eff  {p['verdict']}"
            )
    lines += ["", f"where: {v.where or 'nowhere: the run scales like DLPerf'}"]
    lines += [f"  {e}" for e in v.explanation]
    if v.reference_note:
        lines += ["", f"note: {v.reference_note}"]
    if v.causes:
        from kb.diagnosis.percent import confidence_text

        lines += ["", "Causes to look at:"] + [
            f"  {x['id']} ({confidence_text(x['confidence'])}): {x['title']}" for x in v.causes
        ]
    return "\n".join(lines) + "\n"
