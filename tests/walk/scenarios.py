"""Scenarios for the walk: a real log (or a symptom), the node as recorded, the truth.

Each scenario is one known cause: the log from corpora/dev, the outputs recorded on
the 2×H200 host (tests/walk/data) changed only where the cause changes them (a veth
beside eth0, a port held by a process, Debian's `127.0.1.1 <hostname>`), and what a
user who knows the truth would answer. The simulated user answers those questions,
lets the batch walk run every check the recorded node can answer, and skips the rest
("I don't know"), exactly as `dlperf-help walk` would be driven.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kb.checks.recorded import RecordedNode
from kb.diagnosis.engine import diagnose_paths
from kb.rules.knowledge import KnowledgeBase
from kb.walk.batch import BatchEnd, run_batch
from kb.walk.engine import Walk
from tests.corpora_loader import ROOT as CORPORA

DATA = Path(__file__).parent / "data"
LOGS = CORPORA / "dev"  # failure logs of the development corpus

Cases = list[tuple[str, str, int]]

VETH_LINK = (
    "5: veth1a2b3c4@if4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue "
    "state UP mode DEFAULT group default\\    link/ether a6:80:7f:cf:1e:d9 brd ff:ff:ff:ff:ff:ff\n"
)
VETH_ADDR = (
    "5: veth1a2b3c4    inet6 fe80::a480:7fff:fecf:1ed9/64 scope link \\"
    "       valid_lft forever preferred_lft forever\n"
)
DEBIAN_HOSTS = "hostname vm resolves to 127.0.1.1\n"  # `127.0.1.1 vm` in /etc/hosts


def ss_listening(port: str, holder: str = "python", pid: int = 4242) -> str:
    return (
        "State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess\n"
        f'LISTEN 0      4096               *:{port}            *:*    users:(("{holder}",pid={pid},fd=3))\n'
    )


@dataclass(frozen=True)
class Scenario:
    name: str
    cause: str
    log: str | None = None
    symptom: str | None = None
    answers: dict[str, str] = field(default_factory=dict)
    veth: bool = False  # the node has a veth with an fe80:: address beside eth0
    extra: dict[str, Cases] = field(default_factory=dict)  # more recorded programs
    fix: str | None = None  # the fix expected first (default: the cause's first)
    settles: bool = True  # ends `settled` (else `likely` is the honest end)

    def node(self) -> RecordedNode:
        link = (DATA / "h200-ip-link.txt").read_text()
        addr = (DATA / "h200-ip-addr.txt").read_text()
        if self.veth:
            link, addr = link + VETH_LINK, addr + VETH_ADDR
        outputs: dict[str, Cases] = {
            "ip": [("-o link show", link, 0), ("-o addr show", addr, 0)],
            **self.extra,
        }
        return RecordedNode("vm", outputs)

    def walk(self, kb: KnowledgeBase) -> Walk:
        diagnosis = diagnose_paths(kb, [LOGS / self.log]) if self.log else None
        return Walk(kb, symptom=self.symptom, diagnosis=diagnosis)


def play(kb: KnowledgeBase, sc: Scenario, limit: int = 80) -> tuple[Walk, BatchEnd]:
    """The simulated user: answers what the scenario knows, skips what it does not."""
    walk = sc.walk(kb)
    node = sc.node()
    try:
        for _ in range(limit):
            end = run_batch(walk, sc.answers, {}, [node])
            if end.end != "needs" or end.next_step is None:
                return walk, end
            walk.skip(end.next_step.key)  # "I don't know" / "I can't run that here"
        raise AssertionError(f"{sc.name}: the walk did not end in {limit} steps")
    finally:
        node.close()


def states(walk: Walk) -> list[dict[str, tuple[float, str]]]:
    """The beliefs after each step of the path, first to last (replayed with undo)."""
    events = list(walk.events)
    out: list[dict[str, tuple[float, str]]] = []
    while True:
        out.append({b.id: (b.p, b.status) for b in walk.beliefs()})
        if walk.undo() is None:
            break
    for ev in events:  # put the path back
        walk.redo(ev)
    return list(reversed(out))


PORT_ANSWERS = {"first-rendezvous-error": "address-in-use", "which-rendezvous": "pytorch"}
SSH_KEYS = {"ssh-batchmode-output": "auth-refused", "mpirun-first-error": "ssh-auth"}
SHM = {"first-nccl-warning": "shm", "docker-shm-options": "default-shm", "container-shm": "tiny"}
RANKMAP = {"first-nccl-warning": "duplicate-gpu"}
VETH_TRUTH = {
    "first-nccl-warning": "interface",
    "nccl-debug-shows-interface": "virtual",
    "ranks-started-everywhere": "everywhere",
    "which-framework": "pytorch",
}
TIMEOUT = {"every-rank-alive": "one-died", "ranks-started-everywhere": "everywhere"}
SLOTS = {"mpirun-first-error": "not-enough-slots", "ranks-started-everywhere": "not-everywhere"}
IB = {"ib-driver-state": "missing", "first-nccl-warning": "net-plugin"}


def _port(log: str, port: str) -> Scenario:
    return Scenario(
        f"port:{log}",
        "port-in-use",
        log,
        answers=PORT_ANSWERS,
        extra={"ss": [("*", ss_listening(port), 0)]},
    )


SCENARIOS = [
    # the case: NCCL_SOCKET_IFNAME=ib9 on a node without ib9
    Scenario("ifname-ib9-missing", "nccl-wrong-interface", "h200-nccl-socket-ifname-missing.log"),
    Scenario(
        "ifname-ib9-missing, the blind checks pass first",
        "nccl-wrong-interface",
        "h200-nccl-socket-ifname-missing.log",
        answers={"ifconfig-interfaces": "pass", "list-interfaces": "pass"},
    ),
    Scenario(
        "ifname-eth2-missing",
        "nccl-wrong-interface",
        "wrong-iface-nccl-1837-ifname-eth2-missing.log",
    ),
    Scenario(
        "veth chosen, connect timed out",
        "nccl-wrong-interface",
        "wrong-iface-oneflow-3586-veth-connect-timeout.log",
        answers=VETH_TRUTH,
        veth=True,
    ),
    Scenario(
        "veth with IPv6",
        "nccl-wrong-interface",
        "wrong-iface-pytorch-68893-veth-ipv6.log",
        answers=VETH_TRUTH,
        veth=True,
    ),
    Scenario(
        "fe80 link-local on a veth",
        "nccl-wrong-interface",
        "wrong-iface-nccl-975-fe80-link-local-ib1.log",
        answers=VETH_TRUTH,
        veth=True,
    ),
    Scenario(
        "lo chosen, connect refused",
        "nccl-wrong-interface",
        "wrong-iface-horovod-584-lo-interface-refused.log",
        answers={**VETH_TRUTH, "ifconfig-interfaces": "pass"},
    ),
    Scenario(
        "multi-node hang on a container host (no log)",
        "nccl-wrong-interface",
        symptom="multi-node-hang",
        answers={
            "which-framework": "pytorch",
            "ranks-started-everywhere": "everywhere",
            "nccl-debug-shows-interface": "virtual",
        },
        veth=True,
    ),
    # the case: Debian's 127.0.1.1 is a Paddle finding only for a Paddle job
    Scenario(
        "multi-node hang, Paddle with the hostname on 127.0.1.1",
        "paddle-launch-mode",
        symptom="multi-node-hang",
        answers={"which-framework": "paddle", "paddle-cluster-ips": "paddle-wrong"},
        extra={"python3": [("-c *gethostbyname*", DEBIAN_HOSTS, 0)]},
    ),
    Scenario(
        "Paddle announces 127 on the master",
        "paddle-launch-mode",
        "paddle-paddledetection-7998-ips-127-on-master.log",
        answers={
            "which-framework": "paddle",
            "which-rendezvous": "paddle",
            "first-rendezvous-error": "loopback-or-ip-list",
            "paddle-cluster-ips": "paddle-wrong",
        },
        extra={"python3": [("-c *gethostbyname*", DEBIAN_HOSTS, 0)]},
    ),
    Scenario(
        "torchrun master port in use",
        "port-in-use",
        "h200-torchrun-master-port-in-use.log",
        answers=PORT_ANSWERS,
        extra={"ss": [("*", ss_listening("29500"), 0)]},
    ),
    _port("port-llama-cookbook-186-torchrun-29500.log", "29500"),
    _port("port-pytorch-126510-torchrun-29400.log", "29400"),
    _port("port-torchtune-392-two-finetunes.log", "29500"),
    _port("port-tune-a-video-90-29500-in-use.log", "29500"),
    _port("port-megatron-343-tcpstore-address-in-use.log", "29500"),
    Scenario(
        "ssh keys: password prompt",
        "ssh-passwordless-missing",
        "ssh-keys-horovod-110-mpirun-password-prompt.log",
        answers=SSH_KEYS,
    ),
    Scenario(
        "ssh keys: permission denied",
        "ssh-passwordless-missing",
        "ssh-keys-horovod-2117-permission-denied.log",
        answers=SSH_KEYS,
    ),
    Scenario(
        "ssh port 12345 times out",
        "ssh-port-unreachable",
        "ssh-port-horovod-2803-port-12345-timeout.log",
        answers={
            "ssh-batchmode-output": "no-connection",
            "sshd-port-vs-launcher-port": "ports-differ",
        },
    ),
    Scenario(
        "ssh port 50000 refused",
        "ssh-port-unreachable",
        "ssh-port-horovod-504-port-50000-refused.log",
        answers={
            "ssh-batchmode-output": "no-connection",
            "sshd-port-vs-launcher-port": "not-listening",
            "mpirun-first-error": "ssh-connect",
        },
    ),
    Scenario(
        "shm 64k in a container",
        "nccl-shm-too-small",
        "h200-shm-64k-nccl-shm-segment-failed.log",
        answers=SHM,
    ),
    Scenario(
        "private /dev/shm per rank",
        "nccl-shm-too-small",
        "h200-shm-private-dev-shm-per-rank.log",
        answers=SHM,
    ),
    Scenario(
        "shm in docker, NCCL 2.7.3",
        "nccl-shm-too-small",
        "shm-nccl-342-cuda-docker-2.7.3.log",
        answers=SHM,
    ),
    Scenario("duplicate GPU", "gpu-rank-mapping", "h200-nccl-duplicate-gpu.log", answers=RANKMAP),
    Scenario(
        "mpirun duplicate GPU",
        "gpu-rank-mapping",
        "rankmap-horovod-3929-mpirun-duplicate-gpu.log",
        answers=RANKMAP,
    ),
    Scenario(
        "DDP duplicate GPU",
        "gpu-rank-mapping",
        "rankmap-mambair-39-ddp-duplicate-gpu.log",
        answers=RANKMAP,
    ),
    Scenario(
        "mpirun: not enough slots",
        "mpi-launch-failure",
        "h200-mpirun-not-enough-slots.log",
        answers=SLOTS,
    ),
    Scenario(
        "mpirun: two hosts, not enough slots",
        "mpi-launch-failure",
        "h200-mpirun-two-hosts-not-enough-slots.log",
        answers=SLOTS,
    ),
    Scenario(
        "orted not found on the remote node",
        "mpi-launch-failure",
        "mpi-horovod-301-orted-no-such-file.log",
        answers={"mpirun-first-error": "remote-path-missing"},
    ),
    Scenario(
        "libcudart 10.1 missing",
        "cuda-lib-missing",
        "h200-libcudart-10.1-missing.log",
        answers={
            "which-load-error": "cuda-library-file",
            "exact-library-installed": "exact-file-absent",
        },
    ),
    Scenario("NET/IB: no device", "nccl-ib-missing", "h200-nccl-net-ib-no-device.log", answers=IB),
    Scenario(
        "ibv_open_device in docker",
        "nccl-ib-missing",
        "ib-missing-nccl-451-ibv-open-device-docker.log",
        answers=IB,
    ),
    Scenario(
        "watchdog: a rank stalled",
        "nccl-timeout-hang",
        "h200-watchdog-timeout-stalled-rank.log",
        answers=TIMEOUT,
    ),
    Scenario(
        "allreduce timeout after 600 s",
        "nccl-timeout-hang",
        "timeout-llamafactory-7396-allreduce-600s.log",
        answers=TIMEOUT,
    ),
    Scenario(
        "libnccl missing",
        "nccl-missing-or-mismatch",
        "h200-libnccl-missing.log",
        answers={"first-nccl-warning": "version", "same-nccl-everywhere": "missing"},
    ),
    Scenario(
        "intra-node traffic over sockets",
        "nccl-p2p-failure",
        "h200-nccl-intranode-via-socket.log",
        answers={
            "intra-node-transport": "net",
            "runs-without-p2p": "yes-runs",
            "pcie-acs": "acs-on",
        },
    ),
    Scenario(
        "TF_CONFIG without task type",
        "tf-distribution-strategy",
        "tfdist-tensorflow-17854-tf-config-task-type.log",
        answers={
            "which-framework": "tensorflow",
            "config-error-subject": "distribution-settings",
            "config-error-framework": "tensorflow-2",
            "tf-multiworker-stuck": "tf-stuck",
            "which-rendezvous": "tensorflow",
        },
    ),
    Scenario(
        "two servers named node1",
        "duplicate-hostname",
        "duphost-horovod-148-two-servers-named-node1.log",
        answers={"hostnames-unique": "repeated", "ipc-handle-error-code": "code-30"},
    ),
]
