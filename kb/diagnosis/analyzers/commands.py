"""Pasted command outputs that answer a question by what they list, or fail to list.

- `horovodrun --check-build`: `[ ] NCCL` under *Available Tensor Operations* means
  Horovod was built without NCCL (horovod-built-without-nccl);
- `ibstat`: no port Active means InfiniBand is not usable (nccl-ib-missing); missing
  tools or devices are a note (a node without IB is fine for one-node jobs);
- `ldconfig -p`: several different `libnccl` files on the loader path are a note;
- `pip list`: several NCCL wheels (`nvidia-nccl-cu11` and `-cu12`) are a note.
"""

from __future__ import annotations

import re

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence, Note
from kb.util.lazyre import LazyPattern

_BOX = LazyPattern(r"^\s*\[(?P<mark>[ Xx])\]\s+(?P<name>[\w+\- ]+?)\s*$")
_HVD_VERSION = LazyPattern(r"Horovod v(?P<v>\d+\.\d+\.\d+)")
_CA = LazyPattern(r"^CA '(?P<ca>[^']+)'")
_STATE = LazyPattern(r"^\s*State:\s*(?P<state>\w+)")
_LDCONFIG = LazyPattern(r"^\s*(?P<so>libnccl\.so[.\d]*)\s+\([^)]*\)\s+=>\s+(?P<path>\S+)")
_PIP_NCCL = LazyPattern(r"^(?P<pkg>nvidia-nccl-cu\d+|nccl)\s+(?P<v>\d[\w.+\-]*)\s*$", re.I)


class Commands(Analyzer):
    name = "commands"
    taps = (
        Tap("hvd-version", r"Horovod v\d+\.\d+\.\d+:", cap=100),
        Tap("hvd-ops", r"^\s*Available Tensor Operations:", follow=10, cap=100),
        Tap("ibstat-ca", r"^CA '[^']+'", follow=40, cap=200),
        Tap(
            "ib-absent",
            r"(?:ibstat|ibv_devinfo|ibv_devices|ibstatus): (?:command )?not found|"
            r"No IB devices found|Failed to get IB devices list",
            cap=100,
        ),
        Tap("ldconfig", r"libnccl\.so[.\d]*\s+\([^)]*\)\s+=>", cap=200),
        Tap("pip-nccl", r"^(?:nvidia-nccl-cu\d+|nccl)\s+\d", ignore_case=True, cap=200),
    )

    def __init__(self) -> None:
        super().__init__()
        self.hvd_version = ""
        self.ops: list[tuple[Evidence, str, bool]] = []  # (evidence, op, built)
        self._ops_at: tuple[str, int] | None = None
        self.ports: list[tuple[str, str, Evidence]] = []  # (ca, state, evidence)
        self._ca: tuple[str, str, int] | None = None
        self.ib_absent: list[Evidence] = []
        self.libnccl: dict[str, Evidence] = {}
        self.pip: dict[str, tuple[str, Evidence]] = {}

    def feed(self, tap: str, line_no: int, text: str) -> None:
        if tap == "hvd-version":
            m = _HVD_VERSION.search(text)
            self.hvd_version = m["v"] if m else self.hvd_version
        elif tap == "hvd-ops":
            self._ops_at = (self.file, line_no)
        elif tap == "hvd-ops:follow" and self._near(self._ops_at, line_no, 10):
            m = _BOX.match(text[:200])
            if m:
                ev = self.evidence(line_no, text, 0, len(text), "check-build")
                self.ops.append((ev, m["name"].strip(), m["mark"] != " "))
        elif tap == "ibstat-ca":
            m = _CA.match(text)
            if m:
                self._ca = (m["ca"], self.file, line_no)
        elif tap == "ibstat-ca:follow" and self._ca and self._near(self._ca[1:], line_no, 40):
            m = _STATE.match(text)
            if m:
                ev = self.evidence(line_no, text, m.start("state"), m.end("state"), "ibstat")
                self.ports.append((self._ca[0], m["state"], ev))
        elif tap == "ib-absent":
            self.ib_absent.append(self.evidence(line_no, text, 0, len(text), "ib"))
        elif tap == "ldconfig":
            m = _LDCONFIG.match(text)
            if m:
                self.libnccl.setdefault(m["path"], self.evidence(line_no, text, 0, len(text)))
        elif tap == "pip-nccl":
            m = _PIP_NCCL.match(text.strip())
            if m:
                self.pip.setdefault(m["pkg"].lower(), (m["v"], self.evidence(line_no, text)))

    def _near(self, anchor: tuple[str, int] | None, line_no: int, reach: int) -> bool:
        return anchor is not None and anchor[0] == self.file and 0 < line_no - anchor[1] <= reach

    def finish(self, facts: Facts) -> Report:
        report = Report()
        missing = [(ev, op) for ev, op, built in self.ops if op.upper() == "NCCL" and not built]
        if missing:
            params = {"horovod_version": self.hvd_version} if self.hvd_version else {}
            report.findings.append(
                Finding(
                    "check-build-no-nccl",
                    "check-build-no-nccl",
                    0.9,
                    "`horovodrun --check-build` lists NCCL as not built in",
                    [missing[0][0]],
                    params,
                )
            )
        if self.ports:
            active = [p for p in self.ports if p[1].lower() == "active"]
            if not active:
                report.findings.append(
                    Finding(
                        "no-active-ib-port",
                        "no-active-ib-port",
                        0.6,
                        "ibstat shows no InfiniBand port in state Active",
                        [p[2] for p in self.ports[:3]],
                        {"hca": self.ports[0][0]},
                    )
                )
            elif len(active) < len(self.ports):
                down = [p for p in self.ports if p[1].lower() != "active"]
                report.notes.append(
                    Note(
                        "ib-ports-down",
                        f"{len(down)} of {len(self.ports)} IB ports are not Active",
                        [p[2] for p in down[:3]],
                    )
                )
        elif self.ib_absent:
            report.notes.append(
                Note(
                    "ib-absent",
                    "no InfiniBand tools or devices on this node "
                    "(fine for one node; multi-node jobs then use TCP sockets)",
                    self.ib_absent[:2],
                )
            )
        real = {p for p in self.libnccl if re.search(r"\.so\.\d+\.\d+", p)} or set(self.libnccl)
        dirs = {p.rsplit("/", 1)[0] for p in real}
        if len(dirs) > 1:
            report.notes.append(
                Note(
                    "several-libnccl",
                    "the loader finds libnccl in several "
                    f"places ({', '.join(sorted(dirs))}): make sure each job "
                    "loads the one it was built with",
                    [self.libnccl[p] for p in sorted(real)][:3],
                )
            )
        wheels = {k: v for k, v in self.pip.items() if k.startswith("nvidia-nccl")}
        if len(wheels) > 1:
            report.notes.append(
                Note(
                    "several-nccl-wheels",
                    "several NCCL wheels are installed: "
                    + ", ".join(f"{k} {v[0]}" for k, v in sorted(wheels.items())),
                    [v[1] for v in wheels.values()][:3],
                )
            )
        return report
