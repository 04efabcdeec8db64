"""Training progress and throughput: is the input pipeline starving the GPUs, and does
the job scale?

- Progress lines that give both a data(-loading) time and a step time (mmcv's
  `time: 0.51, data_time: 0.40`, detectron2's, PyTorch's ImageNet example's
  `Time 0.512 (0.530) Data 0.412 (0.430)`), or the data time beside the rest of the
  step (LeRobot's `updt_s:0.302 data_s:0.151`): when data time is half the step or more
  (median, after warm-up) -> input-pipeline-bottleneck.
- Throughput per GPU count (`1n8g 2458.7`, `8 GPUs: 1200 img/s`, or a table with a GPU
  column and a throughput column): a speedup far below linear is a symptom (low
  single- or multi-node speedup) and makes the job *slow* for the other analyzers.
"""

from __future__ import annotations

import re

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence, Note
from kb.util.lazyre import LazyPattern

_NUM = r"(\d+(?:\.\d+)?)\s*(ms|s)?"
_DATA = LazyPattern(r"\b[Dd]ata(?:[_ ]?[Tt]ime|_s)?\s*[:=]?\s*" + _NUM + r"(?![\w.])")
# the time of the rest of a step, where it is printed apart from the data time
# (LeRobot's `updt_s:0.302 data_s:13.330`): the step is their sum
_UPDATE = LazyPattern(
    r"\b(?:updt|update|compute|fwd_bwd|forward_backward|optim)(?:_s|_time)\s*[:=]\s*"
    + _NUM
    + r"(?![\w.])"
)
_STEP = LazyPattern(
    r"\b(?:[Bb]atch[_ ]?|[Ss]tep[_ ]?|[Ii]ter[_ ]?)?[Tt]ime\s*[:=]?\s*" + _NUM + r"(?![\w.])"
)
_NODES_GPUS = LazyPattern(r"\b(\d{1,3})n(\d{1,2})g\b\D{0,40}?(\d[\d,]*(?:\.\d+)?)", re.I)
_GPUS_UNIT = LazyPattern(
    r"\b(\d{1,6})\s*(?:x\s*)?GPUs?\b\D{0,40}?(\d[\d,]{0,20}(?:\.\d+)?)\s*"
    r"(?:img/s|images?/s(?:ec)?|samples?/s(?:ec)?|seq(?:uences)?/s|sentences/s|tokens?/s|it/s)",
    re.I,
)
_CELL_SPLIT = LazyPattern(r"\s*\|\s*|\t+|\s{2,}|,\s*")
WARMUP = 3
DATA_SHARE_BOTTLENECK = 0.5
EFFICIENCY_LOW = 0.6


def _cells(row: str) -> list[str]:
    """The cells of a table row (Markdown pipes, tabs, runs of spaces or commas)."""
    return [c.strip() for c in _CELL_SPLIT.split(row.strip().strip("|")) if c.strip()]


def _seconds(value: str, unit: str | None) -> float:
    return float(value) / (1000.0 if unit and unit.lower() == "ms" else 1.0)


class Progress(Analyzer):
    name = "progress"
    taps = (
        Tap("step", r"\b[Dd]ata(?:[_ ]?[Tt]ime|_s)?\s*[:=]?\s*\d", cap=2_000, frequent=True),
        # "1n8g" (DLPerf's nodes x GPUs); no optional spaces: they make the automaton slow
        Tap("nngg", r"\b\d{1,3}n\d{1,2}g\b\D{0,40}\d", ignore_case=True, cap=500),
        Tap("gpus", r"\b\d+\s*(?:x\s*)?GPUs?\b.{0,60}/s(?:ec)?\b", ignore_case=True, cap=500),
        Tap(
            "table",
            r"(?i)^\W*(?:num[_ ]?)?gpus?\b.*(?:throughput|img/s|samples/s|images/s|speed)",
            follow=32,
            cap=50,
        ),
    )

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[tuple[float, float, Evidence]] = []  # (data s, step s, evidence)
        self.points: dict[int, tuple[float, Evidence, int]] = {}  # gpus -> (thr, ev, nodes)
        self._table: tuple[str, int, int, int] | None = None  # file, line, gpu col, thr col

    def feed(self, tap: str, line_no: int, text: str) -> None:
        if tap == "step":
            self._step(line_no, text)
        elif tap == "nngg":
            for ng in _NODES_GPUS.finditer(text):
                nodes, per = int(ng[1]), int(ng[2])
                self._point(nodes * per, ng[3], line_no, text, nodes)
        elif tap == "gpus":
            m = _GPUS_UNIT.search(text)
            if m:
                self._point(int(m[1]), m[2], line_no, text, 0)
        elif tap == "table":
            cols = [c.strip().lower() for c in _cells(text)]
            gpu = next((i for i, c in enumerate(cols) if "gpu" in c), None)
            thr = next(
                (
                    i
                    for i, c in enumerate(cols)
                    if any(w in c for w in ("throughput", "/s", "speed"))
                ),
                None,
            )
            if gpu is not None and thr is not None:
                self._table = (self.file, line_no, gpu, thr)
        elif tap == "table:follow" and self._table and self._table[0] == self.file:
            _, at, gpu, thr = self._table
            cells = _cells(text)
            if (
                0 < line_no - at <= 32
                and len(cells) > max(gpu, thr)
                and re.fullmatch(r"\d+", cells[gpu])
                and re.fullmatch(r"[\d,]+(?:\.\d+)?", cells[thr])
            ):
                self._point(int(cells[gpu]), cells[thr], line_no, text, 0)

    def _step(self, line_no: int, text: str) -> None:
        d = _DATA.search(text)
        if d is None:
            return
        rest = text[: d.start()] + " " * (d.end() - d.start()) + text[d.end() :]
        u = _UPDATE.search(rest)
        s = _STEP.search(rest)
        if u is not None:
            data = _seconds(d[1], d[2])
            step = data + _seconds(u[1], u[2])
        elif s is not None:
            data, step = _seconds(d[1], d[2]), _seconds(s[1], s[2])
        else:
            return
        if step <= 0 or data > step * 1.05:
            return  # not the shape we understand (data time is part of the step)
        ev = Evidence(self.file, line_no, text, d.start(), d.end(), "progress/data-time")
        self.steps.append((data, step, ev))

    def _point(self, gpus: int, value: str, line_no: int, text: str, nodes: int) -> None:
        thr = float(value.replace(",", ""))
        if gpus <= 0 or thr <= 0 or gpus > 100_000:
            return
        if gpus not in self.points:
            self.points[gpus] = (
                thr,
                Evidence(self.file, line_no, text, 0, len(text), "progress/throughput"),
                nodes,
            )

    def finish(self, facts: Facts) -> Report:
        report = Report()
        self._judge_steps(report)
        self._judge_scaling(report, facts)
        return report

    def _judge_steps(self, report: Report) -> None:
        steps = self.steps[WARMUP:] if len(self.steps) > 2 * WARMUP else self.steps
        if len(steps) < 3:
            return
        shares = sorted(((d / s if s else 0.0), i) for i, (d, s, _) in enumerate(steps))
        share, mid = shares[len(shares) // 2]
        data, step, ev = steps[mid]
        params = {
            "data_time": f"{data:g}s",
            "step_time": f"{step:g}s",
            "data_share": f"{share:.0%}",
        }
        text = (
            f"data loading takes {share:.0%} of each step (median over {len(steps)} "
            f"progress lines: {data:g}s of {step:g}s)"
        )
        if share >= DATA_SHARE_BOTTLENECK:
            report.findings.append(
                Finding(
                    "data-time-share",
                    "data-time-share",
                    0.75,
                    text,
                    [ev],
                    params,
                    measured=True,
                )
            )
        elif share >= 0.3:
            report.notes.append(Note("data-time-share", text, [ev]))

    def _judge_scaling(self, report: Report, facts: Facts) -> None:
        if len(self.points) < 2:
            return
        base = min(self.points)
        thr0 = self.points[base][0]
        worst = None
        for n, (thr, ev, nodes) in sorted(self.points.items()):
            if n == base:
                continue
            eff = (thr / thr0) / (n / base)
            if worst is None or eff < worst[0]:
                worst = (eff, n, thr, ev, nodes)
        if worst is None:
            return
        eff, n, thr, ev, nodes = worst
        facts["scaling_efficiency"] = eff
        if eff >= EFFICIENCY_LOW:
            return
        facts["slow"] = True
        multi = nodes > 1 or n > 8
        report.shows.append(
            "scaling-below-linear-multi-node" if multi else "scaling-below-linear-single-node"
        )
        base_ev = self.points[base][1]
        report.notes.append(
            Note(
                "speedup-below-linear",
                f"throughput on {n} GPUs is {thr / thr0:.2f}x that on {base} "
                f"({eff:.0%} of linear scaling)",
                [base_ev, ev],
            )
        )
