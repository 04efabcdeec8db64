"""Real OpenSSH servers on 127.0.0.1 that play GPU nodes, for the SSH tests and the benchmark.

Each node is one `/usr/sbin/sshd -D -e -f CONFIG` on a free port with its own host key,
`authorized_keys`, and a session environment set by sshd's `SetEnv`:
`PATH=<node>/bin`, holding links to the standard tools (no python3) and an `nvidia-smi`
that replays the real outputs recorded on a 2xH200 host (`fixtures/h200-x2/`), and `HOME=<node>/home` (an empty home: the
login shell reads no rc files, as on a clean node).  Every node has its own client key
and an `ssh` wrapper on its PATH pointing the real OpenSSH client at the cluster's
known_hosts, so node-to-node logins are real too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
FIXTURES = Path(__file__).parent / "fixtures" / "h200-x2"
# The standard tools a node offers (linked into its bin/); no python3, so checks that import
# frameworks report "unavailable" quickly instead of spending seconds importing on 2 cores.
TOOLS = (
    "sh",
    "bash",
    "cat",
    "grep",
    "egrep",
    "sed",
    "awk",
    "tr",
    "cut",
    "head",
    "tail",
    "sleep",
    "timeout",
    "ls",
    "df",
    "env",
    "uname",
    "id",
    "getent",
    "ip",
    "ss",
    "ps",
    "nproc",
    "find",
    "readlink",
    "basename",
    "dirname",
    "wc",
    "sort",
    "uniq",
    "stat",
    "touch",
    "mkdir",
    "xargs",
    "yes",
    "mount",
    "ping",
    "nc",
    "true",
    "false",
    "test",
    "printf",
    "echo",
    "date",
    "tee",
    "which",
    "lsmod",
    "ulimit",
    "free",
    "hostname",
)
NVIDIA_SMI_RECORDINGS = {  # arguments -> recorded output file
    "": "nvidia-smi.txt",
    "topo -m": "topo.txt",
    "nvlink -s": "nvlink.txt",
    "--query-gpu=index,name,driver_version,pci.bus_id,memory.total,persistence_mode "
    "--format=csv": "nvidia-smi-csv.txt",
}


def have_sshd() -> bool:
    return os.access(SSHD, os.X_OK) and shutil.which("ssh-keygen") is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keygen(path: Path, passphrase: str = "") -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", path.name, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def _replay_script() -> str:
    cases = "\n".join(f'  "{args}") f={name} ;;' for args, name in NVIDIA_SMI_RECORDINGS.items())
    return f"""#!/bin/sh
# nvidia-smi, replaying outputs recorded on a real 2xH200 host ({FIXTURES.name})
case "$*" in
{cases}
  *) echo "nvidia-smi (replay): no recording for: nvidia-smi $*" >&2; exit 2 ;;
esac
sed '1d;$d' "{FIXTURES}/$f"
exit "$(tail -n 1 "{FIXTURES}/$f" | tr -dc 0-9)"
"""


@dataclass
class Node:
    name: str
    root: Path
    port: int
    user: str
    proc: subprocess.Popen[bytes] | None = None
    host_key: Path = field(init=False)

    def __post_init__(self) -> None:
        self.host_key = self.root / "hostkey"

    @property
    def spec(self) -> str:
        return f"{self.user}@127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        return (self.root / "sshd.log").read_text(errors="replace")

    def start(self) -> None:
        log = open(self.root / "sshd.log", "ab")  # noqa: SIM115 - sshd keeps it
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.root / "sshd_config")],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd for {self.name} exited: {self.log[-500:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)
        raise RuntimeError(f"sshd for {self.name} did not listen on {self.port}")

    def kill(self) -> None:
        """SIGKILL the server and everything it started (sessions, commands): a dead node."""
        if self.proc is None:
            return
        pids = [self.proc.pid, *descendants(self.proc.pid)]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()
        self.proc = None

    def accepted_logins(self) -> int:
        return self.log.count("Accepted publickey")


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class Cluster:
    """N nodes, a client key for dlperf-help, and a known_hosts file that knows them all."""

    def __init__(self, root: Path, count: int, user: str | None = None) -> None:
        self.root = root
        self.user = user or os.environ.get("USER") or _whoami()
        self.client_key = keygen(root / "client_key")
        self.known_hosts = root / "known_hosts"
        self.nodes = [self._make(i) for i in range(count)]
        lines = [
            f"[127.0.0.1]:{n.port} {(n.root / 'hostkey.pub').read_text().split(' ')[0]} "
            f"{(n.root / 'hostkey.pub').read_text().split(' ')[1]}"
            for n in self.nodes
        ]
        self.known_hosts.write_text("\n".join(lines) + "\n")
        for node in self.nodes:
            self.authorize(node, *self.nodes)

    def _make(self, index: int) -> Node:
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        name = f"gpu{index + 1:02d}"
        root = self.root / name
        (root / "bin").mkdir(parents=True)
        (root / "home").mkdir()
        node = Node(name, root, free_port(), self.user)
        keygen(node.host_key)
        keygen(root / "id_node")
        (root / "authorized_keys").write_text((self.root / "client_key.pub").read_text())
        (root / "sshd_config").write_text(f"""Port {node.port}
ListenAddress 127.0.0.1
HostKey {node.host_key}
PidFile none
AuthorizedKeysFile {root}/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UseDNS no
MaxStartups 200:30:400
MaxSessions 32
LogLevel INFO
SetEnv PATH={root}/bin HOME={root}/home
""")
        (root / "ssh_config").write_text(f"""IdentityFile {root}/id_node
IdentitiesOnly yes
UserKnownHostsFile {self.root}/known_hosts
GlobalKnownHostsFile /dev/null
StrictHostKeyChecking yes
""")
        for tool in TOOLS:
            real = shutil.which(tool, path="/usr/bin:/bin:/usr/sbin:/sbin")
            if real and not (root / "bin" / tool).exists():
                (root / "bin" / tool).symlink_to(real)
        _script(root / "bin" / "ssh", f'#!/bin/sh\nexec /usr/bin/ssh -F {root}/ssh_config "$@"\n')
        (root / "bin" / "hostname").unlink(missing_ok=True)
        _script(root / "bin" / "hostname", f"#!/bin/sh\necho {name}\n")
        _script(root / "bin" / "nvidia-smi", _replay_script())
        return node

    def authorize(self, node: Node, *sources: Node) -> None:
        """Let `sources` log in to `node` (besides dlperf-help's own key)."""
        keys = [(self.root / "client_key.pub").read_text()]
        keys += [(s.root / "id_node.pub").read_text() for s in sources]
        (node.root / "authorized_keys").write_text("".join(keys))

    def start(self) -> Cluster:
        for node in self.nodes:
            node.start()
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()

    def hostfile(self, path: Path, slots: int = 8) -> Path:
        """An MPI hostfile naming the nodes by alias (`gpu01 slots=8`); see `ssh_config`."""
        path.write_text("".join(f"{n.name} slots={slots}\n" for n in self.nodes))
        return path

    def ssh_config(self, path: Path) -> Path:
        """An ~/.ssh/config giving each alias its address, port, user and key."""
        path.write_text(
            "".join(
                f"Host {n.name}\n  HostName 127.0.0.1\n  Port {n.port}\n  User {n.user}\n"
                f"  IdentityFile {self.client_key}\n"
                for n in self.nodes
            )
        )
        return path


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def _whoami() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name
