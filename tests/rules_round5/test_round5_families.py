"""Round 5: failure families recognised from variants nobody tuned on.

The fourth held-out corpus missed whole families, mostly with an empty diagnosis: an
mpirun that cannot start its daemons on a host name it cannot resolve, Open MPI (or
its wrapper) failing to link, a queue pair that cannot reach RTR with any errno, Gloo
falling back to loopback before its mesh fails, a DataLoader worker killed in a small
/dev/shm, a model repository's package missing in Python 2 or prose wording, a
tensorflow-datasets object without an attribute, a check-build listing pasted on one
line, a non-zero ACS register, and hangs that go away without NVLS. Each test feeds
the shipped rules short text from public threads outside every corpus (named at each
case), checks that the expected cause ranks first, and that the healthy look-alike
next to it stays clean.
"""

from __future__ import annotations

import pytest

from tests.shipped_rules import fired, ranked

ORTE_BLOCK = (
    "--------------------------------------------------------------------------\n"
    "ORTE was unable to reliably start one or more daemons.\n"
    "This usually is caused by:\n"
)


# ---------------------------------------------------------------- mpirun daemons not started


@pytest.mark.parametrize(
    ("source", "ssh_line"),
    [
        (
            "horovod/horovod#339 (-H localhost:4 read as a host name)",
            "ssh: Could not resolve hostname localhost:1: Temporary failure in name resolution",
        ),
        (
            "volcano-sh/volcano#2226 (worker pod not yet in DNS)",
            "ssh: Could not resolve hostname lm-horovod-job-worker-5.lm-horovod-job: "
            "Name or service not known",
        ),
    ],
)
def test_daemons_not_started_on_an_unresolvable_host_is_a_launch_failure(
    source: str, ssh_line: str
) -> None:
    assert ranked(ssh_line + "\n" + ORTE_BLOCK)[:1] == ["mpi-launch-failure"], source


# ---------------------------------------------------------------- Open MPI does not link


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "open-mpi/ompi#13273 (bundled PRRTE against OpenPMIx 6)",
            "/usr/bin/ld: ../../../src/.libs/libprrte.so: undefined reference to "
            "`pmix_show_help_add_dir'\n"
            "make[4]: *** [Makefile:757: prted] Error 2\n",
        ),
        (
            "pmodels/mpich#993 (the MPI build cannot link its example)",
            "../bin/mpicc   -o cpi cpi.o  -lm\n"
            "/usr/bin/ld: cannot find -lmpl\n"
            "collect2: ld returned 1 exit status\n",
        ),
        ("NVIDIA/nccl-tests#34 (MPI_HOME without libmpi)", "/usr/bin/ld:cannot find -lmpi\n"),
        (
            "OpenSees/OpenSees#86 (mpi_f77 gone since Open MPI 3)",
            "/usr/bin/ld:    cannot find -lmpi_f77\ncollect2: error:  ld returned 1 exit status\n",
        ),
    ],
)
def test_an_mpi_library_that_does_not_link_is_mpi_build_deps(source: str, text: str) -> None:
    assert ranked(text)[:1] == ["mpi-build-deps"], source


def test_a_link_failure_without_mpi_is_not_an_mpi_install_problem() -> None:
    text = (
        "gcc -o app main.o -lfoo\n"
        "/usr/bin/ld: cannot find -lfoo\n"
        "collect2: error: ld returned 1 exit status\n"
    )
    assert "mpi-build-deps" not in ranked(text)


# ---------------------------------------------------------------- queue pair cannot reach RTR


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "RCCL on ROCm quoting its last warning (public JAX run log)",
            "Last RCCL warning: 'Call to ibv_modify_qp failed with 110 Connection timed out, "
            "on dev mlx5_0:1, curr state INIT, next state RTR,",
        ),
        (
            "NVIDIA/nccl-tests#185 (older wording)",
            "misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error "
            "Network is unreachable",
        ),
        (
            "uccl-project/uccl#641 (another RDMA library)",
            "Failed to modify QP to RTR: Connection timed out\nerrno: 110\n",
        ),
    ],
)
def test_a_queue_pair_that_cannot_reach_its_peer_is_an_ib_fabric_error(
    source: str, text: str
) -> None:
    assert ranked(text)[:1] == ["nccl-ib-fabric-error"], source


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


@pytest.mark.parametrize(
    ("source", "mesh_error"),
    [
        (
            "verl-project/verl#967",
            "RuntimeError: Gloo connectFullMesh failed with "
            "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        ),
        ("aws-samples/aws-do-eks#50", "RuntimeError: Gloo connectFullMesh failed ..."),
    ],
)
def test_gloo_on_loopback_whose_mesh_fails_is_the_wrong_interface(
    source: str, mesh_error: str
) -> None:
    assert ranked(LOOPBACK_WARNING + "\n" + mesh_error)[:1] == ["nccl-wrong-interface"], source


def test_gloo_on_loopback_with_a_complete_mesh_is_healthy() -> None:
    # a one-rank vLLM engine (public run log): loopback is right there
    text = (
        LOOPBACK_WARNING + "\n[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of "
        "connected peer ranks is : 0\n"
    )
    assert ranked(text) == []


# ---------------------------------------------------------------- DataLoader worker killed


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "jackyjsy/CVPR21Chal-SLR#5",
            "RuntimeError: DataLoader worker (pid(s) 49) exited unexpectedly",
        ),
        (
            "Megvii-BaseDetection/YOLOX#1422",
            '  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/dataloader.py", '
            "line 1142, in _get_data\n"
            "RuntimeError: DataLoader worker (pid(s) 197) exited unexpectedly\n",
        ),
    ],
)
def test_a_dataloader_worker_killed_without_an_error_is_shared_memory(
    source: str, text: str
) -> None:
    assert ranked(text)[:1] == ["nccl-shm-too-small"], source


def test_a_dataloader_worker_that_raised_is_not_shared_memory() -> None:
    # verl-project/verl#730: the worker raised (exit code 1); its own error is elsewhere
    line = (
        "RuntimeError: DataLoader worker (pid 3052708) exited unexpectedly with exit code 1. "
        "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give "
        "better error trace."
    )
    assert "nccl-shm-too-small" not in ranked(line)


# ---------------------------------------------------------------- model repository not on path


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "EdjeElectronics/...-Windows-10#68 (title, lower case, no quotes)",
            "Error: no module named object_detection",
        ),
        (
            "MixPose/MixPose-Jetson-Nano#1 (quoted in prose)",
            'i tried running the code "Object_detection_webcam.py" but got the error " No '
            "module named 'object_detection'\". I tried looking for the file",
        ),
        (
            "tensorflow/models#3690 (Python 2, a sub-package)",
            "ImportError: No module named official.resnet",
        ),
    ],
)
def test_a_model_repository_package_missing_is_pythonpath(source: str, text: str) -> None:
    assert ranked(text)[:1] == ["pythonpath-missing"], source


def test_a_similar_package_name_is_not_the_model_repository() -> None:
    # a failure no rule names: listed only as the symptom's likely causes
    assert fired("ModuleNotFoundError: No module named 'officialtools'") == []


# ---------------------------------------------------------------- tensorflow-datasets API


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "tensorflow/datasets#2957 (title, no 'module' prefix)",
            "Unable to import tensorflow_datasets, 'tensorflow_datasets.core.download' has no "
            "attribute 'checksums'",
        ),
        (
            "ExpectationMax/medical_ts_datasets#3",
            "AttributeError: module 'tensorflow_datasets.core' has no attribute "
            "'disallow_positional_args'",
        ),
    ],
)
def test_a_tensorflow_datasets_object_missing_an_attribute_is_tfds_version(
    source: str, text: str
) -> None:
    assert ranked(text)[:1] == ["tfds-version"], source


def test_importing_tensorflow_datasets_is_not_a_failure() -> None:
    assert ranked("import tensorflow_datasets as tfds\nprint(tfds.__version__)") == []


# ---------------------------------------------------------------- Horovod without NCCL


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "horovod/horovod#2686 (listing collapsed on one line)",
            "Available Frameworks: [ ] TensorFlow [X] PyTorch [ ] MXNet Available Controllers: "
            "[ ] MPI [X] Gloo Available Tensor Operations: [ ] NCCL [ ] DDL [ ] CCL [ ] MPI "
            "[X] Gloo",
        ),
        (
            "horovod/horovod#1399 (nothing built)",
            "Available Tensor Operations: [ ] NCCL [ ] DDL [ ] MLSL [ ] MPI [ ] Gloo",
        ),
    ],
)
def test_a_check_build_without_nccl_on_one_line_is_horovod_without_nccl(
    source: str, text: str
) -> None:
    assert ranked(text)[:1] == ["horovod-built-without-nccl"], source


def test_a_check_build_with_nccl_on_one_line_is_healthy() -> None:
    assert ranked("Available Tensor Operations: [X] NCCL [ ] DDL [ ] CCL [X] MPI [X] Gloo") == []


# ---------------------------------------------------------------- ACS on the PCIe bridges


def test_an_acs_register_value_that_is_not_zero_is_a_p2p_failure() -> None:
    # NVIDIA/nccl#2079: a 2-GPU deadlock, fixed with setpci ECAP_ACS+6.w=0000
    text = (
        "both behind AMD Starship/Matisse GPP bridges that had ACS enabled (ACSCtl: 0x001d = "
        "SrcValid+, ReqRedir+, CmpltRedir+,\n"
        "  UpstreamFwd+), which forced P2P traffic through the IOMMU instead of direct "
        "GPU-to-GPU, causing NCCL to hang.\n"
    )
    assert ranked(text)[:1] == ["nccl-p2p-failure"]


def test_an_acs_register_read_as_zero_or_written_is_healthy() -> None:
    assert ranked("$ sudo setpci -s 00:03.1 ECAP_ACS+6.w\n0000\n") == []
    # NVIDIA/nccl#304: the command that disables ACS
    cmd = "lspci | grep -i plx | awk '{print $1}' | xargs -I {} setpci -s {} f2a.w=0000\n"
    assert ranked(cmd) == []


# ---------------------------------------------------------------- hangs that go with NVLS


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            "NVIDIA/nccl#2167 (title)",
            "[BUG] NCCL 2.30.4 NVLS code path hangs MoE expert weight loading on 8x DGX Spark "
            "(sm_121, no NVLink); 2.30.3 works",
        ),
        (
            "NVIDIA/JAX-Toolbox#331",
            "NVLS was disabled due to a known issue in NCCL 2.17 that caused intermittent hangs.",
        ),
    ],
)
def test_a_hang_that_goes_with_nvls_is_the_nvls_fabric(source: str, text: str) -> None:
    assert ranked(text)[:1] == ["nccl-nvls-fabric"], source


def test_disabling_nvls_on_a_command_line_is_not_a_failure() -> None:
    assert (
        ranked("NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 8G -g 8") == []
    )
