"""C/C++ libraries with printf-style logging macros, at every release tag: NCCL (and RCCL,
its HIP port): every `WARN(fmt, ...)` and `INFO(flags, fmt, ...)` of src/; the OpenSSH
client: `fatal`/`error`/`logit`/`verbose` (and their `_f`/`_fr` forms) of the client's
files; the OpenSSH server (sshd): the same and their `_r`, `do_log2*` and disconnect forms
of the daemon's, its configuration's and its authentication's files."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from cprintf import Call, _skip_arg, calls
from merge import Found, Seen, scan_releases, scan_revisions, span

SUFFIXES = (".cc", ".cu", ".h", ".c", ".cpp", ".hpp", ".cuh")
NCCL_MACROS = {"WARN": 0, "INFO": 1}
NCCL_LEVELS = {"WARN": "warn", "INFO": "info"}
SSH_MACROS = {
    "fatal": 0, "error": 0, "logit": 0, "verbose": 0, "sshfatal": 0,
    "fatal_f": 0, "error_f": 0, "logit_f": 0, "verbose_f": 0,
    "fatal_fr": 1, "error_fr": 1, "logit_fr": 1, "verbose_fr": 1,
    "logdie": 0, "logdie_f": 0, "logdie_fr": 1,
}  # fmt: skip
SSH_LEVELS = {m: {"fatal": "fatal", "sshfatal": "fatal", "logdie": "fatal", "error": "error"}.get(
    m.split("_")[0], "info") for m in SSH_MACROS}  # fmt: skip
SSH_CLIENT_FILES = (
    "ssh.c", "sshconnect.c", "sshconnect2.c", "readconf.c", "clientloop.c", "kex.c",
    "packet.c", "authfile.c", "hostfile.c", "mux.c", "channels.c", "dispatch.c", "ssherr.c",
)  # fmt: skip


def scan_c(
    git_dir: Path,
    tag_pattern: str,
    minimum: str,
    paths: tuple[str, ...],
    keep: Callable[[str], bool],
    macros: Mapping[str, int],
    levels: Mapping[str, str],
) -> tuple[str, list[Seen]]:
    """Every macro call's format at every release tag, merged across releases."""

    def read(text: str) -> list[Found]:
        found = dict.fromkeys((levels[c.macro], c.template) for c in calls(text, macros))
        return [(level, template, {}) for level, template in found]

    return scan_releases(git_dir, tag_pattern, minimum, keep, read, paths)


def scan(
    git_dir: Path, tag_pattern: str = r"v(\d+\.\d+\.\d+)-\d+", minimum: str = "2.4.8"
) -> tuple[str, list[Seen]]:
    """NCCL's (or RCCL's) src/ at every release."""
    return scan_c(
        git_dir, tag_pattern, minimum, ("src",), lambda p: p.endswith(SUFFIXES),
        NCCL_MACROS, NCCL_LEVELS,
    )  # fmt: skip


def scan_openssh(git_dir: Path) -> tuple[str, list[Seen]]:
    """The OpenSSH client's messages, from 7.2p1 (Ubuntu 16.04's) on."""
    files = set(SSH_CLIENT_FILES)
    versions, seen = scan_c(
        git_dir, r"V_(\d+_\d+_P\d+)", "7_2_P1", (), lambda p: p in files,
        SSH_MACROS, SSH_LEVELS,
    )  # fmt: skip
    return _ssh_versions(versions, seen)


# sshd's own files: the daemon (split into sshd-session.c in 9.8 and sshd-auth.c in 10.0),
# its configuration, and the authentication of a login (auth2-*.c: one file a method)
SSHD_FILES = re.compile(r"(sshd|sshd-session|sshd-auth|servconf|auth|auth-rhosts|auth2(-\w+)?)\.c")
SSHD_MACROS = {
    **SSH_MACROS,
    "error_r": 1, "fatal_r": 1, "logit_r": 1, "verbose_r": 1, "logdie_r": 1,
    "do_log2": 1, "do_log2_f": 1, "do_log2_r": 2, "do_log2_fr": 2,
    # the reason sshd ends a connection with, which the client prints as "Received
    # disconnect from ...: <reason>"
    "packet_disconnect": 0, "ssh_packet_disconnect": 1,
}  # fmt: skip
SSHD_LEVELS = {
    **{m: SSH_LEVELS.get(m, SSH_LEVELS.get(m.removesuffix("_r"), "info")) for m in SSHD_MACROS},
    "packet_disconnect": "error", "ssh_packet_disconnect": "error",
}  # fmt: skip
_SYSLOG = {"FATAL": "fatal", "ERROR": "error"}  # any other SYSLOG_LEVEL_* describes
_EXITS = re.compile(r"\s*;\s*(?:cleanup_)?exit\s*\(\s*(?!0\s*\))")


def scan_openssh_server(git_dir: Path) -> tuple[str, list[Seen]]:
    """The OpenSSH server's (sshd's) messages over the client's releases: what the daemon
    prints when it cannot start (host keys, bind, privilege separation, sshd_config) and
    when it refuses a login."""
    versions, seen = scan_releases(
        git_dir, r"V_(\d+_\d+_P\d+)", "7_2_P1", lambda p: bool(SSHD_FILES.fullmatch(p)),
        _read_sshd,
    )  # fmt: skip
    return _ssh_versions(versions, seen)


def _read_sshd(text: str) -> list[Found]:
    found = dict.fromkeys((_sshd_level(text, c), c.template) for c in calls(text, SSHD_MACROS))
    return [(level, template, {}) for level, template in found]


def _sshd_level(text: str, call: Call) -> str:
    """A call's level: its macro's; `do_log2*`'s is the most severe `SYSLOG_LEVEL_*` its
    level argument names or the file assigns to that variable (the host key messages'
    `ll` is ERROR for a key sshd_config names); any message followed at once by a
    non-zero `exit()` ends the daemon (`sshd: no hostkeys available -- exiting.` is a
    `logit`), so it is fatal."""
    start = _call_start(text, call)
    end = _call_end(text, start)
    if _EXITS.match(text, end):
        return "fatal"
    if not call.macro.startswith("do_log2"):
        return SSHD_LEVELS[call.macro]
    i = text.index("(", start) + 1
    if call.macro.endswith("r"):
        i = _skip_arg(text, i) + 1
    arg = text[i : _skip_arg(text, i)].strip()
    if re.fullmatch(r"\w+", arg):  # a variable: what the file assigns to it
        arg = " ".join(re.findall(rf"\b{arg}\s*=(?!=)([^;]*);", text))
    levels = {_SYSLOG.get(n, "info") for n in re.findall(r"SYSLOG_LEVEL_(\w+)", arg)}
    return next((lv for lv in ("fatal", "error") if lv in levels), "info")


def _call_start(text: str, call: Call) -> int:
    """Where the call opens: its macro's name on the line `calls` gives."""
    line_start = 0
    for _ in range(call.line - 1):
        line_start = text.index("\n", line_start) + 1
    m = re.compile(rf"(?<![\w.>]){call.macro}\s*\(").search(text, line_start)
    assert m is not None  # `calls` found it there
    return m.start()


def _call_end(text: str, start: int) -> int:
    """Just past the `)` that closes the call opening at `start`."""
    i = text.index("(", start) + 1
    while i < len(text) and text[i] != ")":
        i = _skip_arg(text, i)
        if i < len(text) and text[i] == ",":
            i += 1
    return i + 1


def _ssh_versions(versions: str, seen: list[Seen]) -> tuple[str, list[Seen]]:
    """Tags' versions as OpenSSH writes them."""
    for s in seen:
        s.first, s.last = _ssh_version(s.first), _ssh_version(s.last)
    first, _, last = versions.partition("-")
    return span(_ssh_version(first), _ssh_version(last or first)), seen


def _ssh_version(tag_version: str) -> str:
    """`7_2_P1` -> `7.2p1`."""
    major, minor, patch = tag_version.split("_")
    return f"{major}.{minor}{patch.lower()}"


GLIBC_MACROS = {
    "N_": 0, "_dl_fatal_printf": 0, "_dl_error_printf": 0, "_dl_exception_create_format": 2,
}  # fmt: skip
GLIBC_LEVELS = {
    "N_": "error", "_dl_fatal_printf": "fatal", "_dl_error_printf": "error",
    "_dl_exception_create_format": "error",
}  # fmt: skip


def scan_glibc(git_dir: Path) -> tuple[str, list[Seen]]:
    """The dynamic loader's messages (elf/dl-*.c, elf/rtld.c: its `N_("...")` error
    texts and `_dl_fatal_printf` formats), from glibc 2.17 (CentOS 7's) on."""

    def keep(p: str) -> bool:
        name = p.rsplit("/", 1)[-1]
        return (
            p.startswith("elf/")
            and p.count("/") == 1
            and (name.startswith("dl-") or name == "rtld.c")
            and name.endswith(".c")
        )

    return scan_c(git_dir, r"glibc-(\d+\.\d+)", "2.17", ("elf",), keep, GLIBC_MACROS, GLIBC_LEVELS)


UCX_MACROS = {"ucs_error": 0, "ucs_warn": 0, "ucs_fatal": 0, "ucs_diag": 0}
UCX_LEVELS = {"ucs_error": "error", "ucs_warn": "warn", "ucs_fatal": "fatal", "ucs_diag": "info"}


def scan_ucx(git_dir: Path) -> tuple[str, list[Seen]]:
    """UCX's `ucs_error`/`ucs_warn`/`ucs_fatal`/`ucs_diag` of src/, from 1.8.0 on."""
    return scan_c(
        git_dir, r"v(\d+\.\d+\.\d+)", "1.8.0", ("src",), lambda p: p.endswith(SUFFIXES),
        UCX_MACROS, UCX_LEVELS,
    )  # fmt: skip


GLOO_MACROS = {
    "GLOO_ERROR_MSG": 0, "GLOO_THROW_IO_EXCEPTION": 0,
    "GLOO_THROW_INVALID_OPERATION_EXCEPTION": 0, "GLOO_ERROR": 0, "GLOO_WARN": 0,
    "GLOO_INFO": 0, "GLOO_ENFORCE": 1, "GLOO_ENFORCE_EQ": 2, "GLOO_ENFORCE_NE": 2,
    "GLOO_ENFORCE_LE": 2, "GLOO_ENFORCE_LT": 2, "GLOO_ENFORCE_GE": 2, "GLOO_ENFORCE_GT": 2,
}  # fmt: skip


def scan_gloo(git_dir: Path) -> tuple[str, list[Seen]]:
    """Gloo (PyTorch's CPU collectives and rendezvous transport): its concatenating
    error and log macros in gloo/, at the last commit of each year from 2018 (it has no
    releases)."""
    from cprintf import concat_calls
    from gitsrc import yearly_snapshots

    levels = {m: "warn" if m == "GLOO_WARN" else "info" if m == "GLOO_INFO" else "error"
              for m in GLOO_MACROS}  # fmt: skip

    def keep(path: str) -> bool:
        return path.endswith(SUFFIXES) and not ("/test" in path or "/benchmark" in path)

    def read(text: str) -> list[Found]:
        found = dict.fromkeys(
            (levels[c.macro], c.template) for c in concat_calls(text, GLOO_MACROS)
        )
        return [(level, template, {}) for level, template in found]

    return scan_revisions(git_dir, yearly_snapshots(git_dir, 2018), keep, read, ("gloo",))
