"""Speedup verdicts against DLPerf: its own rows are healthy, degraded variants are found."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from cluster_helpers import FIXTURES, shipped_book, shipped_rules

from kb.cli.main import main
from kb.cluster import speedup
from kb.cluster.speedup import Point
from kb.util.errors import UserError

ROWS = speedup.load_reference()


def configs() -> dict[tuple[str, str, str, int], list[speedup.Ref]]:
    out: dict[tuple[str, str, str, int], list[speedup.Ref]] = defaultdict(list)
    for r in ROWS:
        out[(r.framework, r.model, r.precision, r.batch)].append(r)
    return out


def own_points(rows: list[speedup.Ref]) -> list[Point]:
    """DLPerf's published throughput as the user's: 1x1 plus the throughput each speedup implies."""
    base = next(r for r in rows if (r.nodes, r.gpus) == (1, 1))
    return [
        Point(
            r.nodes,
            r.gpus,
            r.throughput if (r.nodes, r.gpus) == (1, 1) else base.throughput * r.speedup,
        )
        for r in rows
    ]


def test_the_shipped_csv_has_all_572_published_results() -> None:
    assert len(ROWS) == 572
    assert len(configs()) > 100


def test_dlperfs_own_results_are_healthy_for_every_published_configuration() -> None:
    for (fw, model, prec, batch), rows in configs().items():
        if not any((r.nodes, r.gpus) == (1, 1) for r in rows):
            continue
        verdict = speedup.judge(speedup.Config(fw, model, prec, batch), own_points(rows))
        assert not verdict.low, (fw, model, prec, batch, verdict.points)
        assert verdict.where is None and verdict.causes == []


def test_dlperfs_published_throughputs_themselves_are_healthy() -> None:
    """The throughput column, not the speedup column: rounding in the source stays within 10 %."""
    for (fw, model, prec, batch), rows in configs().items():
        if any((r.nodes, r.gpus) == (1, 1) for r in rows):
            pts = [Point(r.nodes, r.gpus, r.throughput) for r in rows]
            assert not speedup.judge(speedup.Config(fw, model, prec, batch), pts).low, (
                fw,
                model,
                prec,
            )


@pytest.mark.parametrize(
    "factor, shape, where",
    [
        (0.8, (1, 1), "single-gpu"),
        (0.8, (1, 8), "intra-node"),
        (0.8, (4, 8), "inter-node"),
        (0.5, (2, 8), "inter-node"),
    ],
)
def test_degraded_variants_are_low_at_the_stage_that_loses(
    factor: float, shape: tuple[int, int], where: str
) -> None:
    config = speedup.resolve("tf2", "resnet50", "fp32", 128)
    pts = own_points(list(config.rows().values()))
    if shape == (1, 1):  # a slower single GPU: every other point keeps its own speedup
        pts = [Point(p.nodes, p.gpus, p.throughput * factor) for p in pts]
    else:
        pts = [
            Point(p.nodes, p.gpus, p.throughput * (factor if (p.nodes, p.gpus) == shape else 1))
            for p in pts
        ]
    v = speedup.judge(config, pts, shipped_book())
    assert v.low and v.where == where
    low = [(p["nodes"], p["gpus_per_node"]) for p in v.points if p["verdict"] == "low"]
    assert low == [shape]
    [symptom] = shipped_rules().symptoms_named_by(speedup.STAGES[where])
    assert (
        symptom
        == {
            "single-gpu": "slow-single-gpu",
            "intra-node": "low-single-node-speedup",
            "inter-node": "low-multi-node-speedup",
        }[where]
    )
    assert v.causes and all(c["params"]["symptom"] == symptom for c in v.causes)
    assert v.causes[0]["evidence"][0]["text"].startswith(f"{shape[0]}x{shape[1]}")


def test_exactly_at_the_threshold_is_ok_and_just_below_is_low() -> None:
    config = speedup.resolve("tensorflow2.3.0", "resnet50v1.5", "fp32", 128)
    ref = config.rows()
    edge = 321.8 * ref[(1, 8)].speedup * 0.9
    assert not speedup.judge(config, [Point(1, 1, 321.8), Point(1, 8, edge + 0.01)]).low
    assert speedup.judge(config, [Point(1, 1, 321.8), Point(1, 8, edge - 0.5)]).low


def test_the_guide_example_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "speedup",
            "--framework",
            "tf2",
            "--model",
            "resnet50",
            "--precision",
            "fp32",
            "--batch-per-gpu",
            "128",
            "--throughput",
            "1x1=321.8",
            "--throughput",
            "1x8=2458.7",
            "--throughput",
            "4x8=9400",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["reference"] == {
        "framework": "tensorflow2.3.0",
        "model": "resnet50v1.5",
        "precision": "fp32",
        "batch_per_gpu": 128,
    }
    assert out["points"][0] == {
        "nodes": 1,
        "gpus_per_node": 1,
        "throughput": 321.8,
        "reference_throughput": 321.8,
        "verdict": "ok",
    }
    assert out["points"][1] == {
        "nodes": 1,
        "gpus_per_node": 8,
        "throughput": 2458.7,
        "speedup": 7.64,
        "efficiency": 0.96,
        "reference_efficiency": 0.96,
        "verdict": "ok",
    }
    assert (
        out["points"][2]["efficiency"] == 0.91 and out["points"][2]["reference_efficiency"] == 0.91
    )
    assert (out["where"], out["reference_note"], out["causes"]) == (None, None, [])


def test_a_low_multi_node_point_exits_1_and_routes_to_the_network(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        [
            "speedup",
            "--framework",
            "tensorflow2.3.0",
            "--model",
            "resnet50v1.5",
            "--precision",
            "fp32",
            "--batch-per-gpu",
            "128",
            "--throughput",
            "1x1=321.8",
            "--throughput",
            "1x8=2458.7",
            "--throughput",
            "4x8=5000",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["where"] == "inter-node"
    assert out["causes"][0]["id"] == "nccl-ib-missing"
    assert {"id", "title", "confidence", "evidence", "params", "fixes"} <= set(out["causes"][0])


def test_paddle_amp_multi_node_says_dlperf_itself_was_low() -> None:
    config = speedup.resolve("paddle", "resnet50", "fp16", 224)
    assert config.precision == "amp"
    v = speedup.judge(config, [Point(1, 1, 1034.64), Point(4, 8, 1034.64 * 10.2)])
    assert not v.low
    assert v.reference_note and "0.32" in v.reference_note and "Paddle" in v.reference_note


@pytest.mark.parametrize(
    "fw, model, prec, expect",
    [
        ("tf2", "resnet50", "fp32", ("tensorflow2.3.0", "resnet50v1.5", "fp32")),
        ("TensorFlow2.3", "ResNet-50", "FP32", ("tensorflow2.3.0", "resnet50v1.5", "fp32")),
        ("tf1", "rn50", "amp", ("ngc20.03-tensorflow1.15.2", "resnet50v1.5", "amp")),
        ("ngc-pytorch", "bert", "fp16", ("ngc20.03-pytorch1.5.0", "bert-base", "amp")),
        (
            "pytorch1.6",
            "resnet50",
            "fp32+dataloader_workers8",
            ("pytorch1.6.0-examples", "resnet50v1.5", "fp32+dataloader_workers8"),
        ),
        ("gluoncv", "resnet50", "amp", ("mxnet1.6.0-gluoncv", "resnet50v1b", "amp")),
        ("mxnet", "bert", "fp32+no_clip", ("mxnet1.6.0-gluonnlp", "bert-base", "fp32+no_clip")),
        ("tf2", "bert", "AMP+XLA", ("tensorflow2.3.0", "bert-base", "amp+xla")),
    ],
)
def test_loose_names_resolve_to_one_published_configuration(
    fw: str, model: str, prec: str, expect: tuple[str, str, str]
) -> None:
    batch = next(r.batch for r in ROWS if (r.framework, r.model, r.precision) == expect)
    c = speedup.resolve(fw, model, prec, batch)
    assert (c.framework, c.model, c.precision) == expect


@pytest.mark.parametrize(
    "fw, model, prec, batch, words",
    [
        ("tensorflow", "resnet50", "fp32", 128, "ambiguous"),
        ("caffe", "resnet50", "fp32", 128, "unknown framework"),
        ("tf2", "vgg16", "fp32", 128, "no model 'vgg16'"),
        ("tf2", "resnet50", "int8", 128, "published no 'int8'"),
        ("tf2", "resnet50", "fp32", 64, "published batch sizes: 128"),
    ],
)
def test_unknown_ambiguous_or_unpublished_configurations_list_the_choices(
    fw: str, model: str, prec: str, batch: int, words: str
) -> None:
    with pytest.raises(UserError) as err:
        speedup.resolve(fw, model, prec, batch)
    assert words in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_an_unpublished_shape_or_a_missing_single_gpu_point_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = [
        "speedup",
        "--framework",
        "tf2",
        "--model",
        "resnet50",
        "--precision",
        "fp32",
        "--batch-per-gpu",
        "128",
    ]
    assert main([*base, "--throughput", "3x8=5000"]) == 2  # nothing published to judge
    assert "published: 1x1, 1x2, 1x4, 1x8, 2x8, 4x8" in capsys.readouterr().err
    assert main([*base, "--throughput", "1x8=2400"]) == 2
    assert "--throughput 1x1=VALUE" in capsys.readouterr().err
    assert main([*base, "--throughput", "8=2400"]) == 2
    assert (
        main(
            [
                "speedup",
                "--framework",
                "tensorflow",
                "--model",
                "resnet50",
                "--precision",
                "fp32",
                "--batch-per-gpu",
                "128",
                "--throughput",
                "1x1=300",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "ngc20.03-tensorflow1.15.2" in err and "tensorflow2.3.0" in err


def test_throughput_from_a_real_tf_cnn_benchmarks_log() -> None:
    p = speedup.throughput_from_log(str(FIXTURES / "logs" / "tf_cnn_benchmarks-1gpu.txt"), 1)
    assert p.throughput == 204.75 and "total images/sec" in p.text and p.line == 16


def test_throughput_from_step_lines_takes_the_median_after_warm_up(tmp_path: Path) -> None:
    """Synthetic lines in the formats of TF's TimeHistory, MXNet's Speedometer and Horovod's benchmark."""
    log = tmp_path / "train.log"
    log.write_text(
        "".join(
            [
                f"TimeHistory: 3.84 seconds, {v} examples/second between steps {i} and {i + 100}\n"
                for i, v in enumerate([100.0, 2400.0, 2450.0, 2460.0, 2455.0, 2458.0])
            ]
        )
    )
    assert speedup.throughput_from_log(str(log), 8).throughput == 2455.0
    log.write_text("Epoch[0] Batch [20-40]\tSpeed: 1200.5 samples/sec\taccuracy=0.1\n" * 3)
    assert speedup.throughput_from_log(str(log), 8).throughput == 1200.5
    log.write_text("Iter #0: 300.0 img/sec per GPU\nImg/sec per GPU: 305.2 +-1.2\n")
    assert speedup.throughput_from_log(str(log), 8).throughput == pytest.approx(8 * 302.6)
    log.write_text("Total img/sec on 8 GPU(s): 2441.6 +-9.6\n")
    assert speedup.throughput_from_log(str(log), 8).throughput == 2441.6
    log.write_text("loss 0.1\n")
    with pytest.raises(UserError):
        speedup.throughput_from_log(str(log), 1)


@pytest.mark.slow
def test_logs_on_the_command_line_feed_points_with_their_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = tmp_path / "1gpu.log"
    one.write_text("total images/sec: 321.8\n")
    eight = tmp_path / "8gpu.log"
    eight.write_text("total images/sec: 1500.0\n")
    code = main(
        [
            "speedup",
            "--framework",
            "tf2",
            "--model",
            "resnet50",
            "--precision",
            "fp32",
            "--batch-per-gpu",
            "128",
            "--log",
            f"1x1={one}",
            "--log",
            f"1x8={eight}",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["where"] == "intra-node"
    assert out["causes"][0]["evidence"][0]["file"] == str(eight)
    assert out["causes"][0]["evidence"][0]["line"] == 1


def test_markdown_of_a_verdict_has_a_row_per_point() -> None:
    config = speedup.resolve("tf2", "resnet50", "fp32", 128)
    verdict = speedup.judge(config, [Point(1, 1, 321.8), Point(1, 8, 2000)], shipped_book())
    md = speedup.to_markdown(verdict)
    assert "| 1x8 | 2000 |" in md and "low" in md and "Likely causes" in md


@pytest.mark.parametrize("value", ["-5", "0", "nan", "inf", "1e12", "abc"])
def test_a_throughput_that_is_no_measurement_is_refused_in_one_line(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["speedup", "--framework", "tf2", "--model", "resnet50", "--precision", "fp32"]
    code = main([*args, "--batch-per-gpu", "128", "--throughput", f"1x1={value}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert f"1x1={value}" in err[0] and "Traceback" not in err[0]


@pytest.mark.parametrize("batch", ["0", "-3"])
def test_a_batch_size_below_one_is_refused(batch: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["speedup", "--framework", "tf2", "--model", "resnet50", "--precision", "fp32"]
    assert main([*args, "--batch-per-gpu", batch, "--throughput", "1x1=321"]) == 2
    assert "--batch-per-gpu" in capsys.readouterr().err
