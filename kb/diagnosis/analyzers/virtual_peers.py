"""A failed connection to an address no peer on another node can have.

Some addresses are the same on every host, or private to one: Docker's bridge gateway
`172.17.0.1` (docker0), libvirt's `192.168.122.1` (virbr0), link-local addresses
(`169.254.0.0/16`, IPv6 `fe80::`), and a container's own address on the default bridge
(`172.17.0.2` and up). A library that advertises one of them to its peers (it picked that
interface) has them connect to an address that is not the node's: the connection is
refused, times out or is unreachable, whichever library prints it (NCCL's bootstrap and
socket transport, Gloo, c10d, UCX, Open MPI's TCP BTL and OOB, PMIx, Hydra). Read from the
line that reports the failure, so the wording of no single library is needed:

- a bridge or link-local address by a communication library -> the wrong interface
  (`peer-address-virtual`: nccl-wrong-interface); by MPI's own layers (UCX, BTL/OOB,
  PRRTE, PMIx, Hydra) -> `mpi-peer-address-virtual` (mpi-launch-failure: the TCP layers
  picked docker0/virbr0);
- a container's bridge address -> `peer-address-container-bridge` (docker-network-mode:
  the container's private address is not reachable from other nodes).
"""

from __future__ import annotations

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.util.lazyre import LazyPattern

_ADDRESS = (
    r"(?:^|[^\w.:])(?P<addr>172\.17\.\d{1,3}\.\d{1,3}|192\.168\.122\.1|169\.254\.\d{1,3}\.\d{1,3}"
    r"|[fF][eE]80::[0-9a-fA-F:]+)(?:$|[^\w.])"
)
_ADDRESS_RE = LazyPattern(_ADDRESS)
_FAILED = LazyPattern(
    r"(?i)refused|failed|timed out|unreachable|no route to host|reset by peer|"
    r"(?:cannot|could not|unable to) connect"
)
_MPI = LazyPattern(
    r"\bUCX\b|\bbtl\b|\boob\b|\bORTE\b|\bPRTE\b|\bprte|\bpmix|\bPMIx|\bHYD|mca_|Open MPI"
)
VIRTUAL = "peer-address-virtual"
MPI_VIRTUAL = "mpi-peer-address-virtual"
CONTAINER = "peer-address-container-bridge"
WEIGHT = 0.75
NAMES = {
    "172.17.0.1": "Docker's bridge gateway (docker0)",
    "192.168.122.1": "libvirt's bridge (virbr0)",
}


def _link_local(address: str) -> bool:
    return address.startswith("169.254.") or address.lower().startswith("fe80")


def kind_of(address: str) -> str:
    """`virtual` (the same on every host, or link-local) or `container` (a container's
    address on Docker's default bridge)."""
    return "virtual" if address in NAMES or _link_local(address) else "container"


def what(address: str) -> str:
    if address in NAMES:
        return NAMES[address]
    if _link_local(address):
        return "a link-local address"
    return "a container's address on Docker's default bridge"


class VirtualPeers(Analyzer):
    name = "virtual-peers"
    taps = (Tap("address", _ADDRESS, cap=2_000),)

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, Finding] = {}  # finding name -> its first line

    def feed(self, tap: str, line_no: int, text: str) -> None:
        head = text[:2000]
        m = _ADDRESS_RE.search(head)
        if m is None or _FAILED.search(head) is None:
            return
        address = m["addr"]
        said = (
            f"a connection to {address} ({what(address)}) failed: a peer advertised an "
            "address that other nodes cannot reach"
        )
        ev = [self.evidence(line_no, text, m.start("addr"), m.end("addr"), "address")]
        params = {"address": address}
        if kind_of(address) == "container":
            found = Finding(CONTAINER, CONTAINER, WEIGHT, said, ev, params)
        elif _MPI.search(head):
            found = Finding(MPI_VIRTUAL, MPI_VIRTUAL, WEIGHT, said, ev, params)
        else:
            found = Finding(VIRTUAL, VIRTUAL, WEIGHT, said, ev, params)
        self.seen.setdefault(found.name, found)

    def finish(self, facts: Facts) -> Report:
        return Report(findings=list(self.seen.values()))
