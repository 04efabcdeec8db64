"""The launch rules' commands are safe to fill and carry every item of the seed notes.

Two guarantees beyond lint: a hostile value put in any `{placeholder}` of a check or
fix command stays one inert argument (a placeholder inside "..." would let `$(...)`
run, inside '...' it would split), shown by running each filled command in a real
shell whose PATH holds only stubs that record their arguments;
and each seed item this area owns (S2-S10, S13, S25, S29) can be found, in its exact
command form, in the rule files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kb.rules.placeholders import fill_command, names_in
from kb.rules.schema.models import ParamDoc
from kb.util.paths import rules_dir
from tests.shipped_rules import knowledge

AREAS = ("ssh", "mpi", "docker", "horovod")
FIXES = [
    "ssh-setup-passwordless-keys",
    "ssh-run-sshd-on-job-port",
    "launcher-pass-ssh-port",
    "docker-run-host-network",
    "docker-publish-ssh-port",
    "openmpi-host-slots",
    "openmpi-add-to-path",
    "openmpi-tcp-if-include",
    "openmpi-build-from-source",
    "openmpi-install-libnuma-dev",
    "openmpi-purge-hwloc-rebuild",
    "horovod-reinstall-with-nccl",
    "horovod-fix-gpu-op-vars",
]


def _templates() -> list[tuple[str, str]]:
    kb = knowledge()
    out: list[tuple[str, str]] = []
    for cid in kb.causes:
        if kb.sources[cid].display.split("/")[1] in AREAS:
            out += [(f"{cid}/{c.id}", c.run) for c in kb.checks_of(cid)]
    for fid in FIXES:
        out += [(f"{fid}[{i}]", c.run) for i, c in enumerate(kb.fixes[fid].commands)]
    return [(name, run) for name, run in out if names_in(run)]


HOSTILE = "$(echo >PWNED)`echo >PWNED2` a b;c"
STUBBED = [
    "ssh",
    "ssh-keygen",
    "ssh-copy-id",
    "ssh-keyscan",
    "cat",
    "chmod",
    "chown",
    "sed",
    "grep",
    "service",
    "apt-get",
    "apt",
    "docker",
    "wget",
    "gunzip",
    "tar",
    "sudo",
    "make",
    "mpirun",
    "horovodrun",
    "python",
    "python3",
    "nc",
    "ss",
    "env",
    "ldconfig",
    "ompi_info",
    "mpicxx",
    "head",
    "stat",
    "id",
    "hostname",
    "ls",
    "rm",
    "mkdir",
    "nproc",
]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A PATH of stubs that only record their arguments, one per line, in args.log."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in STUBBED:
        stub = bindir / name
        stub.write_text('#!/bin/sh\nfor a in "$@"; do printf \'%s\\n\' "$a" >> "$ARGS_LOG"; done\n')
        stub.chmod(0o755)
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize(("name", "template"), _templates(), ids=[n for n, _ in _templates()])
def test_a_hostile_value_stays_one_inert_argument_in_every_command(
    name: str, template: str, sandbox: Path
) -> None:
    values = dict.fromkeys(names_in(template), HOSTILE)
    with pytest.raises(ValueError):  # every value here has a kind that refuses it ...
        fill_command(template, values)
    as_text = {n: ParamDoc(description="-", kind="text") for n in values}
    command = fill_command(template, values, as_text)  # ... and quoting alone holds too
    log = sandbox / "args.log"
    env = {"PATH": str(sandbox / "bin"), "HOME": str(sandbox / "home"), "ARGS_LOG": str(log)}
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        capture_output=True,
        text=True,
        cwd=sandbox,
        env=env,
        timeout=30,
        check=False,
    )
    assert "Syntax error" not in proc.stderr, (name, proc.stderr)
    assert not (sandbox / "PWNED").exists() and not (sandbox / "PWNED2").exists(), name
    args = log.read_text().splitlines() if log.exists() else []
    assert all(HOSTILE in a for a in args if "PWNED" in a), (name, args)


def test_the_launch_fixes_are_all_used_and_have_commands() -> None:
    kb = knowledge()
    used = {f for c in kb.causes.values() for f in c.fixes}
    assert set(FIXES) <= used
    assert all(kb.fixes[f].commands for f in FIXES)


def _rule_text() -> str:
    root = rules_dir()
    files = [p for a in AREAS for p in sorted((root / a).glob("*.yaml"))]
    files += [root / "fixes" / f"{f}.yaml" for f in FIXES]
    files += [
        root / "symptoms" / f"{s}.yaml"
        for s in ("ssh-launch-fails", "mpi-launch-fails", "rendezvous-fails", "install-fails")
    ]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


SEED = {
    "S2 horovodrun": "horovodrun -np {np} -H {hosts} -p {port} --start-timeout 600",
    "S2 mpirun": "-bind-to none -map-by slot -x LD_LIBRARY_PATH -x PATH -mca pml ob1 -mca btl ^openib",
    "S2 plm_rsh_args": '-mca plm_rsh_args "-p "{port}" -q -o StrictHostKeyChecking=no"',
    "S2 ib0": "-mca btl_tcp_if_include ib0",
    "S2 passwordless": "ssh-copy-id -i ~/.ssh/id_rsa.pub -p {port} {user}@{peer}",
    "S3 peer login": "ssh root@10.11.0.3 -p 10001",
    "S4 host mode": "docker run -it --net=host",
    "S4 sshd port": "sed -i 's/^#\\?Port .*/Port '{port}'/' /etc/ssh/sshd_config",
    "S5 bridge -p": "docker run -it -p {port}:{port}",
    "S5 seed slip": "-v 9000:9000",
    "S6 openmpi install": "通信库没有正确安装",
    "S7 wget": "wget https://download.open-mpi.org/release/open-mpi/v4.0/openmpi-4.0.0.tar.gz",
    "S7 configure": "./configure --prefix=/usr/local/openmpi --with-cuda=/usr/local/cuda-10.2 "
    "--enable-orterun-prefix-by-default",
    "S7 configure (command)": "./configure --prefix={ompi_prefix} --with-cuda={cuda_home} "
    "--enable-orterun-prefix-by-default",
    "S8 libnuma": "sudo apt-get install -y libnuma-dev",
    "S9 PATH": "export PATH=$PATH:/usr/local/openmpi/bin",
    "S9 LD_LIBRARY_PATH": "export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/openmpi/lib",
    "S10 horovod": "HOROVOD_GPU_OPERATIONS=NCCL python -m pip install --no-cache-dir horovod",
    "S13 horovod settings": "horovod参数设置",
    "S25 NGC ssh": "容器间需要配置ssh免密登录",
    "S29 framework first": "python3 -m pip install gluonnlp==0.10.0 mxnet-cu102mkl==1.6.0.post0",
    "S29 issue 48": "https://github.com/Oneflow-Inc/DLPerf/issues/48",
}


@pytest.mark.parametrize("item", SEED, ids=list(SEED))
def test_each_owned_seed_item_is_in_the_rules(item: str) -> None:
    assert SEED[item] in _rule_text()
