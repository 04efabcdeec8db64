"""The checks of the CUDA/framework/perf rules, run for real with /bin/sh against recorded
and crafted tool outputs: each one must say `fail` exactly when its problem is present."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from kb.checks.evaluate import CheckOutcome, evaluate
from kb.rules.knowledge import KnowledgeBase
from kb.rules.schema.models import Check

RunCheck = Callable[..., CheckOutcome]
Recorded = Callable[[str], str]


def check_of(kb: KnowledgeBase, check_id: str) -> Check:
    return kb.checks[check_id][1]


def test_a_cuda_library_in_the_ldconfig_cache_is_found(
    run_check: RunCheck, recorded: Recorded
) -> None:
    ldconfig = recorded("ldconfig.txt")
    found = run_check("find-cuda-library", {"library": "libcudart.so.13"}, {"ldconfig": ldconfig})
    assert found.status == "pass"
    assert found.params["found_path"].endswith("libcudart.so.13")


def test_a_cuda_library_of_another_version_is_reported_missing(
    run_check: RunCheck, recorded: Recorded
) -> None:
    ldconfig = recorded("ldconfig.txt")
    missing = run_check(
        "find-cuda-library",
        {"library": "libcudart.so.10.1"},
        {"ldconfig": ldconfig},
        {"LD_LIBRARY_PATH": "/nonexistent:/also/missing"},
    )
    assert missing.status == "fail"


def test_a_cuda_library_found_through_ld_library_path_counts(
    run_check: RunCheck, tmp_path: Path
) -> None:
    libdir = tmp_path / "cuda-10.1" / "lib64"
    libdir.mkdir(parents=True)
    (libdir / "libcudart.so.10.1").write_text("")
    found = run_check(
        "find-cuda-library",
        {"library": "libcudart.so.10.1"},
        {"ldconfig": ""},
        {"LD_LIBRARY_PATH": f"/nowhere:{libdir}"},
    )
    assert found.status == "pass"


@pytest.mark.parametrize(
    ("smi_cuda", "runtime", "status"),
    [
        ("13.0", "12.4.1", "pass"),  # driver newer than the runtime
        ("13.0", "13.0.48", "pass"),  # same major.minor, NGC-style three-part version
        ("10.2", "11.0.3", "fail"),  # DLPerf's 440.33 driver with a CUDA 11 container
        ("13.0", "13.1.0", "fail"),
    ],
)
def test_the_driver_is_compared_with_the_cuda_runtime(
    run_check: RunCheck, recorded: Recorded, smi_cuda: str, runtime: str, status: str
) -> None:
    smi = recorded("nvidia-smi.txt").replace("CUDA Version: 13.0", f"CUDA Version: {smi_cuda}")
    outcome = run_check(
        "driver-supports-cuda-runtime", tools={"nvidia-smi": smi}, env={"CUDA_VERSION": runtime}
    )
    assert outcome.status == status
    assert outcome.params["driver_cuda"] == smi_cuda


def test_the_driver_check_reads_nvcc_when_no_container_variable_is_set(
    run_check: RunCheck, recorded: Recorded
) -> None:
    versions = recorded("versions.txt")
    nvcc = "\n".join(ln for ln in versions.splitlines() if "Cuda" in ln or "release" in ln)
    outcome = run_check(
        "driver-supports-cuda-runtime",
        tools={"nvidia-smi": recorded("nvidia-smi.txt"), "nvcc": nvcc},
    )
    assert outcome.status == "pass"
    assert outcome.params["runtime_cuda"] == "13.0"


def _dmon(sm_values: list[int]) -> str:
    head = "# gpu     sm    mem    enc    dec    jpg    ofa \n# Idx      %      %      %      %      %      % \n"
    return head + "".join(f"    0     {v}      5      0      0      0      0 \n" for v in sm_values)


def test_gpus_idle_half_the_time_point_at_the_input_pipeline(run_check: RunCheck) -> None:
    outcome = run_check(
        "gpu-utilization-while-training",
        tools={"nvidia-smi": _dmon([95, 10, 90, 5, 98, 12, 92, 8, 96, 10])},
    )
    assert outcome.status == "fail"
    assert outcome.params["gpu_util"] == "52"


def test_busy_gpus_rule_out_the_input_pipeline(run_check: RunCheck) -> None:
    outcome = run_check("gpu-utilization-while-training", tools={"nvidia-smi": _dmon([97] * 10)})
    assert outcome.status == "pass"


def test_one_process_on_several_gpus_is_single_process_mode(run_check: RunCheck) -> None:
    single = "4242, 00000000:00:06.0\n4242, 00000000:00:07.0\n"
    outcome = run_check("one-process-per-gpu", tools={"nvidia-smi": single})
    assert outcome.status == "fail"
    assert outcome.params["shared_pid"] == "4242"
    multi = "4242, 00000000:00:06.0\n4243, 00000000:00:07.0\n"
    assert run_check("one-process-per-gpu", tools={"nvidia-smi": multi}).status == "pass"


def test_few_cpu_cores_per_gpu_are_reported(run_check: RunCheck) -> None:
    gpus = "".join(f"GPU {i}: Tesla V100-SXM2-16GB (UUID: GPU-{i})\n" for i in range(8))
    few = run_check("cpu-count-per-gpu", tools={"nproc": "16\n", "nvidia-smi": gpus})
    assert few.status == "fail"
    assert few.params["cpus_per_gpu"] == "2"
    dlperf_node = run_check("cpu-count-per-gpu", tools={"nproc": "48\n", "nvidia-smi": gpus})
    assert dlperf_node.status == "pass"


def _pip_show(tf: str, tfds: str) -> str:
    return (
        f"Name: tensorflow\nVersion: {tf}\nSummary: TensorFlow\n"
        f"Name: tensorflow-datasets\nVersion: {tfds}\nSummary: tensorflow/datasets\n"
    )


@pytest.mark.parametrize(
    ("tf", "tfds", "status"),
    [
        ("2.3.0", "4.0.1", "fail"),
        ("2.3.0", "3.2.1", "fail"),
        ("2.3.0", "3.0.0", "pass"),
        ("2.12.0", "4.9.2", "pass"),
    ],
)
def test_tfds_newer_than_3_0_0_with_tf_2_3_is_flagged(
    run_check: RunCheck, tf: str, tfds: str, status: str
) -> None:
    outcome = run_check("tfds-version-pin", tools={"python3": _pip_show(tf, tfds)})
    assert outcome.status == status
    assert outcome.params["tfds_version"] == tfds


def test_paddle_list_files_need_a_path_and_an_integer_label(
    run_check: RunCheck, tmp_path: Path
) -> None:
    data = tmp_path / "ILSVRC2012"
    data.mkdir()
    (data / "train_list.txt").write_text("train/n01440764/n01440764_10026.JPEG 0\n")
    (data / "val_list.txt").write_text("val/ILSVRC2012_val_00000001.JPEG 65\n")
    good = run_check("paddle-list-files", {"data_dir": str(data)})
    assert good.status == "pass"
    assert good.params["train_lines"] == "1"
    (data / "val_list.txt").write_text("val/ILSVRC2012_val_00000001.JPEG\n")
    assert run_check("paddle-list-files", {"data_dir": str(data)}).status == "fail"
    (data / "val_list.txt").unlink()
    assert run_check("paddle-list-files", {"data_dir": str(data)}).status == "fail"


def test_a_directory_with_raw_images_only_has_no_prepared_dataset(
    run_check: RunCheck, tmp_path: Path
) -> None:
    raw = tmp_path / "imagenet"
    (raw / "train" / "n01440764").mkdir(parents=True)
    assert run_check("dataset-layout", {"data_dir": str(raw)}).status == "fail"
    for i in range(3):
        (raw / f"train-{i:05d}-of-01024").write_text("")
    shards = run_check("dataset-layout", {"data_dir": str(raw)})
    assert shards.status == "pass"
    assert shards.params["tfrecord_shards"] == "3"


def test_multi_worker_yaml_without_all_reduce_alg_is_flagged(
    run_check: RunCheck, tmp_path: Path
) -> None:
    cfg = tmp_path / "multi_node_gpu.yaml"
    cfg.write_text(
        "runtime:\n  distribution_strategy: 'multi_worker_mirrored'\n"
        "  worker_hosts: '10.11.0.2:11111,10.11.0.3:11111'\n  task_index: 1\n"
    )
    bad = run_check("tf-strategy-config", {"config_file": str(cfg)})
    assert bad.status == "fail"
    assert bad.params == {"strategy": "multi_worker_mirrored", "task_index": "1"}
    cfg.write_text(cfg.read_text() + "  all_reduce_alg: 'nccl'\n")
    assert run_check("tf-strategy-config", {"config_file": str(cfg)}).status == "pass"
    docker_ips = cfg.read_text().replace("10.11.0.", "172.17.0.")
    cfg.write_text(docker_ips)
    assert run_check("tf-strategy-config", {"config_file": str(cfg)}).status == "fail"


def test_the_fix_for_the_strategy_yaml_produces_a_config_the_check_accepts(
    rules: KnowledgeBase, run_check: RunCheck, tmp_path: Path
) -> None:
    cfg = tmp_path / "multi_node_gpu.yaml"
    cfg.write_text("runtime:\n  distribution_strategy: 'mirrored'\n  num_gpus: 8\n")
    from kb.rules.placeholders import fill_command

    sed = rules.fixes["set-tf-distribution-strategy"].commands[1].run
    subprocess.run(["/bin/sh", "-c", fill_command(sed, {"config_file": str(cfg)})], check=True)
    assert "  all_reduce_alg: 'nccl'\n" in cfg.read_text()
    assert run_check("tf-strategy-config", {"config_file": str(cfg)}).status == "pass"


def test_a_repository_off_the_benchmark_commit_is_flagged(
    run_check: RunCheck, tmp_path: Path
) -> None:
    repo = tmp_path / "models"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (repo / "README").write_text("r2.3.0\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-qm", "release"], check=True)
    subprocess.run([*git, "tag", "r2.3.0"], check=True)
    at_tag = run_check("model-repo-commit", {"repo_dir": str(repo), "expected_ref": "r2.3.0"})
    assert at_tag.status == "pass"
    (repo / "README").write_text("master\n")
    subprocess.run([*git, "commit", "-qam", "newer"], check=True)
    moved = run_check("model-repo-commit", {"repo_dir": str(repo), "expected_ref": "r2.3.0"})
    assert moved.status == "fail"
    unknown = run_check("model-repo-commit", {"repo_dir": str(repo), "expected_ref": "fed7ba99"})
    assert unknown.status == "fail"


def test_dlperf_runner_assignments_without_export_are_found(
    run_check: RunCheck, tmp_path: Path
) -> None:
    runner = tmp_path / "runner.sh"
    runner.write_text(
        "MXNET_UPDATE_ON_KVSTORE=0 \nMXNET_EXEC_ENABLE_ADDTO=1 \n"
        "HOROVOD_CYCLE_TIME=0.1\nhorovodrun -np 8 python train.py\n"
    )
    found = run_check("script-env-not-exported", {"launch_script": str(runner)})
    assert found.status == "fail"
    assert found.params["unexported"] == "MXNET_UPDATE_ON_KVSTORE"
    runner.write_text(
        "export MXNET_UPDATE_ON_KVSTORE=0\nHOROVOD_CYCLE_TIME=0.1 horovodrun -np 8 python t.py\n"
    )
    assert run_check("script-env-not-exported", {"launch_script": str(runner)}).status == "pass"


def test_a_log_without_or_with_zero_throughput_is_flagged(
    run_check: RunCheck, tmp_path: Path
) -> None:
    log = tmp_path / "r50_b96_fp32_1.log"
    log.write_text("Epoch[0] Batch [20-40]\tSpeed: 2947.12 samples/sec\taccuracy=0.001270\n")
    assert run_check("throughput-lines-in-log", {"log_file": str(log)}).status == "pass"
    log.write_text("Epoch[0] Batch [0-20]\tSpeed: 0.00 samples/sec\taccuracy=0.000000\n")
    assert run_check("throughput-lines-in-log", {"log_file": str(log)}).status == "fail"
    log.write_text("loading data...\n")
    assert run_check("throughput-lines-in-log", {"log_file": str(log)}).status == "fail"


def test_the_gpu_memory_check_reads_the_recorded_h200(rules: KnowledgeBase) -> None:
    check = check_of(rules, "gpu-memory-headroom")
    outcome = evaluate(check, "0, NVIDIA H200, 0, 143771\n1, NVIDIA H200, 0, 143771\n", 0)
    assert outcome.status == "pass"
    assert outcome.finding == "NVIDIA H200 with 143771 MiB"
    small = evaluate(check, "0, Tesla T4, 0, 11019\n", 0)
    assert small.status == "fail"


@pytest.mark.parametrize(
    ("output", "status"),
    [
        ("hostname vm resolves to 10.11.0.2\n", "pass"),
        ("hostname vm resolves to 127.0.1.1\n", "fail"),
    ],
)
def test_a_hostname_resolving_to_loopback_breaks_paddle_launch(
    rules: KnowledgeBase, output: str, status: str
) -> None:
    assert evaluate(check_of(rules, "paddle-local-ip-resolution"), output, 0).status == status
