"""What a check run produces: per-check and per-host results, node-to-node matrices, events.

The JSON shape is the `check --json` contract of GUIDE.md §2; the events are what a
live view (the CLI's streaming lines, the TUI's hosts panel) receives as results arrive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STATUSES = ("pass", "fail", "unavailable", "error", "skipped")


@dataclass
class CheckResult:
    """A check as it was run, pasted or answered: what ran where, what came back, the
    verdict. The one record of a check, for `check --json`, the walk and the runbooks."""

    host: str  # as the user named it; "local", "pasted", "answered", or "a, b" combined
    id: str
    command: str
    status: str  # pass | fail | unavailable | error | skipped
    output: str = ""
    seconds: float = 0.0
    cause: str | None = None
    finding: str | None = None
    reason: str = ""  # why error/unavailable/skipped, in words
    peer: str | None = None  # for node-to-node checks: the node checked towards
    exit_code: int | None = None
    truncated: bool = False
    title: str = ""
    params: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "cause": self.cause,
            "command": self.command,
            "status": self.status,
            "output": self.output,
            "seconds": round(self.seconds, 3),
            "finding": self.finding,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.peer is not None:
            out["peer"] = self.peer
        if self.exit_code is not None:
            out["exit_code"] = self.exit_code
        if self.truncated:
            out["truncated"] = True
        if self.params:
            out["params"] = self.params
        return out


@dataclass
class HostResult:
    host: str  # as the user named it
    address: str | None = None
    port: int | None = None
    ok: bool = True
    error: str | None = None
    error_kind: str | None = None  # refused, timeout, dns, auth, unknown-host-key, ...
    checks: list[CheckResult] = field(default_factory=list)
    survey: dict[str, Any] | None = None  # kb.cluster.survey's document for this node
    network: dict[str, Any] | None = None  # interfaces and routes towards the other nodes

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "host": self.host,
            "address": self.address,
            "port": self.port,
            "ok": self.ok,
            "error": self.error,
        }
        if self.error_kind:
            out["error_kind"] = self.error_kind
        out["checks"] = [c.as_json() for c in self.checks]
        if self.survey is not None:
            out["facts"] = self.survey.get("facts", {})
            out["unavailable"] = self.survey.get("unavailable", {})
        if self.network is not None:
            out["network"] = self.network
        return out


@dataclass
class RunReport:
    hosts: list[HostResult] = field(default_factory=list)
    matrix: dict[str, dict[str, str]] = field(default_factory=dict)  # SSH, from -> to
    ping: dict[str, dict[str, str]] = field(default_factory=dict)  # large-packet ping
    interrupted: bool = False

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"hosts": [h.as_json() for h in self.hosts]}
        if self.matrix:
            out["matrix"] = self.matrix
        if self.ping:
            out["ping"] = self.ping
        if self.interrupted:
            out["interrupted"] = True
        return out

    @property
    def found_problem(self) -> bool:
        """A failing check, a check that could not run, an unreachable host or pair."""
        for host in self.hosts:
            if not host.ok or any(c.status in ("fail", "error") for c in host.checks):
                return True
        cells = [s for row in (*self.matrix.values(), *self.ping.values()) for s in row.values()]
        return any(s not in ("ok", "skipped", "unavailable") for s in cells)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for host in self.hosts:
            for c in host.checks:
                out[c.status] = out.get(c.status, 0) + 1
        return out


# ---------------------------------------------------------------- live events


@dataclass(frozen=True)
class HostEvent:
    """A host changed state: connecting, connected, unreachable, done, skipped."""

    host: str
    state: str
    detail: str = ""


@dataclass(frozen=True)
class CheckEvent:
    result: CheckResult


@dataclass(frozen=True)
class PairEvent:
    """One cell of a node-to-node matrix (`kind` ssh or ping)."""

    kind: str
    source: str
    target: str
    status: str


Event = HostEvent | CheckEvent | PairEvent
