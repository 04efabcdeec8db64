"""NCCL's own error codes, in every wrapping they reach the user in.

However a framework words it (`NCCL error in: ProcessGroupNCCL.cpp:825, unhandled
system error`, `NCCL Error 2: unhandled system error`, Paddle's `NCCL error(2)`, nccl-tests'
`Test NCCL failure common.cu:777 'unhandled system error'` or, with newer NCCL, `... 'internal
error - please report this issue to the NCCL developers / '`, `ncclSystemError: System call
(socket, malloc, munmap, etc) failed.`, old PyTorch's `unhanled system error`, RCCL's `Rccl
error, unhandled system error` on AMD GPUs), a returned
ncclResult_t means NCCL failed: the finding `nccl-returned-error` shows the symptom
whose `named_by` lists it (NCCL failed while creating its communicator), certainly
present even when no line says why. Its kind narrows the cause (`kb.diagnosis.candidates`):
a *system* error is a failed system call (shared memory, sockets, locked memory), a
*cuda* error a failed CUDA call (P2P/IPC between GPUs, a bad device), an *internal*
error mostly the IB stack, *invalid usage* two ranks on one GPU or mismatched calls,
a *remote* error a peer that died or a network that dropped.
"""

from __future__ import annotations

import re
from collections import Counter

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

FINDING = "nccl-returned-error"  # rules/vocabulary/findings.yaml
# (kind, its ncclResult_t code, how its text reads in any wrapping): nccl-tests quotes the
# text and, built with an NCCL that has ncclGetLastError, adds ` / ` and NCCL's last error
# ('internal error - please report this issue to the NCCL developers / '); newer texts add
# `(run with NCCL_DEBUG=INFO for details)`; Paddle writes `NCCL error(2), unhandled ...`.
_TEXTS = (
    ("cuda", 1, r"unhand?led cuda error|ncclUnhandledCudaError"),
    ("system", 2, r"unhand?led system error|ncclSystemError"),
    # the words alone are everyone's: only as the quoted or listed text of the error
    (
        "internal",
        3,
        r"(?:'|, |: )internal error\b|internal error - please report|ncclInternalError",
    ),
    ("invalid-argument", 4, r"(?:'|, |: )invalid argument\b|ncclInvalidArgument"),
    ("invalid-usage", 5, r"invalid usage|ncclInvalidUsage"),
    ("remote", 6, r"remote process exited or there was a network error|ncclRemoteError"),
)
_KINDS = tuple((kind, rf"{text}|NCCL Error[ (]{code}\b") for kind, code, text in _TEXTS)
_ANY = LazyPattern("|".join(f"(?P<{k.replace('-', '_')}>{rx})" for k, rx in _KINDS), re.I)
_NCCL = LazyPattern(r"[nr]ccl", re.I)  # RCCL, NCCL on AMD GPUs, returns the same codes


class NcclErrors(Analyzer):
    name = "nccl-error"
    taps = (Tap("error", "|".join(rx for _, rx in _KINDS), ignore_case=True, cap=200),)

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[tuple[str, Evidence]] = []

    def feed(self, tap: str, line_no: int, text: str) -> None:
        m = _ANY.search(text)
        if m is None or m.lastgroup is None:
            return
        kind = m.lastgroup.replace("_", "-")
        # the words alone ("internal error") are NCCL's only on a line that names NCCL
        if not _NCCL.search(text):
            return
        self.errors.append((kind, self.evidence(line_no, text, m.start(), m.end(), kind)))

    def finish(self, facts: Facts) -> Report:
        report = Report()
        if not self.errors:
            return report
        kind = Counter(k for k, _ in self.errors).most_common(1)[0][0]
        facts["nccl_error"] = kind
        evidence = [e for k, e in self.errors if k == kind][:3]
        report.findings.append(
            Finding(
                FINDING,
                f"nccl-{kind}-error",
                0.7,
                f"NCCL returned {'an' if kind[0] in 'aeiou' else 'a'} {kind} error",
                evidence,
                {"nccl_error": kind},
            )
        )
        return report
