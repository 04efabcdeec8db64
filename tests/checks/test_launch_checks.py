"""The launch rules' checks reach the right verdict on real command output.

Checks are read from the shipped rules and evaluated with the engine's own
`checkeval.evaluate`: on outputs recorded from real tools (Horovod's `--check-build`
from horovod/horovod#2686, Open MPI 4.1.6's `ompi_info` on the 2xH200 host), on
commands run here for real in a throw-away HOME, and against a real OpenSSH server
started on loopback (marked `ssh`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from kb.checks.evaluate import evaluate
from kb.rules import loader
from kb.rules.placeholders import fill_command
from kb.rules.schema.models import Check
from kb.util.paths import rules_dir
from tests import corpora_loader as corpora


@cache
def check(check_id: str) -> Check:
    kb, _ = loader.load(rules_dir())
    return kb.checks[check_id][1]


def run_check(check_id: str, values: dict[str, str], env: dict[str, str]) -> tuple[str, str]:
    """Run a check's command for real through /bin/sh; (status, finding)."""
    chk = check(check_id)
    cmd = fill_command(chk.run, values)
    proc = subprocess.run(
        ["/bin/sh", "-c", cmd], capture_output=True, text=True, env=env, timeout=chk.timeout
    )
    out = evaluate(chk, proc.stdout, proc.returncode, proc.stderr)
    return out.status, out.finding or ""


# ---------------------------------------------------------------- recorded outputs

CHECK_BUILD_NO_NCCL = corpora.path("dev-launch", "horovod-2686-check-build-no-nccl.log")


def test_check_build_without_nccl_fails_and_names_the_version() -> None:
    out = evaluate(check("horovod-check-build"), CHECK_BUILD_NO_NCCL.read_text(), 0)
    assert (out.status, out.finding) == ("fail", "Horovod 0.21.2")


def test_check_build_with_nccl_passes() -> None:
    text = CHECK_BUILD_NO_NCCL.read_text().replace("[ ] NCCL", "[X] NCCL")
    assert evaluate(check("horovod-check-build"), text, 0).status == "pass"


def test_missing_horovodrun_is_unavailable_not_an_error() -> None:
    out = evaluate(check("horovod-check-build"), "", 127, "sh: 1: horovodrun: not found")
    assert out.status == "unavailable"


OMPI_BTL_H200 = (
    '             MCA btl tcp: parameter "btl_tcp_if_include" (current value: "", data source: '
    "default, level: 1 user/basic, type: string)\n"
    '             MCA btl tcp: parameter "btl_tcp_if_exclude" (current value: "127.0.0.1/8,sppp", '
    "data source: default, level: 1 user/basic, type: string)\n"
)


def test_unrestricted_tcp_btl_is_fine_without_virtual_interfaces() -> None:
    out = "eth0\nifb0\nifb1\nlo\n" + OMPI_BTL_H200  # the 2xH200 host
    assert evaluate(check("ompi-tcp-candidate-interfaces"), out, 0).status == "pass"


def test_unrestricted_tcp_btl_with_docker0_present_fails() -> None:
    out = evaluate(check("ompi-tcp-candidate-interfaces"), "docker0\neth0\nlo\n" + OMPI_BTL_H200, 0)
    assert (out.status, out.finding) == ("fail", "unrestricted TCP BTL with docker0 present")


def test_tcp_btl_restricted_by_environment_passes_despite_docker0() -> None:
    out = "docker0\neth0\nlo\n" + OMPI_BTL_H200 + "OMPI_MCA_btl_tcp_if_include=eth0\n"
    assert evaluate(check("ompi-tcp-candidate-interfaces"), out, 0).status == "pass"


@pytest.mark.parametrize(
    ("output", "status", "finding"),
    [
        (
            "mpirun (Open MPI) 4.1.6\n\nReport bugs to http://www.open-mpi.org/community/help/\n",
            "pass",
            "Open MPI 4.1.6",
        ),
        ("HYDRA build details:\n    Version:                                 3.3.2\n", "fail", ""),
    ],
)
def test_openmpi_version_tells_open_mpi_from_other_mpis(
    output: str, status: str, finding: str
) -> None:
    out = evaluate(check("openmpi-version"), output, 0)
    assert (out.status, out.finding or "") == (status, finding)


@pytest.mark.parametrize(
    ("output", "exit_code", "status"),
    [
        (
            "/usr/local/openmpi/bin/orted\n/usr/local/openmpi/bin/mpirun\n"
            "LD_LIBRARY_PATH=:/usr/local/openmpi/lib\n",
            0,
            "pass",
        ),
        ("LD_LIBRARY_PATH=\n", 0, "fail"),
        ("ssh: connect to host 10.11.0.3 port 10001: Connection refused\n", 255, "error"),
    ],
)
@pytest.mark.slow
def test_remote_path_check_reads_what_a_non_interactive_shell_finds(
    output: str, exit_code: int, status: str
) -> None:
    assert evaluate(check("mpi-remote-path"), output, exit_code).status == status


@pytest.mark.slow
@pytest.mark.parametrize(
    ("output", "status"),
    [
        ("default {}\n", "fail"),
        ('bridge {"10001/tcp":[{"HostIp":"","HostPort":"10001"}]}\n', "pass"),
        ("host {}\n", "pass"),
    ],
)
def test_docker_inspect_flags_a_bridge_container_without_published_ports(
    output: str, status: str
) -> None:
    assert evaluate(check("docker-inspect-network"), output, 0).status == status


@pytest.mark.slow
@pytest.mark.parametrize(
    ("output", "status"),
    [
        ("IN-DOCKER\ndocker0\neth0\nlo\nend\n", "fail"),  # host network, default port 22
        ("IN-DOCKER\ndocker0\neth0\nlo\nPort 22\nend\n", "fail"),
        ("IN-DOCKER\ndocker0\neth0\nlo\nPort 10001\nend\n", "pass"),
        ("eth0\nlo\nend\n", "pass"),  # bare metal: port 22 is the host's own sshd
    ],
)
def test_sshd_on_port_22_is_flagged_only_inside_a_host_network_container(
    output: str, status: str
) -> None:
    assert evaluate(check("sshd-port-clash-host-mode"), output, 0).status == status


# ---------------------------------------------------------------- commands run for real


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    ssh = tmp_path / ".ssh"
    ssh.mkdir(mode=0o700)
    (ssh / "authorized_keys").write_text("ssh-ed25519 AAAA test\n")
    (ssh / "authorized_keys").chmod(0o600)
    tmp_path.chmod(0o755)
    yield tmp_path


def _env(**extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
    env.update(extra)
    return env


@pytest.mark.slow
def test_key_permissions_pass_on_a_tidy_ssh_directory(home: Path) -> None:
    assert run_check("ssh-key-permissions", {}, _env(HOME=str(home)))[0] == "pass"


def test_key_permissions_fail_on_a_world_writable_ssh_directory(home: Path) -> None:
    (home / ".ssh").chmod(0o777)
    status, finding = run_check("ssh-key-permissions", {}, _env(HOME=str(home)))
    assert (status, finding) == ("fail", f"fix ownership/mode of {home}/.ssh")


def test_key_permissions_fail_without_authorized_keys(home: Path) -> None:
    (home / ".ssh" / "authorized_keys").unlink()
    status, finding = run_check("ssh-key-permissions", {}, _env(HOME=str(home)))
    assert (status, finding) == ("fail", f"fix ownership/mode of {home}/.ssh/authorized_keys")


def _fake_mpicxx(tmp_path: Path) -> str:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "mpicxx"
    tool.write_text("#!/bin/sh\necho 'g++ -I/usr/local/openmpi/include -pthread'\n")
    tool.chmod(0o755)
    return f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}"


def test_gpu_op_check_fails_on_dlperfs_ncll_typo() -> None:
    status, finding = run_check(
        "horovod-gpu-op-env", {}, _env(HOROVOD_GPU_BROADCAST="NCLL", HOROVOD_GPU_ALLREDUCE="NCCL")
    )
    assert (status, finding) == ("fail", "invalid HOROVOD_GPU_BROADCAST=NCLL")


def test_gpu_op_check_fails_when_old_and_new_variables_are_mixed() -> None:
    status, _ = run_check(
        "horovod-gpu-op-env", {}, _env(HOROVOD_GPU_OPERATIONS="NCCL", HOROVOD_GPU_ALLREDUCE="NCCL")
    )
    assert status == "fail"


def test_gpu_op_check_passes_with_the_seed_install_variable() -> None:
    assert run_check("horovod-gpu-op-env", {}, _env(HOROVOD_GPU_OPERATIONS="NCCL"))[0] == "pass"


@pytest.mark.slow
def test_mpicxx_check_passes_when_the_wrapper_prints_a_compiler_line(tmp_path: Path) -> None:
    status, finding = run_check("mpicxx-usable", {}, _env(PATH=_fake_mpicxx(tmp_path)))
    assert (status, finding) == ("pass", f"mpicxx at {tmp_path}/bin/mpicxx")


def test_mpicxx_check_fails_when_open_mpi_is_not_on_path(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"  # only the tools the command needs besides shell builtins
    bindir.mkdir()
    (bindir / "head").symlink_to(shutil.which("head") or "/usr/bin/head")
    assert run_check("mpicxx-usable", {}, _env(PATH=str(bindir)))[0] == "fail"
