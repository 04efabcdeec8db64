"""Where the job runs, as far as the logs tell: in a container? on one node or several?
with InfiniBand? under which framework and launcher?

None of this is a failure. It is the context that makes one cause of a visible symptom
more probable than another (`kb.diagnosis.candidates`): a bare `unhandled system error`
in a container is most often a too-small /dev/shm, on several nodes a network problem.
Each fact keeps the lines it rests on, and goes to `facts` for the analyzers that
finish later and for the ranking:
- `container`: reasons (Docker's bridge addresses 172.17.x.x, /workspace paths, docker,
  nvcr.io images, Kubernetes, Singularity/enroot, the /opt/conda Python of the PyTorch
  and older NGC images; not /opt/conda/conda-bld, the build path inside any conda torch);
- `multi_node` / `single_node`: reasons (`--nnodes N`, `nNodes N`, a launcher host list,
  `-H localhost:N`);
- `launcher_hosts`: the hosts an `mpirun -H`/`horovodrun -H`/`--host` line names;
- `ib_present` / `ib_absent`: reasons (HCAs in use, or NCCL finding none);
- `ib_expected`: reasons to expect InfiniBand/RoCE whether or not it is used
  (`NCCL_IB_HCA`, `NCCL_NET=IB`, `NCCL_IB_GID_INDEX` set, NCCL failing to initialise
  any network plugin, HCAs named in the log);
- `frameworks`: the frameworks the logs show: lines matching one of a framework's
  `markers` in rules/vocabulary/traits.yaml (its paths, modules, launcher, log prefixes:
  `torch/csrc/distributed/c10d`, `[c10d]`, `[rank0]:`, `horovod/common`, `PADDLE_TRAINER_ID`,
  `src/operator/` ...), data so a new framework or wording needs no code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kb.diagnosis.analyzers.base import Analyzer, Facts, Report, Tap
from kb.diagnosis.model import Evidence

_CONTAINER = (
    r"\b172\.17\.\d{1,3}\.\d{1,3}\b|/workspace/|\bdocker\b|nvcr\.io/|\bkubectl\b|"
    r"\bkubernetes\b|/\.dockerenv\b|--ipc[= ]host|--shm-size|\bsingularity\b|"
    r"\bapptainer\b|\benroot\b|\bpodman\b|/opt/conda/lib/python"
)
_IB_PRESENT = (
    r"NET/IB ?: Using \[\d|via NET/IB|\bmlx\d_(?:\d+|bond\w*)\b|Link layer: InfiniBand|"
    r"\bibv_devinfo\b.*\bhca_id\b|\bRoCE\b|NET/IB : GPU Direct RDMA"
)
_IB_ABSENT = (
    r"NET/IB ?: No device found|No IB devices found|Failed to open libibverbs|"
    r"NCCL_IB_DISABLE set by environment to 1|Using network Socket|"
    r"libibverbs: Warning: (?:no userspace device-specific driver|couldn't open config)"
)
_IB_EXPECTED = (
    r"\bNCCL_IB_HCA\b\W{0,20}(?:set by environment to |=)\s*\S|"
    r"\bNCCL_NET\W{0,20}(?:set by environment to |=)\W{0,3}IB\b|"
    r"\bNCCL_IB_GID_INDEX\W{0,20}(?:set by environment to |=)\s*\d|"
    r"Failed to initialize any NET plugin|\bmlx\d_(?:\d+|bond\w*)\b"
)
_NODES = r"(?:--nnodes|--num[_-]nodes|\bnnodes|\bNNODES|\bnum_nodes)\s*[=: ]\s*(\d+)"
_HOSTS = (
    r"\b(?:mpirun|mpiexec|horovodrun|orterun|prterun)\b.*?\s(?:-H|-host|--host|--hosts)"
    r"[= ]\s*(\S+)"
)
_THIS_HOST = {"localhost", "127.0.0.1", "::1"}
KEEP = 3  # reasons kept per fact


FW = "fw-"  # the tap of a framework's markers: fw-<framework>
_SETUP_TAPS = (
    Tap("container", _CONTAINER, ignore_case=True, cap=KEEP),
    Tap("ib-present", _IB_PRESENT, cap=KEEP),
    Tap("ib-absent", _IB_ABSENT, cap=KEEP),
    Tap("ib-expected", _IB_EXPECTED, cap=KEEP),
    Tap("nodes", _NODES, cap=50),
    Tap("hosts", _HOSTS, cap=50),
)


def framework_taps(markers: Mapping[str, Sequence[str]]) -> tuple[Tap, ...]:
    """One tap per framework, of any of its markers (`frameworks.markers` of the rules'
    vocabulary): the first line that shows it is enough, so a marker on most lines of a log
    (torchrun's `[rank0]:`) is scanned for only until it is found."""
    return tuple(
        Tap(f"{FW}{name}", "|".join(f"(?:{rx})" for rx in patterns), cap=1, frequent=True)
        for name, patterns in sorted(markers.items())
        if patterns
    )


class Setting(Analyzer):
    name = "setting"

    def __init__(self, framework_markers: Mapping[str, Sequence[str]] | None = None) -> None:
        self.taps = _SETUP_TAPS + framework_taps(framework_markers or {})
        super().__init__()
        self.seen: dict[str, list[Evidence]] = {}
        self.nodes: list[tuple[int, Evidence]] = []
        self.hosts: set[str] = set()
        self.host_lines: list[Evidence] = []

    def feed(self, tap: str, line_no: int, text: str) -> None:
        ev = self.evidence(line_no, text, what=tap)
        if tap == "nodes":
            m = re.search(_NODES, text)
            if m:
                self.nodes.append((int(m[1]), ev))
        elif tap == "hosts":
            m = re.search(_HOSTS, text)
            if m:
                names = {h.split(":")[0] for h in m[1].strip("'\"").split(",") if h}
                names.discard("")
                if names:
                    self.hosts |= names
                    self.host_lines.append(ev)
        else:
            self.seen.setdefault(tap, []).append(ev)

    def finish(self, facts: Facts) -> Report:
        def reasons(tap: str) -> list[str]:
            return [f"{e.file}:{e.line}: {e.text.strip()[:120]}" for e in self.seen.get(tap, [])]

        facts.setdefault("container", []).extend(reasons("container"))
        facts.setdefault("ib_present", []).extend(reasons("ib-present"))
        facts.setdefault("ib_absent", []).extend(reasons("ib-absent"))
        facts.setdefault("ib_expected", []).extend(reasons("ib-expected"))
        facts["frameworks"] = {t[len(FW) :] for t in self.seen if t.startswith(FW)}
        facts["launcher_hosts"] = set(self.hosts)
        multi = facts.setdefault("multi_node", [])
        single = facts.setdefault("single_node", [])
        for n, ev in self.nodes:
            (multi if n > 1 else single).append(f"{ev.file}:{ev.line}: {n} node(s)")
        if len(self.hosts) > 1:
            multi.append(f"the launcher names {len(self.hosts)} hosts")
        elif self.hosts and self.hosts <= _THIS_HOST:
            ev = self.host_lines[0]
            single.append(f"{ev.file}:{ev.line}: the launcher runs every rank on localhost")
        return Report()
