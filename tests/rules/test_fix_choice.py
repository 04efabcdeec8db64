"""Fixes chosen for the values found, as the rules say in data (issue 14).

A TensorFlow (or PyTorch) Horovod build is not told to `pip install mxnet`, nor given the
Horovod 0.19 line when it is 0.21; a versioned CUDA library on a node whose CUDA has
another major version gets the symlink fix last, with its caution. Real logs; the node's
CUDA comes from the real check run on this machine against a real H200's nvidia-smi output.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from kb.cli.main import main
from kb.rules.fixchoice import applies, major

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"
H200 = ROOT / "tests" / "shared" / "fixtures" / "h200-x2"
TF_BUILD = CORPORA / "batch-2026-11-30b" / "cmd-checkbuild-notes-built-without-nccl.log"
TORCH_BUILD = CORPORA / "dev-launch" / "horovod-2686-check-build-no-nccl.log"
MXNET = CORPORA / "batch-2026-11-29" / "horovod-1568-mxnet-extension-not-built-uuid-prefix.log"
CUDART = CORPORA / "dev-h200" / "h200-libcudart-10.1-missing.log"
MXNET_PIP = "mxnet-cu102mkl"


def _runs(capsys: pytest.CaptureFixture[str], log: Path) -> list[str]:
    assert main(["diagnose", "--json", str(log)]) == 1
    cause = json.loads(capsys.readouterr().out)["causes"][0]
    assert cause["id"] == "horovod-built-without-nccl"
    reinstall = next(d for d in cause["fix_details"] if d["id"] == "horovod-reinstall-with-nccl")
    return [c["run"] for c in reinstall["commands"]]


def test_a_tensorflow_build_gets_no_mxnet_line(capsys: pytest.CaptureFixture[str]) -> None:
    runs = _runs(capsys, TF_BUILD)
    assert not any(MXNET_PIP in r or "HOROVOD_WITH_MXNET" in r for r in runs)
    assert "HOROVOD_GPU_OPERATIONS=NCCL python -m pip install --no-cache-dir horovod" in runs


def test_a_horovod_021_build_gets_no_019_line(capsys: pytest.CaptureFixture[str]) -> None:
    runs = _runs(capsys, TORCH_BUILD)  # Horovod v0.21.2, [X] PyTorch
    assert not any("horovod==0.19.5" in r or MXNET_PIP in r for r in runs)
    assert "horovodrun --check-build" in runs


def test_an_mxnet_extension_keeps_the_mxnet_lines(capsys: pytest.CaptureFixture[str]) -> None:
    runs = _runs(capsys, MXNET)  # `Extension horovod.mxnet has not been built`
    assert any(MXNET_PIP in r for r in runs)
    assert any("horovod==0.19.5" in r for r in runs)  # its version is not known: kept


def _check_json(tmp_path: Path, runtime: str) -> Path:
    """`check --json` of the real driver/runtime check, nvidia-smi printing a real H200's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ntail -n +2 '{H200 / 'nvidia-smi.txt'}'\n", encoding="utf-8")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    out = tmp_path / f"check-{runtime}.json"
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "CUDA_VERSION": runtime}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(["check", "--json", "--check", "driver-supports-cuda-runtime"])
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    out.write_text(buf.getvalue(), encoding="utf-8")
    return out


def _walk(capsys: pytest.CaptureFixture[str], facts: Path) -> dict[str, Any]:
    capsys.readouterr()
    main(
        ["walk", "--json", str(CUDART), "--facts", str(facts),
         "--answer", "which-load-error=cuda-library-file"]
    )  # fmt: skip
    return dict(json.loads(capsys.readouterr().out))


@pytest.mark.slow
def test_a_symlink_across_cuda_majors_is_last_and_cautioned(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = _walk(capsys, _check_json(tmp_path, "13.0"))  # CUDA 13 host, libcudart.so.10.1
    assert doc["params"]["driver_cuda"] == "13.0"  # read by the check from nvidia-smi
    ids = [f["id"] for f in doc["fixes"]]
    assert ids[0] == "install-cuda-toolkit-version" and ids[-1] == "symlink-cuda-library-version"
    link = doc["fixes"][-1]
    assert "fragile" in link["caution"] and "found: 13.0" in link["caution"]


@pytest.mark.slow
def test_a_symlink_within_one_major_is_offered_first_without_caution(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = _walk(capsys, _check_json(tmp_path, "10.2"))  # runtime 10.2 wins over the driver's
    link = doc["fixes"][0]
    assert link["id"] == "symlink-cuda-library-version" and link["caution"] is None


def test_the_conditions() -> None:
    assert applies({"framework": ["mxnet"]}, {})  # not known: kept
    assert applies({"framework": ["mxnet"]}, {"framework": "MXNet"})
    assert not applies({"framework": ["mxnet"]}, {"framework": "TensorFlow"})
    versions = {"horovod_version": ["0.1[0-9].*"]}
    assert applies(versions, {"horovod_version": "0.19.5"})
    assert not applies(versions, {"horovod_version": "0.21.3"})
    assert [major(v) for v in ("libcudart.so.10.1", "13.0", "cuda-12.4", "x")] == [10, 13, 12, None]


def test_the_text_diagnosis_shows_the_same_choice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(TF_BUILD)]) == 1
    out = capsys.readouterr().out
    assert "HOROVOD_GPU_OPERATIONS=NCCL python -m pip install" in out
    assert MXNET_PIP not in out and "HOROVOD_WITH_MXNET" not in out  # version unknown: 0.19 stays


@pytest.mark.slow
def test_the_markdown_fix_block_shows_the_same_choice() -> None:
    from kb.authoring.checked import load_kb
    from kb.markdown.blocks import fix_block, fix_commands

    fix = load_kb().fixes["horovod-reinstall-with-nccl"]
    tf = {"framework": "TensorFlow", "horovod_version": "0.21.3"}
    assert not any(MXNET_PIP in c for c in fix_commands(fix, tf))
    assert MXNET_PIP not in fix_block(fix, tf)
    assert MXNET_PIP in fix_block(fix, {})  # nothing known: every case is shown
