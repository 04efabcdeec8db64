"""rdma-core (libibverbs, librdmacm, the mlx5 provider, libibmad/libibumad and the
infiniband-diags tools) and perftest (ib_write_bw and friends): what they print to a
job's terminal, at a sample of their release tags.

Both print with plain stdio, so a message is the format of `fprintf(stderr, ...)`,
`printf(...)` (`fprintf(stdout, ...)`), `perror("...")` (its text and `: %s`, the
strerror), and rdma-core's wrappers as they expand: `verbs_err/warn/info(ctx, fmt)`
(`"<dev>: <func>:<line>: " fmt`), `mlx5_err(fp, fmt)`, libibmad's `IBWARN` (`ibwarn:
[pid] func: `) and `IBPANIC` (`ibpanic: [pid] func: ... : %m`), infiniband-diags'
`IBEXIT` (`<prog>: iberror: failed: `). `PFX` is the library's prefix (`libibverbs: `,
`librdmacm: `, `mlx5: `). A format of several lines is one message per line, since a
log is read line by line. Left out: debug output (`verbs_debug`, `mlx5_dbg`, which only a
debug build or a debug mask prints) and the option help of perftest's usage text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from pathlib import Path

from cprintf import calls
from gitsrc import BlobReader, _git, files_at, version_key
from merge import Found, Merger, Seen, span
from srckit import add_files, first_and_last

# macro -> index of the format argument; the level, prefix and suffix its expansion adds
WRAPPERS: dict[str, tuple[int, str, str, str]] = {
    "__STDERR": (0, "error", "", ""),
    "printf": (0, "info", "", ""),
    "perror": (0, "error", "", ": %s"),
    "verbs_err": (1, "error", "%s: %s:%d: ", ""),
    "verbs_warn": (1, "warn", "%s: %s:%d: ", ""),
    "verbs_info": (1, "info", "%s: %s:%d: ", ""),
    "mlx5_err": (1, "error", "", ""),
    "IBWARN": (0, "warn", "ibwarn: [%d] %s: ", ""),
    "IBPANIC": (0, "fatal", "ibpanic: [%d] %s: ", ": %m"),
    "IBEXIT": (0, "fatal", "%s: iberror: failed: ", ""),
}
MACROS = {name: spec[0] for name, spec in WRAPPERS.items()}
PREFIXES = {"libibverbs/": "libibverbs: ", "librdmacm/": "librdmacm: ", "providers/": "mlx5: "}
RDMA_PATHS = (
    "libibverbs", "librdmacm", "providers/mlx5", "libibmad", "libibumad", "infiniband-diags",
)  # fmt: skip
SUFFIXES = (".c", ".h")
_STDERR = re.compile(r"\bfprintf\s*\(\s*stderr\s*,")
_STDOUT = re.compile(r"\bfprintf\s*\(\s*stdout\s*,")
_FAILED = re.compile(
    r"(?i)(fail|error|\berr\b|unable|couldn'?t|can'?t|cannot|invalid|not supported|"
    r"unsupported|no .*found|illegal|wrong|missing|not able)"
)
_WARNING = re.compile(r"(?i)\bwarn")
_OPTION_HELP = re.compile(r"^\s*(-\w\b|--\w|\[-)")


def _prefixed(path: str, text: str) -> str:
    """The file with its `PFX` prefix spelt out as the literal the header defines."""
    prefix = next((p for d, p in PREFIXES.items() if path.startswith(d)), None)
    if prefix is None:
        return text
    return re.sub(r"(?<![\w\"])PFX(?![\w\"])", '"' + prefix + '"', text)


def _level(macro: str, line: str) -> str:
    base = WRAPPERS[macro][1]
    if macro == "__STDERR":
        return "warn" if _WARNING.search(line) else "error"
    if macro == "printf":
        return "error" if _FAILED.search(line) else "info"
    return base


def file_messages(path: str, text: str) -> list[Found]:
    """(level, template, {}) of each message line one source file prints."""
    text = _STDOUT.sub("printf(", _STDERR.sub("__STDERR(", _prefixed(path, text)))
    found: dict[tuple[str, str], None] = {}
    for call in calls(text, MACROS):
        _, _, head, tail = WRAPPERS[call.macro]
        body = head + call.template.rstrip("\n") + tail
        whole = _level(call.macro, body)  # a warning's second line is the warning's too
        for piece in body.split("\n"):
            line = piece.strip()
            if not re.search(r"[A-Za-z]{2,}", line) or _OPTION_HELP.match(piece):
                continue
            level = _level(call.macro, line) if call.macro == "printf" else whole
            found[(level, line)] = None
    return [(level, template, {}) for level, template in found]


def rdma_core_tags(git_dir: Path, first: int = 17) -> list[tuple[str, str]]:
    """(tag, version) of the first and the last stable tag of each rdma-core release from
    v`first` on (`v17`, `v17.11`, ..., `v64.0`): each release's stable branch only
    backports fixes, so its ends bound what it prints."""
    tags = []
    for tag in _git(git_dir, "tag").split():
        m = re.fullmatch(r"v(\d+)(?:\.\d+)?", tag)
        if m and int(m.group(1)) >= first:
            tags.append((tag, tag[1:]))
    return first_and_last(tags, 1)


def perftest_version(tag: str) -> str | None:
    """`v4.4-0.37` -> `4.4.0.37`, `25.10.0-0.128` -> `25.10.0.0.128`, `perftest-26.01.5` ->
    `26.01.5` (a catalogue version range is `first-last`, so no `-` inside one)."""
    m = re.fullmatch(r"(?:[vV]|perftest-)?(\d+\.\d+(?:\.\d+)?)(?:-(\d+\.\d+))?(?:-beta)?", tag)
    if not m or tag.endswith("-beta"):
        return None
    return m.group(1) + (f".{m.group(2)}" if m.group(2) else "")


def perftest_tags(git_dir: Path) -> list[tuple[str, str]]:
    """(tag, version) of every perftest release tag (4.1 to 26.x; betas left out)."""
    best: dict[str, str] = {}
    for tag in _git(git_dir, "tag").split():
        version = perftest_version(tag)
        if version:
            best[version] = tag
    return sorted(((t, v) for v, t in best.items()), key=lambda tv: version_key(tv[1]))


def scan_rdma_core(git_dir: Path) -> tuple[str, list[Seen]]:
    """rdma-core's verbs, RDMA CM, mlx5 and diagnostics messages, v17 to the newest."""

    def keep(path: str) -> bool:
        return path.endswith(SUFFIXES) and "/tests/" not in path and "/man/" not in path

    return _scan(git_dir, rdma_core_tags(git_dir), keep, RDMA_PATHS)


def scan_perftest(git_dir: Path) -> tuple[str, list[Seen]]:
    """perftest's src/ at every release tag."""
    return _scan(git_dir, perftest_tags(git_dir), lambda p: p.endswith(SUFFIXES), ("src",))


def _scan(
    git_dir: Path,
    tags: list[tuple[str, str]],
    keep: Callable[[str], bool],
    paths: tuple[str, ...],
) -> tuple[str, list[Seen]]:
    """Every message of the kept files at each tag, each (path, blob) read once: the
    path matters, as it says which prefix `PFX` is."""
    if not tags:
        raise ValueError(f"{git_dir}: no release tags")
    reader = BlobReader(git_dir)
    merger = Merger()
    done: dict[Hashable, list[Found]] = {}
    for tag, version in tags:
        files = files_at(git_dir, tag, keep, paths)
        add_files(merger, reader, files, version, file_messages, done, lambda p, sha: (p, sha))
    reader.close()
    return span(tags[0][1], tags[-1][1]), merger.entries()
