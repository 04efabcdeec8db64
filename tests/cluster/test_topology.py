"""`nvidia-smi topo -m` as printed on real machines: NVLink, PCIe only, SYS across sockets, NICs."""

from __future__ import annotations

import pytest
from cluster_helpers import FIXTURES

from kb.sysinfo import topology

TOPO = FIXTURES / "topo"


def parse(name: str) -> topology.Topology:
    return topology.parse((TOPO / name).read_text())


def test_h200_pair_over_nv18_with_ansi_header_and_command_frame() -> None:
    t = parse("h200-nv18.txt")
    assert t.gpus == ["GPU0", "GPU1"] and t.nics == []
    assert t.link("GPU0", "GPU1") == "NV18"
    assert (t.cpu_affinity["GPU0"], t.numa_affinity["GPU1"]) == ("0-31", "0")
    assert [f.severity for f in t.findings()] == ["ok"]
    assert not t.slow


def test_dlperf_test_bed_cube_mesh_and_its_one_nic() -> None:
    t = parse("dgx1-dlperf.txt")
    assert len(t.gpus) == 8 and t.nics == ["mlx5_0"]
    assert (t.link("GPU0", "GPU1"), t.link("GPU0", "GPU3"), t.link("GPU0", "GPU5")) == (
        "NV1",
        "NV2",
        "SYS",
    )
    assert [t.link(g, "mlx5_0") for g in t.gpus] == [
        "NODE",
        "NODE",
        "PIX",
        "PIX",
        "SYS",
        "SYS",
        "SYS",
        "SYS",
    ]
    assert t.nvlink_groups() == [t.gpus]  # SYS pairs do not matter: NVLink joins all eight
    notes = [f for f in t.findings() if f.severity == "note"]
    assert notes and notes[0].devices == ["GPU4", "GPU5", "GPU6", "GPU7"]
    assert "mlx5_0" in notes[0].text and not t.slow
    assert topology.differences(t, topology.reference()) == []


def test_dgx1_with_four_nics_gives_every_gpu_a_pix_nic() -> None:
    t = parse("dgx1-4nic.txt")
    assert t.nics == ["mlx5_0", "mlx5_2", "mlx5_1", "mlx5_3"]
    assert {t.link(g, t.nearest_nic(g)) for g in t.gpus} == {"PIX"}
    assert not t.slow and not [f for f in t.findings() if f.severity == "note"]


def test_pcie_only_k80_box_with_the_old_soc_legend() -> None:
    t = parse("k80-pcie-soc-legend.txt")
    assert t.gpus == ["GPU0", "GPU1", "GPU2", "GPU3"] and t.nics == ["mlx4_0"]
    assert (t.link("GPU0", "GPU1"), t.link("GPU1", "GPU2")) == ("PIX", "PHB")
    slow = [f for f in t.findings() if f.severity == "slow"]
    # each PIX pair has no NVLink; the pairs meet only at the host bridge; no GPU shares a switch with the NIC
    assert any("PHB" in f.text for f in slow)
    assert any("No GPU sits on the same PCIe switch as a NIC" in f.text for f in slow)
    assert t.slow


def test_sys_across_sockets_on_a_pcie_only_4x3090() -> None:
    t = parse("4x3090-phb-sys.txt")
    assert t.nvlink_groups() == [["GPU0"], ["GPU1"], ["GPU2"], ["GPU3"]]
    assert t.link("GPU0", "GPU2") == "SYS" and t.cpu_affinity["GPU2"] == "12-23,36-47"
    slow = [f for f in t.findings() if f.severity == "slow"]
    assert any("SYS" in f.text and "GPU0" in f.devices and "GPU3" in f.devices for f in slow)
    assert t.slow


def test_two_consumer_gpus_over_the_host_bridge_are_flagged() -> None:
    t = parse("2x3090-phb.txt")
    assert t.link("GPU0", "GPU1") == "PHB" and t.slow


def test_nic_columns_named_by_the_nic_legend() -> None:
    t = parse("v100-nic-legend.txt")
    assert t.nics == ["NIC0"] and t.nic_label("NIC0") == "mlx5_2"
    assert t.link("GPU0", "NIC0") == "NODE" and t.link("GPU7", "NIC0") == "SYS"
    assert t.to_json()["nics"] == [{"column": "NIC0", "name": "mlx5_2"}]
    # no GPU is PIX/PXB to the NIC: GPUDirect RDMA is off for all of them
    assert t.slow


def test_json_round_trip_keeps_links_and_findings() -> None:
    t = parse("dgx1-dlperf.txt")
    back = topology.Topology.from_json(t.to_json())
    cols = [*t.gpus, *t.nics]
    assert back.nics == t.nics
    assert all(back.link(a, b) == t.link(a, b) for a in cols for b in cols)
    assert [f.text for f in back.findings()] == [f.text for f in t.findings()]


@pytest.mark.parametrize(
    "link, words",
    [
        ("NV18", "a bonded set of 18 NVLinks"),
        ("PIX", "at most one PCIe bridge"),
        ("PXB", "several PCIe bridges"),
        ("PHB", "host bridge"),
        ("NODE", "one NUMA node"),
        ("SYS", "between CPU sockets"),
        ("SOC", "between CPU sockets"),
    ],
)
def test_every_link_type_is_explained_in_plain_words(link: str, words: str) -> None:
    assert words in topology.words(link)


def test_link_ranking_prefers_more_nvlinks_then_pcie_closeness() -> None:
    order = sorted(["SYS", "PIX", "NV1", "NODE", "NV12", "PHB", "PXB"], key=topology.rank)
    assert order == ["NV12", "NV1", "PIX", "PXB", "PHB", "NODE", "SYS"]


def test_text_without_a_matrix_gives_an_empty_topology() -> None:
    for text in (
        "",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
        "GPU0 GPU1\nnot a matrix at all",
    ):
        t = topology.parse(text)
        assert t.gpus == [] and t.findings() == []


def test_markdown_lists_the_matrix_the_link_words_and_the_findings() -> None:
    md = topology.to_markdown(parse("dgx1-dlperf.txt"))
    assert "| GPU4 | NV2 | SYS |" in md and "- `NODE`:" in md and "**note**" in md
    header, rows = topology.matrix_rows(parse("v100-nic-legend.txt"))
    assert header[-2:] == ["mlx5_2", "CPU affinity"] and rows[0][0] == "GPU0"
