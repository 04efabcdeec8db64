"""One shell script that runs every read-only survey command and marks where each begins.

A node is surveyed in a single round trip (one `Runner.run`), which matters when the
runner is SSH and there are hundreds of nodes.  Each section runs under `timeout`
when the node has it, so one hung tool (a wedged `nvidia-smi`) costs its own
seconds and not the whole survey; sections that need the same tool share that one
probe: once a section's tool timed out, the later sections needing it are not run and
say so (`hung=`).  A tool that is not installed is reported as missing, never as an
error.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

BEGIN = "@@dlperf-survey begin "
END = "@@dlperf-survey end "


@dataclass(frozen=True)
class Section:
    """One read-only command: `needs` lists tools of which at least one must be on PATH."""

    name: str
    shell: str
    needs: tuple[str, ...] = ()
    seconds: int = 20


@dataclass
class Output:
    """What one section printed (stdout and stderr together)."""

    name: str
    text: str
    exit_code: int | None = None
    missing: str | None = None  # the tool that is not installed
    timed_out: bool = False
    seconds: int = 20
    hung: str | None = None  # not run: this tool had already timed out in an earlier section

    @property
    def ran(self) -> bool:
        return self.missing is None and self.exit_code is not None

    def why_not(self, tool: str) -> str | None:
        """Why this output cannot be trusted, in words; None when it ran fine."""
        if self.missing:
            return f"{self.missing} is not installed (not found on PATH)"
        if self.hung:
            return (
                f"{self.hung} did not answer within {self.seconds} s in an earlier section; "
                "not asked again"
            )
        if self.timed_out:
            return f"{tool} did not answer within {self.seconds} s"
        if self.exit_code is None:
            return f"{tool} output is missing (the survey stopped early)"
        if self.exit_code != 0:
            first = next((ln.strip() for ln in self.text.splitlines() if ln.strip()), "")
            return f"{tool} exited with status {self.exit_code}" + (
                f": {first[:160]}" if first else ""
            )
        return None


_PRELUDE = """\
LC_ALL=C; export LC_ALL
if command -v timeout >/dev/null 2>&1; then DLPS_T=1; else DLPS_T=; fi
dlps_run() { s=$1; shift; if [ -n "$DLPS_T" ]; then timeout -k 2 "$s" "$@"; else "$@"; fi; }
"""


def build_script(sections: list[Section]) -> str:
    """The whole survey as one POSIX `sh` script."""
    parts = [_PRELUDE]
    for sec in sections:
        body = f"dlps_run {sec.seconds} sh -c {shlex.quote(sec.shell)} 2>&1 </dev/null"
        done = f"dlps_rc=$?; printf '\\n{END}{sec.name} rc=%s@@\\n' \"$dlps_rc\""
        parts.append(f"printf '\\n{BEGIN}{sec.name}@@\\n'")
        if sec.needs:
            tool = sec.needs[0]
            flag = "DLPS_HUNG_" + re.sub(r"\W", "_", tool)
            test = " || ".join(f"command -v {shlex.quote(t)} >/dev/null 2>&1" for t in sec.needs)
            missing = f"printf '\\n{END}{sec.name} missing={tool}@@\\n'"
            hung = f"printf '\\n{END}{sec.name} hung={tool}@@\\n'"
            mark = f'case "$dlps_rc" in 124|137) {flag}=1;; esac'
            parts.append(
                f'if [ -n "${{{flag}:-}}" ]; then {hung}; '
                f"elif {test}; then {body}; {done}; {mark}; else {missing}; fi"
            )
        else:
            parts.append(f"{body}; {done}")
    return "\n".join(parts) + "\n"


_END_RE = re.compile(
    r"^@@dlperf-survey end (?P<name>[\w.-]+) "
    r"(?:rc=(?P<rc>\d+)|missing=(?P<missing>\S+)|hung=(?P<hung>\S+))@@$"
)


def split_output(stdout: str, sections: list[Section]) -> dict[str, Output]:
    """Cut the script's stdout back into one `Output` per section (absent ones have no exit code)."""
    seconds = {s.name: s.seconds for s in sections}
    out: dict[str, Output] = {}
    current: str | None = None
    lines: list[str] = []
    for line in stdout.splitlines():
        if line.startswith(BEGIN) and line.endswith("@@"):
            current, lines = line[len(BEGIN) : -2], []
            continue
        m = _END_RE.match(line)
        if m and current is not None and current == m["name"]:
            rc = int(m["rc"]) if m["rc"] is not None else None
            text = "\n".join(lines).strip("\n")
            out[current] = Output(
                current,
                text,
                rc,
                m["missing"],
                rc in (124, 137),
                seconds.get(current, 20),
                m["hung"],
            )
            current, lines = None, []
            continue
        if current is not None:
            lines.append(line)
    if current is not None:  # cut off mid-section: keep what came, with no exit status
        out[current] = Output(
            current, "\n".join(lines).strip("\n"), None, None, False, seconds.get(current, 20)
        )
    for sec in sections:
        out.setdefault(sec.name, Output(sec.name, "", None, None, False, sec.seconds))
    return out
