"""Real OpenSSH servers on 127.0.0.1 that play GPU nodes, for the SSH tests and the benchmark.

Each node is one `/usr/sbin/sshd -D -e -f CONFIG` on a free port with its own host key,
`authorized_keys`, and a session environment set by sshd's `SetEnv`:
`PATH=<node>/bin:<node>/tools` and `HOME=<node>/home` (an empty home: the login shell
reads no rc files, as on a clean node).  Every node has its own client key and an `ssh`
wrapper pointing the real OpenSSH client at the cluster's known_hosts, so node-to-node
logins are real too.

Two directories make up a node's PATH, and the split is a safety rule:
- `tools/` holds *symlinks to this machine's real tools* (no python3).  Nothing is ever
  written there: writing to `tools/ip` as root would write through the link into
  /usr/bin/ip (this happened once).
- `bin/` holds only regular files: the fakes (an `nvidia-smi` that replays the outputs
  recorded on a 2xH200 host, `fixtures/h200-x2/`; `hostname`; `ssh`).  It comes first,
  so a fake written there shadows the real tool.  Write fakes with `Node.write_tool`,
  which unlinks what was there, refuses any path that resolves outside the node, and
  creates the file with O_EXCL|O_NOFOLLOW, so it can never write through a link.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
TOOL_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
FIXTURES = Path(__file__).parent / "fixtures" / "h200-x2"
# The standard tools a node offers (linked into its tools/); no python3, so checks that import
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


_handed_out: set[int] = set()


class PortTaken(RuntimeError):
    """Another process listens on the port chosen for a node."""


def free_port() -> int:
    """A port free now and not handed out before by this process (the kernel may give
    the same free port twice)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def keygen(path: Path, passphrase: str = "") -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", path.name, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def _replay_script() -> str:
    """nvidia-smi as one sh process (shell builtins only), like the real binary is one."""
    cases = []
    for args, name in NVIDIA_SMI_RECORDINGS.items():
        lines = (FIXTURES / name).read_text().splitlines()
        body, code = "\n".join(lines[1:-1]) + "\n", "".join(c for c in lines[-1] if c.isdigit())
        cases.append(f'  "{args}") printf %s {shlex.quote(body)}; exit {int(code or 0)} ;;')
    return f"""#!/bin/sh
# nvidia-smi, replaying outputs recorded on a real 2xH200 host ({FIXTURES.name})
case "$*" in
{chr(10).join(cases)}
  *) echo "nvidia-smi (replay): no recording for: nvidia-smi $*" >&2; exit 2 ;;
esac
"""


def write_script(node_root: Path, path: Path, text: str) -> Path:
    """Create the executable `path` inside `node_root`, never writing through a link.

    Refuses a path whose directory resolves outside the node (a `bin` that is a link,
    `..`); removes what was there (a link is removed, never followed); then creates a
    new file with O_EXCL|O_NOFOLLOW, which fails rather than follow a link that appeared
    in between.
    """
    inside = node_root.resolve()
    where = path.parent.resolve()
    if path.name in ("", ".", "..") or not where.is_relative_to(inside):
        raise ValueError(f"{path}: refusing to write outside the node directory {inside}")
    path = where / path.name
    if path.is_symlink() or path.exists():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


@dataclass
class Node:
    name: str
    root: Path
    port: int
    user: str
    proc: subprocess.Popen[bytes] | None = None
    sshd_extra: str = ""  # more sshd_config lines (ForceCommand ...), see Cluster.reconfigure
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
        """Start sshd and wait until *this* server listens (its own log says so).

        Raises `PortTaken` when another process holds the port: a port that was free when
        chosen may be taken before sshd binds it (another test worker, another user), and
        a "connect succeeds" check would then mistake that process for this node.
        """
        path = self.root / "sshd.log"
        offset = path.stat().st_size if path.exists() else 0
        log = open(path, "ab")  # noqa: SIM115 - sshd keeps it
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.root / "sshd_config")],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        listening = f"Server listening on 127.0.0.1 port {self.port}."
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(path, "rb") as fh:
                fh.seek(offset)
                new = fh.read().decode(errors="replace")
            if listening in new:
                return
            if self.proc.poll() is not None:
                self.proc = None
                if "Address already in use" in new:
                    raise PortTaken(f"port {self.port} of {self.name} is taken")
                raise RuntimeError(f"sshd for {self.name} exited: {new[-500:]}")
            time.sleep(0.01)
        self.kill()
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

    def write_rc(self, text: str) -> Path:
        """The node user's ~/.bashrc (the login shell reads it for every SSH command)."""
        return write_script(self.root, self.root / "home" / ".bashrc", text)

    def processes(self) -> list[str]:
        """Command names of everything this node's sshd runs now (sessions, commands)."""
        if self.proc is None:
            return []
        names = []
        for pid in descendants(self.proc.pid):
            with contextlib.suppress(OSError):  # it may end between listing and reading
                names.append(Path(f"/proc/{pid}/comm").read_text().strip())
        return names

    def accepted_logins(self) -> int:
        return self.log.count("Accepted publickey")

    @property
    def bin(self) -> Path:
        """The node's fakes: regular files only, first on its PATH."""
        return self.root / "bin"

    @property
    def tools(self) -> Path:
        """Links to this machine's real tools, second on the node's PATH: never write here."""
        return self.root / "tools"

    def write_tool(self, name: str, text: str) -> Path:
        """A fake `name` on the node (a script that shadows the real tool, if any)."""
        if "/" in name:
            raise ValueError(f"{name!r}: a tool name, not a path")
        return write_script(self.root, self.bin / name, text)

    def remove_tool(self, name: str) -> None:
        """Make `name` missing on the node (the link is removed; its target is untouched)."""
        for where in (self.bin, self.tools):
            if "/" not in name and ((where / name).is_symlink() or (where / name).exists()):
                (where / name).unlink()


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

    def __init__(
        self, root: Path, count: int, user: str | None = None, tool_path: str = TOOL_PATH
    ) -> None:
        self.root = root
        self.tool_path = tool_path  # where the real tools linked into each node's tools/ are
        self.user = user or os.environ.get("USER") or _whoami()
        self.client_key = keygen(root / "client_key")
        self.known_hosts = root / "known_hosts"
        self._replay = _replay_script()
        self.nodes = [self._make(i) for i in range(count)]
        self._write_known_hosts()
        for node in self.nodes:
            self.authorize(node, *self.nodes)

    def _write_known_hosts(self) -> None:
        lines = []
        for node in self.nodes:
            kind, blob = (node.root / "hostkey.pub").read_text().split()[:2]
            lines.append(f"[127.0.0.1]:{node.port} {kind} {blob}\n")
        self.known_hosts.write_text("".join(lines))

    def _make(self, index: int) -> Node:
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        name = f"gpu{index + 1:02d}"
        root = self.root / name
        for sub in ("bin", "tools", "home"):
            (root / sub).mkdir(parents=True)
        node = Node(name, root, free_port(), self.user)
        keygen(node.host_key)
        keygen(root / "id_node")
        (root / "authorized_keys").write_text((self.root / "client_key.pub").read_text())
        self._write_sshd_config(node)
        (root / "ssh_config").write_text(f"""IdentityFile {root}/id_node
IdentitiesOnly yes
UserKnownHostsFile {self.root}/known_hosts
GlobalKnownHostsFile /dev/null
StrictHostKeyChecking yes
""")
        for tool in TOOLS:
            real = shutil.which(tool, path=self.tool_path)
            if real:
                (node.tools / tool).symlink_to(real)
        node.write_tool("ssh", f'#!/bin/sh\nexec /usr/bin/ssh -F {root}/ssh_config "$@"\n')
        node.write_tool("hostname", f"#!/bin/sh\necho {name}\n")
        node.write_tool("nvidia-smi", self._replay)
        return node

    def _write_sshd_config(self, node: Node) -> None:
        root = node.root
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
SetEnv PATH={root}/bin:{root}/tools HOME={root}/home
{node.sshd_extra}
""")

    def reconfigure(self, node: Node, extra: str) -> None:
        """Add sshd_config lines to one node (e.g. `ForceCommand sleep 1000`), restarting it."""
        node.sshd_extra = extra
        self._write_sshd_config(node)
        if node.proc is not None:
            node.kill()
            node.start()

    def authorize(self, node: Node, *sources: Node) -> None:
        """Let `sources` log in to `node` (besides dlperf-help's own key)."""
        keys = [(self.root / "client_key.pub").read_text()]
        keys += [(s.root / "id_node.pub").read_text() for s in sources]
        (node.root / "authorized_keys").write_text("".join(keys))

    def start(self) -> Cluster:
        moved = False
        for node in self.nodes:
            for _ in range(20):
                try:
                    node.start()
                    break
                except PortTaken:
                    node.port, moved = free_port(), True
                    self._write_sshd_config(node)
            else:
                raise RuntimeError(f"no free port found for {node.name}")
        if moved:
            self._write_known_hosts()
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


def _whoami() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name
