"""Helpers of the cluster tests: recorded outputs, fake GPU nodes, sshd nodes, network namespaces.

A fake node is a directory of scripts put first on PATH that print recorded real
outputs (`nvidia-smi`, `ofed_info`, `ip`, ...) and a `lib/` with a real
`libnccl.so.2 -> libnccl.so.2.X.Y` symlink that the survey resolves like the
loader's.  The same directory serves a `LocalRunner` (PATH in its environment) or
an sshd node from `tests/ssh/sshd_nodes.py` (its PATH starts with the node's bin/).
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kb.cluster.report.causes import CauseBook
from kb.rules import loader
from kb.rules.knowledge import KnowledgeBase
from kb.runners.base import CommandResult, Runner
from kb.runners.local import LocalRunner
from kb.util import paths

FIXTURES = Path(__file__).parent / "fixtures"
H200 = FIXTURES / "h200-x2"
SSH_TESTS = Path(__file__).parents[1] / "ssh"


@functools.cache
def shipped_rules() -> KnowledgeBase:
    """The shipped rules, loaded once for every test that needs their causes."""
    kb, _issues = loader.load(paths.rules_dir())
    return kb


def shipped_book() -> CauseBook:
    """A fresh `CauseBook` over the shipped rules: the findings' causes, titles and fixes."""
    return CauseBook(shipped_rules())


def recorded(path: Path) -> str:
    """A recorded output without the `$ command` first line and `[exit N]` last line."""
    lines = path.read_text().splitlines()
    if lines and lines[0].startswith("$ "):
        lines = lines[1:]
    if lines and lines[-1].startswith("[exit "):
        lines = lines[:-1]
    return "\n".join(lines) + "\n"


@dataclass
class FakeNode:
    """What a fake GPU node prints; every field is a recorded output (or None: tool absent)."""

    hostname: str
    nccl: str | None = "2.28.3"  # the system libnccl.so.2 points at libnccl.so.<nccl>
    ofed: str | None = None  # `ofed_info -s` output
    ip: str | None = None  # `ip addr show` output
    topo: str = recorded(H200 / "topo.txt")
    gpu_csv: str = recorded(H200 / "nvidia-smi-csv.txt")
    smi: str = recorded(H200 / "nvidia-smi.txt")
    mpirun: str | None = (
        "mpirun (Open MPI) 4.1.6\n\nReport bugs to http://www.open-mpi.org/community/help/\n"
    )
    horovod: str | None = None
    extra: dict[str, str] = field(default_factory=dict)  # more scripts: name -> body

    def install(self, root: Path) -> Path:
        """Write the node's bin/ (and lib/) under `root`; returns the bin directory."""
        bindir, lib, rec = root / "bin", root / "lib", root / "rec"
        for d in (bindir, lib, rec):
            d.mkdir(parents=True, exist_ok=True)
        for name, recording in (("topo", self.topo), ("csv", self.gpu_csv), ("smi", self.smi)):
            (rec / name).write_text(recording)
        _script(
            bindir / "nvidia-smi",
            f"""#!/bin/sh
case "$*" in
  "topo -m") cat {rec}/topo ;;
  --query-gpu=*) cat {rec}/csv ;;
  "") cat {rec}/smi ;;
  *) echo "nvidia-smi (replay): no recording for: $*" >&2; exit 2 ;;
esac
""",
        )
        _script(bindir / "hostname", f"#!/bin/sh\necho {shlex.quote(self.hostname)}\n")
        if self.nccl:
            real = lib / f"libnccl.so.{self.nccl}"
            real.write_bytes(b"")
            link = lib / "libnccl.so.2"
            if link.is_symlink():
                link.unlink()
            link.symlink_to(real.name)
            _script(
                bindir / "ldconfig",
                f"""#!/bin/sh
printf '\\tlibnccl.so.2 (libc6,x86-64) => {link}\\n'
""",
            )
        else:
            _script(bindir / "ldconfig", "#!/bin/sh\ntrue\n")
        for tool, text in (
            ("ofed_info", self.ofed),
            ("ip", self.ip),
            ("mpirun", self.mpirun),
            ("horovodrun", self.horovod),
        ):
            if text is not None:
                (rec / tool).write_text(text)
                _script(bindir / tool, f"#!/bin/sh\ncat {rec / tool}\n")
        for name, body in self.extra.items():
            _script(bindir / name, body)
        return bindir


def _script(path: Path, text: str) -> None:
    """Write an executable script; an existing entry (often a symlink to a real tool) is
    replaced, never written through."""
    if path.is_symlink() or path.exists():
        path.unlink()
    path.write_text(text)
    path.chmod(0o755)


def fake_path(bindir: Path) -> str:
    """PATH for a fake node: its scripts, then the system's basic tools (no nvidia-smi etc.)."""
    return f"{bindir}:/usr/bin:/bin"


# --- sshd nodes (tests/ssh/sshd_nodes.py, used as is) ---------------------------------------


def sshd_nodes():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(SSH_TESTS))
    import sshd_nodes

    return sshd_nodes


def ssh_runner(cluster: object, node: object) -> Runner:
    """The project's SSH runner for one sshd test node."""
    from kb.runners.hosts import Target
    from kb.runners.ssh import Session, SSHRunner
    from kb.runners.sshoptions import SSHOptions

    options = SSHOptions(
        known_hosts=cluster.known_hosts,  # type: ignore[attr-defined]
        identity_files=[cluster.client_key],  # type: ignore[attr-defined]
        connect_timeout=5,
        use_agent=False,
    )
    target = Target(node.spec, cluster.user, "127.0.0.1", node.port)  # type: ignore[attr-defined]
    return SSHRunner(target, Session(options))


# --- network namespaces --------------------------------------------------------------------


class NetnsRunner(Runner):
    """Runs commands inside a network namespace (its own interfaces and /sys/class/net)."""

    def __init__(self, ns: str, name: str, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.ns = ns
        self.inner = LocalRunner(name, env=env)
        self.ip = shutil.which("ip") or "ip"  # found with this process's PATH, not the node's

    def run(self, command: str, timeout: float) -> CommandResult:
        return self.inner.run(
            f"{self.ip} netns exec {shlex.quote(self.ns)} sh -c {shlex.quote(command)}", timeout
        )

    def close(self) -> None:
        return None


def netns_possible() -> str | None:
    if not shutil.which("ip"):
        return "iproute2 (`ip`) is not installed"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    return None
