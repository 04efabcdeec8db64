"""Understanding `NCCL_DEBUG=INFO` output: who runs where, and how their bytes travel.

From the structured INFO lines (`host:pid:tid [dev] NCCL INFO ...`) this builds the
map of processes (host, address, NCCL version, rank in each communicator) and the
transport of every channel, then derives what no single line says:
- ranks on one node talking over the network transport (P2P and SHM disabled or
  failing) -> nccl-p2p-failure;
- different NCCL versions within one job -> nccl-missing-or-mismatch;
- interfaces and hostnames (`nccl_hosts`): virtual interfaces in use -> nccl-wrong-
  interface; two machines taken for one node -> duplicate-hostname; how many nodes;
- traffic between nodes over TCP sockets: a note, or nccl-ib-missing when the logs
  also show that InfiniBand/RoCE was expected (`NCCL_IB_HCA` or `NCCL_NET=IB` set, HCAs
  named) or that the job is slow by a measure other than the sockets' own bandwidth
  (which is low over TCP by nature: a healthy Ethernet cluster shows it too);
- settings echoed by NCCL (`NCCL_P2P_DISABLE set by environment to 1`) as notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence, Note

if TYPE_CHECKING:  # the readers are imported with the first NCCL line: most logs have none
    from kb.diagnosis.analyzers.nccl_lines import Channel, Proc, State

SLOW_NET_GBS = 20.0  # bus bandwidth below this is far from NVLink/IB speeds


class NcclInfo(Analyzer):
    name = "nccl"
    taps = (
        Tap("version", r"NCCL INFO NCCL version \d", cap=20_000),
        Tap("iface", r"INFO (?:Bootstrap|NET/Socket|NET) ?: Using\b", cap=20_000),
        Tap(  # a list that may go on over the next lines
            "iface-list",
            r"INFO (?:Bootstrap|NET/Socket|NET) ?: Using(?: \[\d+\][\w.\-]+:\S+)*[ \t]*$",
            follow=32,
            cap=200,
        ),
        Tap("env", r"NCCL INFO [A-Z][A-Z0-9_]+ set by environment to", cap=20_000),
        Tap("init", r"NCCL INFO (?:\w+ )?comm 0x[0-9a-fA-F]+ rank \d+ n[Rr]anks \d+", cap=50_000),
        Tap("channel", r"INFO (?:Channel|Ring) \d+(?:/\d+)? : \d+\[[^\]]*\] -> \d+\[", cap=10_000),
        Tap("network", r"NCCL INFO Using network \w+", cap=20_000),
        Tap("busbw", r"#\s*Avg bus bandwidth\s*:", cap=1_000),
        Tap(
            "algbw", r"\b(?:alg|bus)bw\s*[:=]?\s*\d+(?:\.\d+)?\s*GB/s", ignore_case=True, cap=1_000
        ),
        Tap("tests-rank", r"#\s+Rank\s+\d+ (?:Group\s+\d+ )?Pid\s+\d+ on\s+\S+", cap=20_000),
    )

    def __init__(self) -> None:
        super().__init__()
        self._s: State | None = None

    @property
    def s(self) -> State:
        """What the lines said so far (made, and its reader imported, when first needed)."""
        if self._s is None:
            from kb.diagnosis.analyzers.nccl_lines import State

            self._s = State()
        return self._s

    # ------------------------------------------------------------ reading

    def feed(self, tap: str, line_no: int, text: str) -> None:
        from kb.diagnosis.analyzers.nccl_lines import read

        read(self.s, tap, line_no, text, self._ev)

    def _ev(self, line_no: int, text: str, start: int, end: int) -> Evidence:
        return self.evidence(line_no, text, start, end)

    # ------------------------------------------------------------ judging

    def _node(self, key: tuple[str, str]) -> tuple[str, str | None]:
        proc = self.s.procs[key]
        return proc.host, proc.addr

    def same_node(self, k1: tuple[str, str], k2: tuple[str, str]) -> bool | None:
        """True/False when the two processes are known to share a node or not."""
        (h1, a1), (h2, a2) = self._node(k1), self._node(k2)
        if h1 != h2:
            return False
        # one hostname with two addresses is two machines
        return not (a1 and a2 and a1 != a2)

    def finish(self, facts: Facts) -> Report:
        report = Report()
        if self._s is None or (not self._s.procs and not self._s.bandwidth):
            return report
        from kb.diagnosis.analyzers.nccl_hosts import (
            duplicate_hostname_findings,
            interface_findings,
            node_facts,
        )

        facts["nccl_hosts"] = len({p.host for p in self.s.procs.values() if p.host})
        multi, single = node_facts(self.s)
        facts.setdefault("multi_node", []).extend(multi)
        facts.setdefault("single_node", []).extend(single)
        self._versions(report)
        intra_net, _ = self._transports(report, facts)
        report.findings += interface_findings(
            self.s, multi_node=bool(facts["multi_node"]), single_node=bool(facts["single_node"])
        )
        report.findings += duplicate_hostname_findings(self.s, facts.get("launcher_hosts", set()))
        self._env_notes(report, intra_net)
        self._bandwidth(report, facts, intra_net)
        self._sockets(report, facts)
        return report

    def _versions(self, report: Report) -> None:
        by_comm: dict[str | None, dict[str, list[Proc]]] = {}
        for proc in self.s.procs.values():
            if proc.version:
                by_comm.setdefault(proc.comm, {}).setdefault(proc.version[0], []).append(proc)
        for comm, versions in by_comm.items():
            if len(versions) < 2:
                continue
            if comm is None or comm.startswith("nranks="):
                hosts = [{p.host for p in ps} for ps in versions.values()]
                if any(a & b for i, a in enumerate(hosts) for b in hosts[i + 1 :]):
                    continue  # without a communicator id, reruns on one host may differ
            desc = "; ".join(
                f"{v} on {', '.join(sorted({p.host for p in ps})[:4])}"
                for v, ps in versions.items()
            )
            evidence = [ps[0].version[1] for ps in versions.values() if ps[0].version]
            vs = sorted(versions)
            report.findings.append(
                Finding(
                    "nccl-versions-differ",
                    "nccl-versions-differ",
                    0.85,
                    f"ranks of one job run different NCCL versions: {desc}",
                    evidence,
                    {"nccl_versions": ", ".join(vs), "version_a": vs[0], "version_b": vs[-1]},
                )
            )
            return

    def _transports(self, report: Report, facts: Facts) -> tuple[list[Channel], list[Channel]]:
        intra_net: list[Channel] = []
        inter: list[Channel] = []
        for ch in self.s.channels:
            ch.comm = ch.comm or self.s.procs[ch.proc].comm  # old NCCL names it after
            ka = self.s.ranks.get((ch.comm, ch.a))
            kb = self.s.ranks.get((ch.comm, ch.b))
            network = ch.via.startswith("NET") or ch.via.startswith("COLLNET")
            if ka and kb:
                same = self.same_node(ka, kb)
            elif self.s.nnodes.get(ch.comm) == 1:
                same = True
            else:
                same = None
            if same and network:
                intra_net.append(ch)
            elif same is False:
                inter.append(ch)
        if intra_net:
            ch = intra_net[0]
            host = self.s.procs[ch.proc].host
            report.findings.append(
                Finding(
                    "intra-node-over-network",
                    "intra-node-over-network",
                    0.85,
                    f"ranks on the same node ({host}) exchange data through the network transport "
                    f"({ch.via}) instead of NVLink/PCIe P2P or shared memory",
                    [c.ev for c in _spread(intra_net)],
                    {"host": host, "transport": ch.via},
                )
            )
            facts["intra_node_network"] = True
        sockets = [c for c in inter if "Socket" in c.via]
        if inter and len(sockets) == len(inter):
            facts["inter_node_sockets"] = sockets
        return intra_net, inter

    def _env_notes(self, report: Report, intra_net: list[Channel]) -> None:
        env = self.s.env
        for var in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE"):
            val, ev = env.get(var, ("", None))
            if val.strip(".") not in ("1", "true", "TRUE") or ev is None:
                continue
            report.notes.append(
                Note(
                    f"nccl-env-{var.lower()}",
                    f"{var}={val.strip('.')} is set (NCCL says: set by environment)",
                    [ev],
                )
            )
            if var in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE"):
                report.findings.append(
                    Finding(
                        "fast-path-disabled",
                        f"{var.lower().replace('_', '-')}",
                        0.5,
                        f"{var}=1 turns off a fast intra-node path",
                        [ev],
                        {"setting": f"{var}=1"},
                        alone=False,
                    )
                )

    def _bandwidth(self, report: Report, facts: Facts, intra_net: list[Channel]) -> None:
        bws = self.s.bandwidth
        if not bws:
            return
        low = min(bws, key=lambda b: b[0])
        facts["bus_bandwidth_gbs"] = low[0]
        if low[0] >= SLOW_NET_GBS:
            return
        if intra_net:
            report.findings.append(
                Finding(
                    "slow-intra-node-bandwidth",
                    "slow-intra-node-bandwidth",
                    0.5,
                    f"bandwidth between ranks on one node is only {low[0]:g} GB/s",
                    [low[1]],
                    {"bandwidth": f"{low[0]:g} GB/s"},
                    alone=False,
                    measured=True,
                )
            )
        if facts.get("inter_node_sockets") and _ib_expected(facts):
            facts["slow"] = True  # slow for the network the job was meant to use

    def _sockets(self, report: Report, facts: Facts) -> None:
        """Traffic between nodes over sockets: a note, or nccl-ib-missing when IB was
        expected or the job is slow."""
        sockets = facts.get("inter_node_sockets")
        if not sockets:
            return
        ev = [c.ev for c in _spread(sockets)]
        text = (
            "traffic between nodes goes over TCP sockets (NET/Socket), not InfiniBand/RoCE (NET/IB)"
        )
        bw = facts.get("bus_bandwidth_gbs")
        if bw is not None:
            text += f" (bus bandwidth {bw:g} GB/s)"
        expected = _ib_expected(facts)
        if expected or facts.get("slow"):
            why = f"InfiniBand/RoCE was expected ({expected[0]})" if expected else "the job is slow"
            report.findings.append(
                Finding(
                    "inter-node-over-sockets",
                    "inter-node-sockets-ib-expected" if expected else "inter-node-sockets-and-slow",
                    0.6,
                    f"{text}, and {why}",
                    ev,
                    {"transport": sockets[0].via},
                )
            )
        else:
            report.notes.append(Note("nccl-inter-node-sockets", text, ev))


def _ib_expected(facts: Facts) -> list[str]:
    """Why InfiniBand/RoCE was expected here (empty when nothing says so)."""
    return list(facts.get("ib_expected", [])) + list(facts.get("ib_present", []))


def _spread(channels: list[Channel]) -> list[Channel]:
    """Up to three channels from different processes, for evidence."""
    seen: dict[tuple[str, str], Channel] = {}
    for c in channels:
        seen.setdefault(c.proc, c)
    picked = list(seen.values())[:3]
    return picked or channels[:3]
