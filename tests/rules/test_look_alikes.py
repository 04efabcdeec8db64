"""Healthy look-alikes of failure families: text that shares the words of a failure and
must not be diagnosed as it.

Each failure family's real variants (named at each case in the rule's
`rules/<area>/<id>.expect.yaml`) rank its cause first (tests/rules/test_ranks_first.py);
here, next to them, the text that only looks alike: a port clash of the host's sshd, advice
in limits.conf, a PyTorch-internal symbol with `nccl` in its name, Open MPI with CUDA
support, a queue pair set up fine, Gloo on loopback with a complete mesh, a DataLoader
worker that raised, an import of tensorflow-datasets, a check-build with NCCL, ACS read as
zero, NVLS disabled on a command line, optional NCCL plugins, clean RDMA counters, an sshd
directory made in a Dockerfile. Texts come from public threads outside every corpus.
"""

from __future__ import annotations

from tests.shipped_rules import fired, ranked

# ---------------------------------------------------------------- a port already taken


def test_a_host_sshd_port_clash_is_not_the_rendezvous_port() -> None:
    line = "sshd[812]: error: Bind to port 22 on 0.0.0.0 failed: Address already in use."
    assert "port-in-use" not in ranked(line)


# ---------------------------------------------------------------- locked memory too low


def test_limits_conf_advice_alone_is_not_a_failure() -> None:
    text = "*    soft    memlock        unlimited\n*    hard    memlock        unlimited\n"
    assert "memlock-limit" not in ranked(text)


# ---------------------------------------------------------------- NCCL symbol not resolved


def test_a_torch_internal_symbol_with_nccl_in_its_name_is_not_nccl_itself() -> None:
    line = (  # pytorch/pytorch#32638: a PyTorch build bug, not the NCCL library
        "ImportError: /usr/lib/python3.8/site-packages/torch/lib/libtorch_python.so: "
        "undefined symbol: _ZN5torch4cuda4nccl6detail16throw_nccl_errorE12ncclResult_t"
    )
    assert "nccl-missing-or-mismatch" not in ranked(line)


# ---------------------------------------------------------------- Paddle launched wrongly


def test_one_wait_for_endpoints_while_the_other_node_starts_is_not_paddle_launch_mode() -> None:
    # repeated, the same lines rank paddle-launch-mode first (rules/paddle/paddle-launch-mode.expect.yaml)
    wait = "server not ready, wait 3 sec to retry...\n"
    peers = (
        "not ready endpoints:['10.10.11.51:6070', '10.10.11.51:6071']\n"  # PaddlePaddle/PLSC#115
    )
    assert "paddle-launch-mode" not in ranked(wait + peers)


# ---------------------------------------------------------------- Open MPI build / CUDA support


def test_open_mpi_with_cuda_support_is_clean() -> None:
    assert ranked("mca:mpi:base:param:mpi_built_with_cuda_support:value:true") == []


# ---------------------------------------------------------------- CUDA IPC on one machine


# ---------------------------------------------------------------- zero samples found


def test_a_reader_that_finds_samples_is_clean() -> None:
    assert ranked("Found 5193 images belonging to 9 classes.") == []


# ---------------------------------------------------------------- research package shadowed


# ---------------------------------------------------------------- ssh waiting for an answer


def test_a_launch_past_the_host_key_question_is_not_ssh_passwordless_missing() -> None:
    # unanswered, it ranks ssh-passwordless-missing first (rules/ssh/ssh-passwordless-missing.expect.yaml)
    text = (  # horovod/horovod#189 (docs/running.md, 'Hangs due to SSH issues')
        "$ mpirun -np 16 -H server1:4,server2:4,server3:4,server4:4 python train.py\n"
        "The authenticity of host '<hostname> (<ip address>)' can't be established.\n"
        "RSA key fingerprint is xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx:xx.\n"
        "Are you sure you want to continue connecting (yes/no)?\n"
    )
    answered = text.replace("(yes/no)?", "(yes/no)? yes") + "Warning: Permanently added.\n"
    assert "ssh-passwordless-missing" not in ranked(answered)


# ---------------------------------------------------------------- mpirun daemons not started


# ---------------------------------------------------------------- Open MPI does not link


def test_a_link_failure_without_mpi_is_not_an_mpi_install_problem() -> None:
    text = (
        "gcc -o app main.o -lfoo\n"
        "/usr/bin/ld: cannot find -lfoo\n"
        "collect2: error: ld returned 1 exit status\n"
    )
    assert "mpi-build-deps" not in ranked(text)


# ---------------------------------------------------------------- queue pair cannot reach RTR


def test_queue_pair_setup_info_is_not_a_failure() -> None:
    line = (
        "aigc-maas-instance-leader-0:88:159 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 "
        "qpn 1047 mtu 5 query_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0} "
        "GID 0 (80FE/1A8A41FEFF21A75E) fifoRkey=0x15e6c5 fifoLkey=0x15e6c5"
    )
    assert ranked(line) == []


# ---------------------------------------------------------------- Gloo on loopback across nodes

LOOPBACK_WARNING = (
    "[rank1]:[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) "
    "address. Using the loopback address as fallback. Manually set the network interface to "
    "bind to with GLOO_SOCKET_IFNAME. (function operator())"
)


def test_gloo_on_loopback_with_a_complete_mesh_is_healthy() -> None:
    # a one-rank vLLM engine (public run log): loopback is right there
    text = (
        LOOPBACK_WARNING + "\n[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of "
        "connected peer ranks is : 0\n"
    )
    assert ranked(text) == []


# ---------------------------------------------------------------- DataLoader worker killed


def test_a_dataloader_worker_that_raised_is_not_shared_memory() -> None:
    # verl-project/verl#730: the worker raised (exit code 1); its own error is elsewhere
    line = (
        "RuntimeError: DataLoader worker (pid 3052708) exited unexpectedly with exit code 1. "
        "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give "
        "better error trace."
    )
    assert "nccl-shm-too-small" not in ranked(line)


# ---------------------------------------------------------------- model repository not on path


def test_a_similar_package_name_is_not_the_model_repository() -> None:
    # a failure no rule names: listed only as the symptom's likely causes
    assert fired("ModuleNotFoundError: No module named 'officialtools'") == []


# ---------------------------------------------------------------- tensorflow-datasets API


def test_importing_tensorflow_datasets_is_not_a_failure() -> None:
    assert ranked("import tensorflow_datasets as tfds\nprint(tfds.__version__)") == []


# ---------------------------------------------------------------- Horovod without NCCL


def test_a_check_build_with_nccl_on_one_line_is_healthy() -> None:
    assert ranked("Available Tensor Operations: [X] NCCL [ ] DDL [ ] CCL [X] MPI [X] Gloo") == []


# ---------------------------------------------------------------- ACS on the PCIe bridges


def test_an_acs_register_read_as_zero_or_written_is_healthy() -> None:
    assert ranked("$ sudo setpci -s 00:03.1 ECAP_ACS+6.w\n0000\n") == []
    # NVIDIA/nccl#304: the command that disables ACS
    cmd = "lspci | grep -i plx | awk '{print $1}' | xargs -I {} setpci -s {} f2a.w=0000\n"
    assert ranked(cmd) == []


# ---------------------------------------------------------------- hangs that go with NVLS


def test_disabling_nvls_on_a_command_line_is_not_a_failure() -> None:
    assert (
        ranked("NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 8G -g 8") == []
    )


# ---------------------------------------------------------------- a loader cannot load libnccl


def test_an_optional_nccl_plugin_that_fails_to_load_fires_nothing() -> None:
    # a missing CUDA runtime is cuda-lib-missing first (rules/cuda/cuda-lib-missing.expect.yaml)
    plugin = (
        "ubuntu:9621:9621 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : "
        "libnccl-net.so: cannot open shared object file: No such file or directory\n"
    )
    assert fired(plugin) == []


# ---------------------------------------------------------------- RDMA libraries do not match


def test_other_undefined_symbols_and_ib_settings_are_not_ib_missing() -> None:
    ucx_only = (
        "ucx_info: symbol lookup error: /share/software/user/open/ucx/1.7.0/lib/ucx/"
        "libuct_ib.so.0: undefined symbol: uct_ib_exp_qp_fill_attr"
    )
    assert "nccl-ib-missing" not in ranked(ucx_only)
    assert fired("cn76:155:155 [5] NCCL INFO NCCL_IB_DISABLE set by environment to 0.") == []


# ---------------------------------------------------------------- HCA error counters


def test_clean_rdma_counters_are_not_a_failure() -> None:
    counters = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/"
    text = (
        f"{counters}duplicate_request:0\n"
        f"{counters}local_ack_timeout_err:0\n"
        f"{counters}lifespan:10\n"
        f"{counters}np_cnp_sent:17269947\n"
        f"{counters}out_of_sequence:0\n"
    )
    assert fired(text) == []
    exporter = (
        'implied_nak_seq_err_total{ifName="mlx5_10",otel_scope_name="spiderpool_agent",'
        'podName="rdma-test-gpu-tool-s9bwg",port="1"} 0'
    )
    # spidernet-io/spiderpool#4112 (a metrics exporter listing the counters)
    assert fired(exporter) == []


# ---------------------------------------------------------------- works only on host network


def test_describing_the_network_modes_or_trying_host_mode_is_not_a_failure() -> None:
    seed = (
        "• docker的host模式\n"
        "• docker的bridge模式\n"
        "host模式，需要通过docker run时添加参数 --net=host 指定，该模式下表示容器和物理机共用端口\n"
    )
    assert "docker-network-mode" not in ranked(seed)
    # facebookarchive/caffe2#2446: host mode named, no bridge network, no failure
    trying = (
        "i will try to run the image on host mode to see whether it's worked, deploying with "
        "docker on multiple nodes will save a lot of efforts."
    )
    assert fired(trying) == []


# ---------------------------------------------------------------- the container's sshd cannot start


def test_creating_the_sshd_directory_in_a_dockerfile_is_not_a_failure() -> None:
    assert fired("RUN mkdir -p /var/run/sshd") == []
