"""DLPerf's published results and the loose names users give for a configuration.

`resolve("tf2", "resnet50", "fp16", 256)` finds the one configuration of the CSV
these words mean (tensorflow2.3.0 / resnet50v1.5 / amp / 256), or raises a
one-line `UserError` that lists the choices: an ambiguous or unknown name, or a
configuration DLPerf did not publish.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from kb.util.errors import UserError


@dataclass(frozen=True)
class Ref:
    framework: str
    model: str
    precision: str
    batch: int
    nodes: int
    gpus: int
    throughput: float
    speedup: float


@lru_cache(maxsize=1)
def load_reference() -> tuple[Ref, ...]:
    """DLPerf's 572 published results (shipped inside the package)."""
    text = resources.files("kb").joinpath("data/dlperf_reference.csv").read_text(encoding="utf-8")
    return tuple(
        Ref(
            r["framework"],
            r["model"],
            r["precision"],
            int(r["batch_per_gpu"]),
            int(r["nodes"]),
            int(r["gpus_per_node"]),
            float(r["throughput"]),
            float(r["speedup"]),
        )
        for r in csv.DictReader(io.StringIO(text))
    )


_FAMILY = {
    "tensorflow": ("tensorflow", "tf"),
    "pytorch": ("pytorch", "torch"),
    "paddle": ("paddle", "paddlepaddle"),
    "mxnet": ("mxnet",),
    "mindspore": ("mindspore",),
    "oneflow": ("oneflow", "of"),
}
_MODEL = {
    "resnet50v1.5": {"resnet50", "rn50", "resnet"},
    "resnet50v1b": {"resnet50", "rn50", "resnet"},
    "bert-base": {"bert", "bertbase"},
}
_AMP = {"amp", "fp16", "mixed", "mixedprecision", "half", "float16", "autocast"}
_FP32 = {"fp32", "float32", "float", "single"}


def _norm(s: str) -> str:
    return re.sub(r"[\s_\-]+", "", s.lower())


def framework_aliases(fw: str) -> set[str]:
    """Every word a user may type for a framework string of the CSV."""
    out = {_norm(fw)}
    for part in fw.split("-"):
        m = re.fullmatch(r"([a-z]+)(\d[\d.]*)", part)
        if not m:
            out.add(part)
            out.add(re.sub(r"[\d.]+$", "", part))
            continue
        nums = m[2].split(".")
        for fam in _FAMILY.get(m[1], (m[1],)):
            out.add(fam)
            out.update(fam + ".".join(nums[:i]) for i in range(1, len(nums) + 1))
    return {a for a in out if a}


def _framework_matches(query: str, names: set[str]) -> list[str]:
    q = query.lower().strip()
    if q in names:
        return [q]
    tokens = [t for t in re.split(r"[\s_\-/+]+", q) if t]
    return sorted(fw for fw in names if all(t in framework_aliases(fw) for t in tokens))


def _model_matches(query: str, names: set[str]) -> list[str]:
    q = _norm(query)
    exact = [m for m in names if _norm(m) == q]
    if exact:
        return exact
    toks = [t for t in re.split(r"[^a-z0-9.=]+", query.lower()) if t]
    return sorted(
        m
        for m in names
        if q in _MODEL.get(m, set())
        or (toks and all(t in re.split(r"[^a-z0-9.=]+", m.lower()) for t in toks))
    )


def split_precision(value: str) -> tuple[str | None, frozenset[str]]:
    """`fp16+XLA` -> ('amp', {'xla'}); the base is None when it is not a precision word."""
    base, *knobs = [p for p in value.lower().split("+") if p]
    name = "amp" if _norm(base) in _AMP else "fp32" if _norm(base) in _FP32 else None
    return name, frozenset(k.replace("-", "_") for k in knobs)


@dataclass(frozen=True)
class Config:
    framework: str
    model: str
    precision: str
    batch: int

    def rows(self) -> dict[tuple[int, int], Ref]:
        return {
            (r.nodes, r.gpus): r
            for r in load_reference()
            if (r.framework, r.model, r.precision, r.batch)
            == (self.framework, self.model, self.precision, self.batch)
        }

    def label(self) -> str:
        return f"{self.framework} {self.model} {self.precision} batch {self.batch}"


def _nearest(query: str, choices: set[str]) -> str:
    from rapidfuzz import process

    best = [c for c, _score, _ in process.extract(query, sorted(choices), limit=5)]
    return ", ".join(best)


def resolve(framework: str, model: str, precision: str, batch: int) -> Config:
    """The one DLPerf configuration these loose names mean, or a UserError listing choices."""
    rows = load_reference()
    fws = _framework_matches(framework, {r.framework for r in rows})
    if not fws:
        raise UserError(
            f"unknown framework {framework!r}; DLPerf has: "
            + ", ".join(sorted({r.framework for r in rows}))
        )
    models = _model_matches(model, {r.model for r in rows if r.framework in fws})
    if not models:
        have = {r.model for r in rows if r.framework in fws}
        raise UserError(
            f"no model {model!r} for {', '.join(fws)}; DLPerf has: {_nearest(model, have)}"
        )
    base, knobs = split_precision(precision)
    cands = {
        (r.framework, r.model, r.precision)
        for r in rows
        if r.framework in fws
        and r.model in models
        and split_precision(r.precision) == (base, knobs)
    }
    if not cands:
        precisions = sorted({r.precision for r in rows if r.framework in fws and r.model in models})
        raise UserError(
            f"DLPerf published no {precision!r} results for {', '.join(fws)} "
            f"{', '.join(models)}; precisions: {', '.join(precisions)}"
        )
    if len(cands) > 1:
        raise UserError(
            f"ambiguous: {framework!r} {model!r} {precision!r} fits "
            + "; ".join(" ".join(c) for c in sorted(cands))
            + " (name the framework or model more exactly)"
        )
    fw, mdl, prec = cands.pop()
    batches = sorted(
        {r.batch for r in rows if (r.framework, r.model, r.precision) == (fw, mdl, prec)}
    )
    if batch not in batches:
        raise UserError(
            f"DLPerf did not publish {fw} {mdl} {prec} at batch {batch} per GPU; "
            f"published batch sizes: {', '.join(map(str, batches))}"
        )
    return Config(fw, mdl, prec, batch)
