"""The survey end to end: one script, one runner call, a document as `survey --json` prints it."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from cluster_helpers import FIXTURES, FakeNode

from kb.cluster import survey
from kb.runners.base import CommandResult, Runner
from kb.runners.local import LocalRunner

RAW_H200 = FIXTURES / "survey" / "h200-survey-raw.txt"


def test_the_survey_script_recorded_on_the_h200_host_gives_its_facts() -> None:
    """Real: kb.cluster.survey's own script, run on the 2xH200 GPU machine (no `ip` there)."""
    doc = survey.parse_output(RAW_H200.read_text())
    f = doc["facts"]
    assert doc["host"] == "vm" and f["hostname"] == "vm"
    assert (f["gpu_model"], f["gpu_count"], f["driver_version"], f["cuda_version"]) == (
        "NVIDIA H200",
        2,
        "580.159.04",
        "13.0",
    )
    assert (f["nccl_version"], f["nccl_system_version"]) == ("2.28.9", "2.28.3")
    assert (f["torch_version"], f["cudnn_version"], f["openmpi_version"]) == (
        "2.11.0",
        "9.19.0",
        "4.1.6",
    )
    assert f["gpu_topology"]["matrix"]["GPU0"]["GPU1"] == "NV18"
    assert (f["shm_size_bytes"], f["memlock_limit"]) == (256 * 2**30, "unlimited")
    assert f["ib_devices"] == [] and f["ib_verbs_devices"] == ["rdma_cm"]
    assert f["env"]["NCCL_NVLS_ENABLE"] == "0"
    ifaces = {i["name"]: i for i in f["interfaces"]}
    assert ifaces["eth0"]["virtual"] is False and "192.0.2.2/24" in ifaces["eth0"]["routable"]
    assert ifaces["ifb0"]["virtual"] and ifaces["lo"]["kind"] == "loopback"
    assert doc["unavailable"]["ofed_version"].startswith("ofed_info is not installed")
    assert "TensorFlow is not installed" in doc["unavailable"]["tensorflow_version"]
    assert set(survey.FACTS) <= set(f)


@pytest.mark.slow
def test_every_fact_is_a_value_or_null_with_a_reason_on_this_machine() -> None:
    doc = survey.collect(LocalRunner(), timeout=120)
    facts, why = doc["facts"], doc["unavailable"]
    assert doc["host"] == facts["hostname"] != "unknown"
    for name in survey.FACTS:
        assert name in facts
        assert (facts[name] is None) == (name in why), name
    lo = next(i for i in facts["interfaces"] if i["name"] == "lo")
    assert lo["virtual"] and lo["routable"] == []
    assert isinstance(facts["shm_size_bytes"], int) and facts["shm_size_bytes"] > 0


def test_a_fake_node_replaying_h200_outputs_is_read_through_its_path(
    fake_node: Callable[..., LocalRunner],
) -> None:
    runner = fake_node(
        FakeNode("gpu07", nccl="2.7.3", ofed=(FIXTURES / "software" / "ofed-5.4.txt").read_text())
    )
    doc = survey.collect(runner, timeout=120)
    f = doc["facts"]
    assert doc["host"] == "gpu07"
    assert (f["gpu_count"], f["nccl_system_version"], f["ofed_version"]) == (
        2,
        "2.7.3",
        "5.4-3.1.0.0",
    )
    assert f["nccl_system_libraries"][0]["file"].endswith("libnccl.so.2.7.3")
    assert f["openmpi_version"] == "4.1.6"
    assert doc["unavailable"]["horovod_nccl"]


def test_missing_tools_are_reported_as_not_installed_not_as_errors(tmp_path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    runner = LocalRunner(env={"PATH": f"{bindir}:/usr/bin:/bin"})
    doc = survey.collect(runner, timeout=60, python="no-such-python")
    why = doc["unavailable"]
    assert why["gpu_count"] == "nvidia-smi is not installed (not found on PATH)"
    assert why["gpu_topology"] == "nvidia-smi is not installed (not found on PATH)"
    assert why["torch_version"] == "no-such-python is not installed (not found on PATH)"
    assert "error" not in doc


@pytest.mark.slow
def test_a_hung_tool_costs_only_its_own_section(fake_node: Callable[..., LocalRunner]) -> None:
    spec = FakeNode("slow01", extra={"nvidia-smi": "#!/bin/sh\nsleep 30\n"})
    runner = fake_node(spec)
    start = time.monotonic()
    doc = survey.collect(runner, timeout=60, tool_timeout=1)
    assert time.monotonic() - start < 20
    assert doc["unavailable"]["gpu_count"] == "nvidia-smi did not answer within 1 s"
    assert doc["facts"]["hostname"] == "slow01" and doc["facts"]["shm_size_bytes"]


class _CutOff(Runner):
    """A runner whose connection dropped after the first sections came back."""

    name = "gpu09:22"

    def run(self, command: str, timeout: float) -> CommandResult:
        text = RAW_H200.read_text()
        return CommandResult(
            command,
            text[: text.index("@@dlperf-survey begin python")],
            "",
            None,
            1.0,
            "connection lost",
        )

    def close(self) -> None:
        return None


def test_a_survey_cut_off_keeps_what_came_and_says_why_the_rest_is_missing() -> None:
    doc = survey.collect(_CutOff())
    assert doc["host"] == "gpu09:22" and doc["error"] == "connection lost"
    assert doc["facts"]["gpu_count"] == 2
    assert doc["unavailable"]["ofed_version"].startswith("ofed_info output is missing") or doc[
        "unavailable"
    ]["ofed_version"].startswith("the survey did not finish")
    assert doc["facts"]["shm_size_bytes"] is None


def test_the_script_only_reads_it_redirects_to_nothing_but_dev_null_and_stdout() -> None:
    text = survey.script()
    targets = {t for _, t in re.findall(r"(?<![-=])(\d?>{1,2})\s*(&\d|[^\s;)\"']+)", text)}
    assert targets == {"&1", "/dev/null"}, targets
    for word in ("rm ", "mv ", "kill", "tee ", "sudo", "mkfs", "reboot"):
        assert word not in text


@pytest.mark.slow
def test_survey_cli_prints_one_json_object_or_a_readable_summary(capsys) -> None:
    import json

    from kb.cli.main import main

    assert main(["survey", "--json", "--one-line"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    doc = json.loads(out)
    assert set(doc) >= {"host", "facts", "unavailable"} and set(survey.FACTS) <= set(doc["facts"])
    assert main(["survey"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"Survey of {doc['host']}") and "Interfaces (* = virtual):" in text
    assert main(["survey", "--script"]) == 0
    assert capsys.readouterr().out == survey.script()
