"""Gloo ranks that advertise the loopback address to each other.

Gloo (PyTorch's CPU and bootstrap backend, Horovod's controller) picks the address of
the interface the hostname resolves to; under host networking or a hosts file that
maps the hostname to 127.0.0.1, every rank tells the others to connect to
`127.0.0.1`. A failed connection whose remote end is a loopback address, in a mesh of
several ranks (`Gloo connectFullMesh failed ... remote=[127.0.0.1]:<port> (rank=8,
size=16, local=[127.0.0.1])`), is that mistake -> nccl-wrong-interface (the fix is
`GLOO_SOCKET_IFNAME`, like `NCCL_SOCKET_IFNAME`). The size may come on the next lines
when the message was wrapped.
"""

from __future__ import annotations

import re

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

_LOOPBACK = r"remote=\[(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)\]"
_SIZE = LazyPattern(r"\bsize=(\d+)")
REACH = 3


class Gloo(Analyzer):
    name = "gloo"
    taps = (Tap("loopback", _LOOPBACK, follow=REACH, cap=20),)

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[Evidence, int | None]] = []
        self._at = ("", 0)

    def feed(self, tap: str, line_no: int, text: str) -> None:
        m = _SIZE.search(text)
        if tap == "loopback":
            found = re.search(_LOOPBACK, text)
            start, end = found.span() if found else (0, len(text))
            ev = self.evidence(line_no, text, start, end, "loopback-remote")
            self.found.append((ev, int(m[1]) if m else None))
            self._at = (self.file, line_no)
        elif (
            m
            and self.found
            and self.found[-1][1] is None
            and self._at[0] == self.file
            and 0 < line_no - self._at[1] <= REACH
        ):
            self.found[-1] = (self.found[-1][0], int(m[1]))

    def finish(self, facts: Facts) -> Report:
        report = Report()
        meshes = [(ev, size) for ev, size in self.found if size is None or size > 1]
        if not meshes or facts.get("single_node"):
            return report
        size = meshes[0][1]
        ranks = f"a mesh of {size} ranks" if size else "a mesh of several ranks"
        report.findings.append(
            Finding(
                "gloo-loopback-peer",
                "gloo-loopback-peer",
                0.75,
                f"Gloo ranks in {ranks} were told to reach each other at a loopback "
                "address: the hostname resolves to 127.0.0.1 or the wrong interface was picked",
                [e for e, _ in meshes[:2]],
                {"address": "127.0.0.1"},
            )
        )
        return report
