"""How a hang artefact is recognised, without reading it: a Flight Recorder dump's name
and first bytes, an `ncclras` report's markers, and the statements' prefixes.

Every diagnosis asks this of each input (most are plain logs), so it lives apart from
the readers (`flightrec`, `ras`): they are imported only for an input that is one.
"""

from __future__ import annotations

import os

from kb.util.lazyre import LazyPattern

FLIGHT_RECORDER_PREFIX = "dlperf-hang: flight-recorder:"
RAS_PREFIX = "dlperf-hang: nccl-ras:"
RAS_MARKERS = ("Job summary\n===========", "\nCommunicators...", "Group     Comms     Nodes")
RANK = LazyPattern(r"(\d+)(?:\.json|\.pkl|\.pickle)?$")


def rank_of(path: str) -> int | None:
    """The rank a dump's name ends with (`rank_3`, `nccl_trace_rank_3`)."""
    m = RANK.search(os.path.basename(path))
    return int(m.group(1)) if m else None


def sniff(path: str) -> bool:
    """Whether a file looks like a dump: a pickle (protocol 2+) or JSON with `entries`,
    named with a trailing rank number."""
    if rank_of(path) is None:
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if head[:1] == b"\x80" and len(head) > 1 and 2 <= head[1] <= 5:
        return True
    text = head.lstrip()
    return text[:1] == b"{" and (b'"entries"' in head or b'"pg_config"' in head)


def looks_like_ras(text: str) -> bool:
    """Whether a text holds an `ncclras` report."""
    return any(m in text for m in RAS_MARKERS)
