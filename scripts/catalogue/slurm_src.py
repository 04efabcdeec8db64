"""Slurm (SchedMD/slurm) at the first and last release of each minor from 17.11: what a
job's output and a node's slurmd log show from srun, salloc, sbatch, slurmstepd, the MPI
plugins (pmix, pmi2, cray_shasta), task/cgroup and the cgroup plugins (the OOM-kill
report), gres/gpu (device binding), the step-launch API, the socket layer ("Unable to resolve"), and the error-code strings of
src/common/slurm_errno.c (what `%m` and `slurm_strerror` print after "Unable to allocate
resources: " and the like).

Each `error`/`fatal`/`warning`/`info` call's format is read by cprintf (`verbose` and the
`debug*` levels print only with -v); the pmix plugin's `PMIXP_ERROR*`/`PMIXP_ABORT`
macros give their format (the `_STD`/`_NO` forms with the `: %s (%d)` strerror tail they
add); Slurm's own conversions (`%ps` a step id, `%pJ` a job, `%pA` an address) are values
(`%s`). Each error-code string is an entry of its own, its topic the code's name.

    python scripts/catalogue/build.py slurm --git-dir /path/to/slurm.git"""

from __future__ import annotations

import re
from pathlib import Path

from cprintf import calls
from gitsrc import release_tags
from merge import Found, Seen, scan_revisions
from srckit import first_and_last, literals_text

MACROS = {
    "error": 0, "fatal": 0, "fatal_abort": 0, "warning": 0, "info": 0, "slurm_error": 0,
    "slurm_info": 0, "error_in_daemon": 0,
    "PMIXP_ERROR": 0, "PMIXP_ABORT": 0, "PMIXP_ERROR_STD": 0, "PMIXP_ERROR_NO": 1,
}  # fmt: skip
LEVELS = {
    "error": "error", "fatal": "fatal", "fatal_abort": "fatal", "warning": "warn",
    "info": "info", "slurm_error": "error", "slurm_info": "info", "error_in_daemon": "error",
    "PMIXP_ERROR": "error", "PMIXP_ABORT": "error", "PMIXP_ERROR_STD": "error",
    "PMIXP_ERROR_NO": "error",
}  # fmt: skip
STRERROR_TAIL = {"PMIXP_ERROR_STD", "PMIXP_ERROR_NO"}  # they append `: strerror (errno)`

# the folders and files read (src/srun/libsrun and launch/slurm: srun before 23.11)
PATHS = (
    "src/srun", "src/salloc", "src/sbatch", "src/slurmd/slurmstepd", "src/plugins/mpi",
    "src/plugins/task/cgroup", "src/plugins/cgroup", "src/plugins/gres/gpu",
    "src/plugins/gres/common", "src/plugins/launch/slurm", "src/api/step_launch.c",
    "src/api/step_ctx.c", "src/api/step_io.c", "src/api/allocate.c",
    "src/common/slurm_errno.c", "src/common/slurm_protocol_socket.c",
    "src/common/slurm_protocol_socket_implementation.c",
)  # fmt: skip
ERRNO_FILE = "src/common/slurm_errno.c"
TAG = r"slurm-(\d+-\d+-\d+)-\d+"
_SLURM_CONV = re.compile(r"%p[A-Za-z]")
_ERRTAB = re.compile(r"slurm_errtab\[\]\s*=\s*\{")
_ENTRY = re.compile(
    r"\{\s*(?:ERRTAB_ENTRY\(\s*(\w+)\s*\)|(-?\w+))\s*,\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)\}"
)
# a macro's body (`#define PMIXP_ERROR(...) error(" %s: " format, ...)`): its calls are read
# where the macro is used
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define\b(?:[^\n]*\\\n)*[^\n]*", re.M)


def keep(path: str) -> bool:
    """C sources of the scope; tests and the srun/pmix test programs left out."""
    return path.endswith((".c", ".h")) and "/test" not in path and "/testsuite" not in path


def errno_strings(text: str) -> list[tuple[str, str]]:
    """(code name, description) of each row of `slurm_errtab` (`{ ESLURM_X, "text" }`
    before 20.11, `{ ERRTAB_ENTRY(ESLURM_X), "text" }` after); success left out."""
    start = _ERRTAB.search(text)
    if not start:
        return []
    end = text.find("};", start.end())
    out = []
    for m in _ENTRY.finditer(text, start.end(), end if end > 0 else len(text)):
        name = m.group(1) or m.group(2)
        if name in ("0", "SLURM_SUCCESS"):
            continue
        name = "SLURM_ERROR" if name == "-1" else name
        desc = literals_text(m.group(3)).strip()
        if desc:
            out.append((name, desc))
    return out


def read(text: str) -> list[Found]:
    """What one file prints: its log calls, or the error-code table; no repeats."""
    if _ERRTAB.search(text):
        return [("error", d.replace("%", "%%"), {"topic": n}) for n, d in errno_strings(text)]
    found: dict[tuple[str, str], None] = {}
    for c in calls(_DEFINE.sub("", text), MACROS):
        template = _SLURM_CONV.sub("%s", c.template)
        if c.macro in STRERROR_TAIL:
            template += ": %s (%d)"
        found[(LEVELS[c.macro], template.strip())] = None
    return [(level, template, {}) for level, template in found]


def sampled_tags(git_dir: Path, minimum: str = "17.11.0") -> list[tuple[str, str]]:
    """(tag, version) of the first and the last release of each minor from `minimum`
    (pre-releases and release candidates have no `-N-M` tail and are left out)."""
    tags = release_tags(git_dir, TAG, minimum.replace(".", "-"))
    return first_and_last([(tag, version.replace("-", ".")) for tag, version in tags], 2)


def scan(git_dir: Path) -> tuple[str, list[Seen]]:
    tags = sampled_tags(git_dir)
    if not tags:
        raise ValueError(f"{git_dir}: no tag slurm-X-Y-Z-N from 17.11")
    return scan_revisions(git_dir, tags, keep, read, PATHS)


# Pyxis (NVIDIA/pyxis), Slurm's SPANK plugin for containers (enroot): its `pyxis: ...`
# lines, which srun and slurmstepd print into the job's output; `slurm_spank_log` prints at
# the error level without "error: " (its `%s` alone, enroot's log replayed, is no message)
PYXIS_MACROS = {"slurm_error": 0, "slurm_info": 0, "slurm_spank_log": 0}
PYXIS_LEVELS = {"slurm_error": "error", "slurm_info": "info", "slurm_spank_log": "info"}


def read_pyxis(text: str) -> list[Found]:
    found = dict.fromkeys(
        (PYXIS_LEVELS[c.macro], c.template) for c in calls(_DEFINE.sub("", text), PYXIS_MACROS)
    )
    return [(level, template, {}) for level, template in found if template != "%s"]


def scan_pyxis(git_dir: Path) -> tuple[str, list[Seen]]:
    """Pyxis's C sources at every release tag vX.Y.Z (tests left out)."""
    tags = release_tags(git_dir, r"v(\d+\.\d+\.\d+)", "0.1.0")
    if not tags:
        raise ValueError(f"{git_dir}: no tag vX.Y.Z")

    def keep_pyxis(path: str) -> bool:
        return path.endswith((".c", ".h")) and "/" not in path

    return scan_revisions(git_dir, tags, keep_pyxis, read_pyxis)
