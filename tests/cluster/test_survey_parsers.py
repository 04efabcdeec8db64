"""The survey's parsers read real outputs: the 2xH200 host's and ones posted in public threads."""

from __future__ import annotations

from cluster_helpers import FIXTURES, H200, recorded

from kb.cluster.survey import gpu, ib, net, software


def test_gpu_query_reads_model_count_and_driver_of_the_h200_host() -> None:
    facts = gpu.parse_gpu_query(recorded(H200 / "nvidia-smi-csv.txt"))
    assert facts["gpu_count"] == 2
    assert facts["gpu_model"] == "NVIDIA H200"
    assert facts["driver_version"] == "580.159.04"
    assert [g["bus_id"] for g in facts["gpus"]] == ["00000000:00:06.0", "00000000:00:07.0"]


def test_gpu_query_says_zero_gpus_when_nvidia_smi_finds_none() -> None:
    assert gpu.parse_gpu_query("No devices were found\n") == {"gpu_count": 0}
    assert gpu.parse_gpu_query("NVIDIA-SMI has failed because it couldn't communicate") == {}


def test_smi_banner_gives_driver_and_the_newest_cuda_the_driver_supports() -> None:
    assert gpu.parse_smi_header(recorded(H200 / "nvidia-smi.txt")) == {
        "driver_version": "580.159.04",
        "cuda_version": "13.0",
    }


def test_loader_listing_resolves_the_system_nccl_behind_libnccl_so_2() -> None:
    text = recorded(H200 / "ldconfig.txt") + recorded(H200 / "nccl-libs.txt")
    facts = gpu.parse_loader(text)
    assert facts["nccl_system_version"] == "2.28.3"
    assert "13" in facts.get("cuda_runtime_versions", []) or "cudnn_system_versions" in facts


def test_loader_prefers_ld_library_path_over_the_ldconfig_cache() -> None:
    text = (
        "ldconfig /lib/x86_64-linux-gnu/libnccl.so.2 -> /usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3\n"
        "ldpath /opt/nccl/lib/libnccl.so.2 -> /opt/nccl/lib/libnccl.so.2.7.3\n"
    )
    facts = gpu.parse_loader(text)
    assert facts["nccl_system_version"] == "2.7.3"
    assert [x["version"] for x in facts["nccl_system_libraries"]] == ["2.7.3", "2.28.3"]


def test_framework_nccl_codes_of_old_and_new_pytorch_become_versions() -> None:
    # recorded on the H200 host: torch.cuda.nccl.version() -> (2, 28, 9)
    assert "(2, 28, 9)" in recorded(H200 / "versions.txt")
    assert gpu.nccl_code_to_version((2, 28, 9)) == "2.28.9"
    assert gpu.nccl_code_to_version(2708) == "2.7.8"  # NCCL < 2.9 encoding
    assert gpu.nccl_code_to_version(21803) == "2.18.3"  # NCCL >= 2.9 encoding
    assert gpu.nccl_code_to_version(None) is None


def test_probe_facts_name_what_is_missing_for_which_python() -> None:
    data = {
        "python": "3.12.3",
        "executable": "/usr/bin/python3",
        "dists": {"torch": "2.11.0", "nvidia-nccl-cu13": "2.28.9"},
        "torch_nccl": [2, 28, 9],
        "torch_cuda": "13.0",
    }
    facts, why = gpu.probe_facts(data, "python3")
    assert facts["torch_version"] == "2.11.0" and facts["nccl_version"] == "2.28.9"
    assert facts["nccl_pip_version"] == "2.28.9"
    assert facts["tensorflow_version"] is None
    assert why["tensorflow_version"] == "TensorFlow is not installed for python3 (/usr/bin/python3)"


def test_probe_reports_a_broken_torch_import_as_the_reason_for_no_nccl() -> None:
    data = {
        "python": "3.8.10",
        "executable": "/usr/bin/python3",
        "dists": {"torch": "1.6.0"},
        "torch_error": "OSError: libcudart.so.10.1: cannot open shared object file",
    }
    facts, why = gpu.probe_facts(data, "python3")
    assert facts["nccl_version"] is None
    assert "libcudart.so.10.1" in why["nccl_version"]


def test_ofed_info_versions_from_public_posts() -> None:
    soft = FIXTURES / "software"
    assert software.parse_ofed((soft / "ofed-4.0.txt").read_text()) == "4.0-2.0.0.1"
    assert software.parse_ofed((soft / "ofed-5.4.txt").read_text()) == "5.4-3.1.0.0"
    assert software.parse_ofed((soft / "ofed-24.10-no-colon.txt").read_text()) == "24.10-1.1.4.0"
    assert software.parse_ofed("bash: ofed_info: command not found") is None


def test_mpirun_version_of_the_h200_host_and_other_mpis() -> None:
    assert software.parse_mpirun_version(recorded(H200 / "versions.txt")) == ("4.1.6", None)
    assert software.parse_mpirun_version("HYDRA build details:\n    Version: 3.3.2") == (
        None,
        "MPICH",
    )


def test_horovod_check_build_with_nccl_and_with_nothing_built() -> None:
    soft = FIXTURES / "software"
    good = software.parse_horovod_build((soft / "horovod-check-build-nccl.txt").read_text())
    assert good == {
        "version": "0.22.1",
        "frameworks": ["TensorFlow", "PyTorch"],
        "controllers": ["MPI", "Gloo"],
        "operations": ["NCCL", "MPI", "Gloo"],
    }
    bare = software.parse_horovod_build((soft / "horovod-check-build-nothing.txt").read_text())
    assert bare is not None and bare["operations"] == [] and bare["version"] == "0.18.1"


def test_limits_of_the_h200_host() -> None:
    assert software.parse_ulimit_l(recorded(H200 / "ulimit.txt")) == "unlimited"
    assert software.parse_ulimit_l("65536\n") == 65536
    # df -h plus `mount` (two tmpfs mounts; the later one is the one in effect)
    assert software.parse_shm(recorded(H200 / "shm.txt")) == 256 * 2**30
    assert (
        software.parse_shm(
            "Filesystem 1024-blocks Used Available Capacity Mounted on\n"
            "shm 65536 0 65536 0% /dev/shm\n"
        )
        == 64 * 2**20
    )


def test_env_keeps_only_the_prefixes_that_steer_training() -> None:
    env = software.parse_env(recorded(H200 / "env-all.txt"))
    assert env == {"NCCL_NVLS_ENABLE": "0", "NCCL_VERSION": "2.28.3-1"}
    assert software.parse_env("HOROVOD_GPU_BROADCAST=NCLL\nSECRET_TOKEN=x\n") == {
        "HOROVOD_GPU_BROADCAST": "NCLL"
    }


def test_ibstatus_and_ibstat_outputs_from_public_posts() -> None:
    ports = ib.parse_ibstatus((FIXTURES / "ib" / "ibstatus-mlx4-connectx3.txt").read_text())
    assert [(p["device"], p["port"], p["state"], p["phys_state"]) for p in ports] == [
        ("mlx4_0", 1, "ACTIVE", "LinkUp"),
        ("mlx4_0", 2, "DOWN", "Polling"),
    ]
    assert ports[0]["rate"] == "40 Gb/sec (4X FDR10)" and ports[0]["link_layer"] == "InfiniBand"
    roce = ib.parse_ibstatus((FIXTURES / "ib" / "ibstatus-mlx5-roce-down.txt").read_text())
    assert {p["link_layer"] for p in roce} == {"Ethernet"} and not ib.active_ports(roce)
    init = ib.parse_ibstat((FIXTURES / "ib" / "ibstat-mlx5-initializing.txt").read_text())
    assert init == [
        {
            "device": "mlx5_5",
            "port": 1,
            "state": "INITIALIZING",
            "phys_state": "LinkUp",
            "rate": "200 Gb/sec",
            "link_layer": "InfiniBand",
        }
    ]
    active = ib.parse_ibstat((FIXTURES / "ib" / "ibstat-mlx5-active.txt").read_text())
    assert ib.active_ports(active)[0]["device"] == "mlx5_7"


def test_the_h200_host_has_no_ib_ports_and_only_rdma_cm() -> None:
    text = recorded(H200 / "ib.txt")
    # recorded: an empty /sys/class/infiniband, then `ls /dev/infiniband` -> rdma_cm
    assert ib.parse_ibstatus(text) == []
    assert "rdma_cm" in text


def test_sysfs_listing_of_the_h200_host_tells_the_virtio_nic_from_virtual_ones() -> None:
    info = net.parse_sys_net(recorded(H200 / "sys-class-net.txt"))
    assert "/devices/pci0000:00/" in info["eth0"]["path"]
    assert "/devices/virtual/" in info["ifb0"]["path"] and "/devices/virtual/" in info["lo"]["path"]
    assert info["lo"]["type"] == 772


def test_proc_net_of_the_h200_host_gives_ipv6_addresses_and_routes_without_ip() -> None:
    text = recorded(H200 / "proc-net.txt")
    route = text[text.index("Iface") : text.index("00000000000000000000000000000001")]
    inet6 = text[text.index("00000000000000000000000000000001") :]
    ifaces = net.parse_proc_net(route, inet6, "")
    assert "fd00::2/64" in ifaces["eth0"].addresses
    assert ifaces["eth0"].scopes["fe80::fc:ff:fe00:1/64"] == "link"


def test_proc_net_fib_trie_maps_ipv4_addresses_to_interfaces() -> None:
    proc = FIXTURES / "proc"
    ifaces = net.parse_proc_net(
        (proc / "route-vm.txt").read_text(),
        (proc / "if_inet6-vm.txt").read_text(),
        (proc / "fib_trie-vm.txt").read_text(),
    )
    assert "192.0.2.2/24" in ifaces["eth0"].addresses
    assert "127.0.0.1/8" in ifaces["lo"].addresses
