"""perftest in the catalogue: its release tags (`v4.4-0.37`, `25.10.0-0.128`,
`perftest-26.01.5`) read as versions without a `-`, every message of src/ classified, and
a line as ib_write_bw, ib_read_bw, ib_send_bw or ib_write_lat prints it (their leading
space included) matches the entry its source prints, with that entry's class."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import check_pasted_lines, label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import rdma_src  # noqa: E402


@pytest.mark.parametrize(
    ("tag", "version"),
    [
        ("V4.1-0.2", "4.1.0.2"),
        ("v4.4-0.37", "4.4.0.37"),
        ("4.4-0.29", "4.4.0.29"),
        ("25.10.0-0.128", "25.10.0.0.128"),
        ("perftest-26.01.5", "26.01.5"),
        ("26.04.17", "26.04.17"),
        ("v4.4-0.23-beta", None),
        ("debian/1.0", None),
    ],
)
def test_a_perftest_tag_is_a_version_without_a_dash(tag: str, version: str | None) -> None:
    assert rdma_src.perftest_version(tag) == version


def test_option_help_is_left_out_a_stderr_warning_is_a_warning() -> None:
    # shapes of src/perftest_parameters.c usage() and src/get_clock.c (25.10)
    src = r"""
static void usage(const char *argv0) {
	printf("  -a, --all ");
	printf(" Run sizes from 2 till 2^23\n");
	printf(" Warning: --cpu_util is deprecated\n");
	fprintf(stderr, "Conflicting CPU frequency values"
			" detected: %lf != %lf. CPU Frequency is not max.\n", mhz, m);
	fprintf(stderr," Unable to find the Infiniband/RoCE device\n");
}
"""
    got = {(lvl, tpl) for lvl, tpl, _ in rdma_src.file_messages("src/x.c", src)}
    assert got == {
        ("info", "Run sizes from 2 till 2^23"),
        ("info", "Warning: --cpu_util is deprecated"),
        (
            "error",
            "Conflicting CPU frequency values detected: %lf != %lf. CPU Frequency is not max.",
        ),
        ("error", "Unable to find the Infiniband/RoCE device"),
    }


def test_perftest_is_catalogued_over_its_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["perftest"].versions == "4.1.0.2-26.04.17"
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == "perftest"]
    assert row["messages"] > 1000
    assert row["classified"] == row["messages"] == row["causes"] + row["symptoms"] + row["benign"]
    causes = {m.cause for m in cat.by_library("perftest") if m.class_ == "cause"}
    assert causes == {"nccl-ib-missing", "memlock-limit", "nccl-ib-fabric-error"}


# (a line as perftest prints it, the label of its most specific entry)
LINES = [
    (" Unable to find the Infiniband/RoCE device", "cause/nccl-ib-missing"),
    (" Did not detect devices ", "cause/nccl-ib-missing"),  # ctx_find_dev, no device
    (" If device exists, check if driver is up", "cause/nccl-ib-missing"),
    ("IB device mlx5_3 not found", "cause/nccl-ib-missing"),  # -d mlx5_3 on a 2-HCA node
    ("Couldn't allocate MR", "cause/memlock-limit"),
    ("Couldn't allocate MR with error=12", "cause/memlock-limit"),
    ("Failed to modify QP 4713 to RTR", "cause/nccl-ib-fabric-error"),
    (" Unable to Connect the HCA's through the link", "cause/nccl-ib-fabric-error"),
    ("Completion with error at client", "cause/nccl-ib-fabric-error"),
    (  # a send completion in error: status 12, retry counter exceeded
        " Failed status 12: wr_id 0 syndrom 0x81",
        "cause/nccl-ib-fabric-error",
    ),
    (" Local lid 0x0 detected. Is an SM running?", "cause/nccl-ib-fabric-error"),  # 4.x
    ("Couldn't connect to 192.168.1.10:18515", "symptom/connection-failure"),
    (" Unable to init the socket connection", "symptom/connection-failure"),
    ("Couldn't create IB resources", "symptom/rdma-error"),
    (
        "Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}",
        "symptom/invalid-config",
    ),
    (  # get_clock.c: a CPU not at its top frequency; the measurement goes on
        "Conflicting CPU frequency values detected: 2100.000000 != 3000.000000. CPU Frequency "
        "is not max.",
        "benign",
    ),
    (" Number of qps   : 1\t\tTransport type : IB", "benign"),  # the parameter banner
]


@pytest.mark.parametrize(("line", "label"), LINES)
def test_a_perftest_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, "perftest")
    assert got == label, (line, template)


def test_a_pasted_cause_line_ranks_its_cause_first_a_benign_line_fires_nothing() -> None:
    check_pasted_lines(LINES)
