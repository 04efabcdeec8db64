"""A node as recorded: a check's read-only command run against outputs captured earlier.

Why: the batch walk (`dlperf-help walk --facts`) and the scenario tests must read a
node's recorded state through the rule's own command and conditions, never through a
second reading written in Python. The command runs here with a PATH that holds only
text tools (awk, grep, sed, ...) and, for each recorded program, a script that prints
the output recorded for those arguments; a program nobody recorded is `not found`, so
the check comes back `unavailable`, never a pass read off this machine.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kb.runners.base import CheckNeeds, CommandResult, Runner
from kb.runners.local import LocalRunner

TEXT_TOOLS = (
    "awk", "cat", "cut", "grep", "head", "paste", "sed", "sort", "tail", "tr", "uniq", "wc",
    "printf", "echo", "test", "[", "sh", "basename", "env",
)  # fmt: skip
NOT_RECORDED = 127


class RecordedNode(Runner):
    """A runner that answers from recorded outputs: {program: [(argument glob, output, exit)]}.

    Only read-only checks belong here: nothing runs on any node."""

    def __init__(self, name: str, outputs: Mapping[str, Iterable[tuple[str, str, int]]]) -> None:
        self.name = name
        self._dir = Path(tempfile.mkdtemp(prefix="dlperf-recorded-"))
        for tool in TEXT_TOOLS:
            real = shutil.which(tool)
            if real is not None and not (self._dir / tool).exists():
                (self._dir / tool).symlink_to(real)
        self.programs = set(outputs)
        for program, cases in outputs.items():
            self._script(program, list(cases))
        self._runner = LocalRunner(name, env={"PATH": str(self._dir)})

    def _script(self, program: str, cases: list[tuple[str, str, int]]) -> None:
        if "/" in program or not program:
            raise ValueError(f"not a program name: {program!r}")
        lines = ["#!/bin/sh", 'case "$*" in']
        for i, (pattern, output, code) in enumerate(cases):
            out = self._dir / f".{program}.{i}"
            out.write_text(output, encoding="utf-8")
            lines.append(f"  {_glob(pattern)}) cat {shlex.quote(str(out))}; exit {int(code)};;")
        lines += [
            f"  *) echo {shlex.quote(program + ': no recorded output for these arguments')} >&2;"
            f" exit {NOT_RECORDED};;",
            "esac",
        ]
        path = self._dir / program
        if path.exists() or path.is_symlink():
            path.unlink()
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o755)

    def can_run(self, check: CheckNeeds) -> bool:
        """Only a read-only check whose programs (its `requires`) were recorded, or are
        text tools, runs here: anything else would read this machine, not the node."""
        tools = set(check.requires)
        recorded = tools & self.programs
        return check.read_only and bool(recorded) and tools <= self.programs | set(TEXT_TOOLS)

    def run(self, command: str, timeout: float) -> CommandResult:
        return self._runner.run(command, timeout)

    def cancel(self) -> None:
        self._runner.cancel()

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)


def _glob(pattern: str) -> str:
    """A `case` pattern: the recorded arguments quoted, `*` kept as the wildcard."""
    return "*".join(shlex.quote(part) if part else "" for part in pattern.split("*")) or "''"


def outputs_from_survey(facts: Mapping[str, Any]) -> dict[str, list[tuple[str, str, int]]]:
    """The outputs of `ip -o link show` and `ip -o addr show` as the survey's interfaces
    say they were (the survey read them from sysfs and `ip`)."""
    interfaces = facts.get("interfaces")
    if not isinstance(interfaces, list):
        return {}
    link, addr = [], []
    for n, nic in enumerate((i for i in interfaces if isinstance(i, dict)), start=1):
        name = str(nic.get("name") or "")
        if not name or any(c.isspace() for c in name):
            continue
        up = bool(nic.get("up"))
        flags = "LOOPBACK," if nic.get("kind") == "loopback" else "BROADCAST,MULTICAST,"
        flags += "UP,LOWER_UP" if up else "NOARP"
        state = str(nic.get("state") or ("UP" if up else "DOWN"))
        link.append(f"{n}: {name}: <{flags}> mtu {nic.get('mtu') or 1500} state {state}")
        for a in nic.get("addresses") or []:
            family = "inet6" if ":" in str(a) else "inet"
            addr.append(f"{n}: {name}    {family} {a} scope global {name}")
    ip = [
        ("-o link show", "\n".join(link) + "\n", 0),
        ("-o addr show", "\n".join(addr) + "\n", 0),
    ]
    return {"ip": ip}
