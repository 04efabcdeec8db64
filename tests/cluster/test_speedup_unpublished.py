"""`speedup` with one shape DLPerf did not publish: that shape is reported as "not
published" and the others are still judged (issue 14), in JSON and in text."""

from __future__ import annotations

import json

import pytest

from kb.cli.main import main

BASE = [
    "speedup", "--framework", "tf2", "--model", "resnet50", "--precision", "fp32",
    "--batch-per-gpu", "128", "--throughput", "1x1=321.8", "--throughput", "1x8=2458.7",
]  # fmt: skip


def test_the_unpublished_shape_is_named_and_the_rest_judged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*BASE, "--throughput", "3x8=9000", "--throughput", "4x8=4000", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    verdicts = {f"{p['nodes']}x{p['gpus_per_node']}": p["verdict"] for p in doc["points"]}
    assert verdicts == {"1x1": "ok", "1x8": "ok", "4x8": "low", "3x8": "not published"}
    [three] = [p for p in doc["points"] if p["nodes"] == 3]
    assert three["published"] == ["1x1", "1x2", "1x4", "1x8", "2x8", "4x8"]
    assert doc["where"] == "inter-node"  # judged from the published 4x8


def test_in_text_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--throughput", "3x8=9000"]) == 0  # not published is no problem
    out = capsys.readouterr().out
    assert "3x8" in out and "not published (DLPerf has 1x1, 1x2, 1x4, 1x8, 2x8, 4x8)" in out
    assert "Every point DLPerf published is within 10 %" in out
