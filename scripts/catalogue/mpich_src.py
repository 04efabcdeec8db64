"""MPICH (pmodels/mpich) at every release tag from v3.0: what its launcher, its PMI client
and the library print, which MVAPICH and Intel MPI (their Hydra) print too.

- Hydra (src/pm/hydra; src/pm/hydra2, the rewrite shipped beside it in 3.3-4.0, which
  Intel MPI's i_hydra grew from): the formats of `HYDU_ERR_POP/SETANDJUMP/CHKANDJUMP`,
  `HYDU_error_printf` (and hydra2's `HYD_ERR_*`, `HYD_ERR_PRINT`), `HYDU_warn_printf`
  (level warn), and `HYDU_ASSERT(x)` as `assert (<x>) failed`, the expression as the
  compiler stringifies it. Hydra prints `[mpiexec@HOST] FUNC (FILE:LINE): MESSAGE`; the
  template is the MESSAGE alone, so it matches whatever the prefix and the source path.
  Its stdout prints are level info (the option help left out), but for the capitals it
  shouts a job's failure in (`BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES`).
- The PMI client (src/pmi): `PMIU_printf(1, ...)`, the always-printed ones.
- MPICH's error strings: every `**name[ args]:text` of the tree's errnames.txt files
  (the texts `MPIR_Err_create_code` fills an error stack with, `FUNC(LINE)...: text`),
  MPICH's own conversions (`%C` a communicator, `%D` a datatype, `%i` a rank...) read as
  values, the name kept as the topic; the library's stderr prints
  (`MPL_error_printf`, `MPIU_Error_printf`, `fprintf(stderr, ...)`); and the lines
  assembled from pieces (`Fatal error in %s: %s, error stack:`, `Abort(%d) on node %d
  (rank %d in comm %d): %s`), each where its file holds every piece.

    python scripts/catalogue/build.py mpich --git-dir /path/to/mpich.git"""

from __future__ import annotations

import bisect
import re
from collections.abc import Hashable
from pathlib import Path

from cprintf import _decode, _skip_arg, _skip_space, calls
from gitsrc import BlobReader, files_at, release_tags
from merge import Found, Merger, Seen, span
from srckit import add_files

TAGS = r"v(\d+\.\d+(?:\.\d+)?)"  # v3.0, v3.1.4, v4.2.0; rc/a/b tags left out
MINIMUM = "3.0"

_HYDRA = ("src/pm/hydra/", "src/pm/hydra2/")
# bundled copies (hwloc, MPL) and what is never printed to a job
_LEFT_OUT = re.compile(r"/(examples|test|tests|mpl|confdb|mansrc)/|/topo/hwloc/hwloc/")
_LIBRARY = ("src/mpi/", "src/mpid/", "src/util/", "src/mpi_t/", "src/glue/", "src/pmi/")
# bundled code, Blue Gene's device (its prints are tuning traces), the log converters
_BUNDLED = re.compile(
    r"^src/mpi/romio/|^src/mpid/ch4/netmod/ofi/libfabric/|^src/mpid/pamid/|^src/util/logging/"
    r"|/utils/monitor/|^src/mpi/debugger/"
)
_SOURCE = (".c", ".h", ".c.in", ".h.in")

ERRORS = {
    "HYDU_ERR_POP": 1,
    "HYDU_ERR_SETANDJUMP": 2,
    "HYDU_ERR_CHKANDJUMP": 3,
    "HYDU_error_printf": 0,
    "HYD_ERR_POP": 1,
    "HYD_ERR_SETANDJUMP": 2,
    "HYD_ERR_CHKANDJUMP": 3,
    "HYD_ERR_PRINT": 0,
    "MPL_error_printf": 0,
    "MPIU_Error_printf": 0,
    "MPL_internal_error_printf": 0,
    "MPIU_Internal_error_printf": 0,
    "MPICH_STDERR": 0,  # a print to stderr, marked by _marked
}
WARNINGS = {"HYDU_warn_printf": 0}
OUTPUT = {"printf": 0, "MPICH_STDOUT": 0}
_TO_STREAM = re.compile(
    r"(?<![\w.>])(?:HYDU_dump|HYDU_dump_noprefix|HYD_PRINT|HYD_PRINT_NOPREFIX|fprintf)"
    r"\s*\(\s*(stderr|stdout)\s*,"
)
_PMIU_ALWAYS = re.compile(r"(?<![\w.>])PMIU_printf\s*\(\s*1\s*,")
_ASSERT = re.compile(r"(?<![\w.>])HYDU?_ASSERT\s*\(")
# a function's head at the start of a line: the help texts' functions are left out
_FUNCTION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{}]*\)\s*\{", re.M)
_HELP_FUNCTION = re.compile(r"help|usage|notes|pattern_info")
_CONVERSION = re.compile(r"%[-+ #0-9.]*(?:hh|h|ll|l|z)?[a-zA-Z]")

# lines MPICH assembles from pieces: (template, the literals its source holds)
COMPOSED = (
    ("Fatal error in %s: %s, error stack:", ('"Fatal error in %s: "', '", error stack:')),
    ("Fatal error in %s: %s", ('"Fatal error in %s: "',)),
    (
        "Abort(%d) on node %d (rank %d in comm %d): %s",
        ('"Abort(%d)%s%s: %s%s', '" on node %d"', '" (rank %d in comm %d)"'),
    ),
    # MPI_Abort's text (src/mpi/init/abort.c, init_impl.c) and ch3's MPID_Abort
    (
        "application called MPI_Abort(%s, %d) - process %d",
        ('"application called MPI_Abort(%s, %d) - process %d"',),
    ),
    ("internal ABORT - process %d: %s", ('"internal ABORT - process %d: %s"',)),
)

# MPIR_Err_create_code's conversions (errutil.c vsnprintf_mpi): one letter, no flags
_MPICH_CONVERSIONS = {"s": "%s", "d": "%d", "L": "%lld", "x": "%x", "X": "%X", "p": "%p"}
_MPICH_CONVERSIONS["c"] = "%lld"  # an MPI_Count
_MPICH_HANDLE = "itCIDFWAGOREKS"  # a rank, a tag, a handle: printed as a word or a number
_ERRNAME = re.compile(r"^(\*\*[^:\s]+)((?: +%\S+)*)\s*:(.*)$")


def keep(path: str) -> bool:
    """Hydra's and the library's C sources and every errnames.txt, bundled copies,
    tests and examples left out."""
    if _LEFT_OUT.search(path) or _BUNDLED.search(path):
        return False
    if path.endswith("errnames.txt"):
        return path.startswith("src/")
    return path.startswith(_HYDRA + _LIBRARY) and path.endswith(_SOURCE)


def mpich_format(text: str) -> str:
    """An errnames text as a printf template: MPICH's own conversions become values, a
    `%` that is not one is literal."""

    def conv(m: re.Match[str]) -> str:
        c = m.group(1)
        if c in _MPICH_CONVERSIONS:
            return _MPICH_CONVERSIONS[c]
        return "%s" if c in _MPICH_HANDLE else "%%" + c

    return re.sub(r"%(.|$)", conv, text)


def errnames(text: str) -> list[Found]:
    """The `**name[ args]:text` entries of an errnames.txt (a trailing backslash goes on
    with the next line), the name as the topic; the first text of a repeated one."""
    found: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + lines[i]
        i += 1
        m = _ERRNAME.match(line)
        if m and m.group(3).strip():
            # the text is compiled into a C string (defmsg.h): its escapes are C's
            found.setdefault(mpich_format(_decode(m.group(3).strip())), m.group(1))
    return [("error", t, {"topic": name}) for t, name in found.items()]


def _marked(text: str) -> str:
    """Prints to a stream as calls named by the stream: `MPICH_STDERR(` / `MPICH_STDOUT(`."""
    text = _TO_STREAM.sub(lambda m: f"MPICH_{m.group(1).upper()}(", text)
    return _PMIU_ALWAYS.sub("MPICH_STDERR(", text)


def shouted(template: str) -> bool:
    """Whether a stdout line is in capitals as Hydra reports a job's failure (`=   EXIT
    CODE: %d`, `YOUR APPLICATION TERMINATED WITH THE EXIT STRING: %s (signal %d)`): two
    words of capitals or more, none but capitals before the first value."""
    head = _CONVERSION.split(template, maxsplit=1)[0]
    words = re.findall(r"\b[A-Z]{2,}\b", _CONVERSION.sub(" ", template))
    return len(words) >= 2 and not re.search(r"[a-z]", head)


def asserts(text: str) -> list[str]:
    """`assert (<x>) failed` for each HYDU_ASSERT/HYD_ASSERT(x, status) of `text`."""
    out: list[str] = []
    for m in _ASSERT.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if re.fullmatch(r"\s*#\s*define\s+", text[start : m.start()]):
            continue
        i = _skip_space(text, m.end())
        expr = text[i : _skip_arg(text, i)]
        expr = re.sub(r"/\*.*?\*/", " ", expr, flags=re.S)
        expr = " ".join(expr.replace("\\\n", " ").split())
        if expr:
            out.append(f"assert ({expr.replace('%', '%%')}) failed")
    return out


def read_source(path: str, text: str) -> list[Found]:
    """What one file prints: errnames' entries, or the C source's formats by level."""
    if path.endswith("errnames.txt"):
        return errnames(text)
    found: dict[tuple[str, str], None] = {}
    marked = _marked(text)
    for c in calls(marked, ERRORS):
        found[("error", c.template)] = None
    for c in calls(marked, WARNINGS):
        found[("warn", c.template)] = None
    if path.startswith(_HYDRA):
        for template in asserts(text):
            found[("error", template)] = None
        heads = [(m.start(), m.group(1)) for m in _FUNCTION.finditer(marked)]
        starts = [pos for pos, _ in heads]
        offsets = [0]
        for ln in marked.splitlines(keepends=True):
            offsets.append(offsets[-1] + len(ln))
        for c in calls(marked, OUTPUT):
            at = bisect.bisect_right(starts, offsets[c.line - 1]) - 1
            if at >= 0 and _HELP_FUNCTION.search(heads[at][1]):
                continue  # the option help: printed when asked
            found[("error" if shouted(c.template) else "info", c.template)] = None
    for template, pieces in COMPOSED:
        if all(p in text for p in pieces):
            found[("error", template)] = None
    return [(level, template, {}) for level, template in found]


def _kind(path: str) -> str:
    """How a file is read: the same blob reads alike under any path of its kind."""
    if path.endswith("errnames.txt"):
        return "errnames"
    return "hydra" if path.startswith(_HYDRA) else "library"


def scan(git_dir: Path) -> tuple[str, list[Seen]]:
    """Every message of every release tag from v3.0 (release candidates left out),
    oldest first, each blob read once per kind of path."""
    tags = release_tags(git_dir, TAGS, MINIMUM)
    if not tags:
        raise ValueError(f"{git_dir}: no tag vX.Y[.Z] from {MINIMUM}")
    reader = BlobReader(git_dir)
    merger = Merger()
    done: dict[Hashable, list[Found]] = {}
    for tag, version in tags:
        files = files_at(git_dir, tag, keep, ("src",))
        add_files(merger, reader, files, version, read_source, done, lambda p, sha: (sha, _kind(p)))
    reader.close()
    return span(tags[0][1], tags[-1][1]), merger.entries()
