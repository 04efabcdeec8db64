"""PMIx (openpmix/openpmix) at every release tag: the `[topic]` texts of its `help-*.txt`
(printed by `pmix_show_help`, read as showhelp reads Open MPI's), the `pmix_output(0, ...)`
lines (stream 0 is stderr, printed whatever the verbosity; other streams are debug
output), and `PMIX_ERROR_LOG(rc)`'s `PMIX ERROR: <status> in file %s at line %d`, one entry
per status string `PMIx_Error_string` can give (a switch in src/util/error.c through
4.2.4; from 4.2.5 the constants' own names, harvested at build time from the headers'
"PMIX ERROR CONSTANTS" section), so that the status a line names is what classifies it.

    python scripts/catalogue/build.py pmix --git-dir /path/to/openpmix.git"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import showhelp
from cprintf import calls
from gitsrc import BlobReader, files_at, release_tags
from merge import Found, Merger, Seen, span
from srckit import switch_returns

_HELP = re.compile(r"(^|/)help-[^/]*\.txt$")
# the files that hold the status strings: the 2.x-4.x switch, the 5.x+ constants
_STATUS_FILES = re.compile(
    r"^(?:src/util/(?:pmix_)?error\.c|include/pmix_common\.h(?:\.in)?|include/pmix_deprecated\.h"
    r"|src/util/(?:pmix_)?error\.h)$"
)
_ERROR_C = re.compile(r"^src/util/(?:pmix_)?error\.c$")
_OUTPUT0 = re.compile(r"(?<![\w.>])pmix_output\s*\(\s*0\s*,")
_FUNC = re.compile(r"PMIx_Error_string\s*\(\s*pmix_status_t\s+\w+\s*\)\s*\{")
_CONSTANTS = "PMIX ERROR CONSTANTS"
_CONSTANTS_END = re.compile(r"PMIX_EXTERNAL_ERR_BASE|PMIX_ERR_SYS_BASE|PMIX_INTERNAL_ERR_DONE")
_DEFINE = re.compile(r"^\s*#define\s+(PMIX_ERR_\w+|PMIX_ERROR)\s+\(?-?\d+")
ERROR_LOG = "PMIX ERROR: {} in file %s at line %d"


def keep(path: str) -> bool:
    """The files read: help texts and C sources, tests, examples and contrib left out."""
    if "/test" in path or path.startswith(("test", "examples/", "contrib/")):
        return False
    return bool(_HELP.search(path) or _STATUS_FILES.match(path) or path.endswith((".c", ".h")))


def status_strings(text: str) -> Iterator[str]:
    """The texts `PMIx_Error_string` returns, read from the switch (2.x-4.x) or, where the
    file has the constants section (5.x+), the error constants' names."""
    for name, said in switch_returns(text, _FUNC):
        if name not in ("PMIX_SUCCESS", "PMIX_ERR_SILENT"):  # never logged
            yield said
    start = text.find(_CONSTANTS)
    if start < 0:
        return
    for line in text[start:].splitlines():
        if _CONSTANTS_END.search(line):
            break
        defined = _DEFINE.match(line)
        if defined and defined.group(1) != "PMIX_ERR_SILENT":
            yield defined.group(1)


def read_source(path: str, text: str, statuses: bool = True) -> list[Found]:
    """What one file of the tree prints: its show_help topics, its stderr lines, and
    (`statuses`: where the release takes its status strings from this file) the
    PMIX_ERROR_LOG line for each status it names; no repeats."""
    if _HELP.search(path):
        return [("help", body, {"topic": topic}) for topic, body in showhelp.sections(text)]
    found: dict[str, None] = {}
    if statuses and _STATUS_FILES.match(path):
        found.update(dict.fromkeys(ERROR_LOG.format(s) for s in status_strings(text)))
    marked = _OUTPUT0.sub("PMIX_OUTPUT_STDERR(", text)
    found.update(dict.fromkeys(c.template for c in calls(marked, {"PMIX_OUTPUT_STDERR": 0})))
    return [("error", template, {}) for template in found]


def scan(git_dir: Path, minimum: str = "2.0.0") -> tuple[str, list[Seen]]:
    """Every message of every release tag vX.Y.Z from `minimum` (release candidates left
    out), oldest first, each file version (blob) read once."""
    tags = release_tags(git_dir, r"v(\d+\.\d+\.\d+)", minimum)
    if not tags:
        raise ValueError(f"{git_dir}: no tag vX.Y.Z from {minimum}")
    reader = BlobReader(git_dir)
    merger = Merger()
    per_blob: dict[tuple[str, bool, bool], list[Found]] = {}
    for tag, version in tags:
        files = list(files_at(git_dir, tag, keep))
        # the constants' names are the strings only where the table is generated (5.x+)
        generated = any(
            _ERROR_C.match(p) and "pmix_event_strings" in reader.read(sha) for p, sha in files
        )
        for path, sha in files:
            statuses = bool(_STATUS_FILES.match(path)) and (generated or bool(_ERROR_C.match(path)))
            key = (sha, bool(_HELP.search(path)), statuses)
            if key not in per_blob:
                per_blob[key] = read_source(path, reader.read(sha), statuses)
            for level, template, extra in per_blob[key]:
                merger.add(version, level, template, path, **extra)
    reader.close()
    return span(tags[0][1], tags[-1][1]), merger.entries()
