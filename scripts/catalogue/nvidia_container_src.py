"""GPUs in containers and the NVIDIA driver: what users paste when `docker run --gpus` or the
driver fails, read from four kinds of source laid out under one folder (`build.py
nvidia-container --src-dir DIR`):

    DIR/toolkit.git   bare mirror of NVIDIA/nvidia-container-toolkit: its Go runtime, hook,
                      CDI and lookup code at the first and last release of each minor
    DIR/kernel.git    bare mirror of NVIDIA/open-gpu-kernel-modules: the `NVRM:` errors and
                      warnings of nv.c, nv-pci.c and osapi.c (the API-mismatch message) at the
                      first and last release of each driver branch
    DIR/pynvml/       nvidia-ml-py sdists and wheels (`pip download --no-deps`): the
                      NVMLError string table of pynvml.py
    scripts/catalogue/snapshots/nvidia-container.yaml
                      messages transcribed from files read one by one (libnvidia-container's C
                      sources and moby's device-request error, one stored version each) and
                      the closed-source driver's strings where they are documented

Go: `fmt.Errorf`, `errors.New/Errorf/Wrap(f)` and logger calls (Error/Warning/Info and their
f/ln forms, `log.Panicln`); a format's Go verbs (%v %w %q %T) become %s, an argument that is
not a string literal becomes %s, `errors.Wrap(err, "msg")` is "msg: %s" as it prints."""

from __future__ import annotations

import itertools
import re
import tarfile
import zipfile
from collections.abc import Callable, Hashable
from pathlib import Path

import cprintf
import yaml
from gitsrc import BlobReader, files_at, release_tags, version_key
from merge import Found, Merger, Seen
from srckit import add_files, first_and_last, split_plus

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "nvidia-container.yaml"

# --------------------------------------------------------------------------------- Go

_GO_CALL = re.compile(
    r"(?<![\w.])(?P<recv>fmt|errors|(?:[A-Za-z_]\w*\.)*(?:log|logger|Logger|l|r|m|d))"
    r"\.(?P<fn>Errorf|New|Wrapf|Wrap|Error|Errorln|Warningf|Warning|Warnf|Warn|Warningln"
    r"|Infof|Info|Infoln|Fatalf|Fatal|Fatalln|Panicf|Panic|Panicln|Printf|Println)\("
)
_LEVEL = {"Err": "error", "New": "error", "Wra": "error", "Fat": "error", "Pan": "error"}
_GO_VERB = re.compile(r"%(?P<flags>[-+# 0]*)(?P<width>\d*)(?:\.\d+)?(?P<verb>[a-zA-Z%])")
_GO_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": ""}


def _level(fn: str) -> str:
    if fn.startswith("Warn"):
        return "warn"
    if fn.startswith(("Info", "Print")):
        return "info"
    return _LEVEL.get(fn[:3], "error")


def _args(text: str, i: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose `(` ends just before `i`, and its end."""
    args, depth, start = [], 0, i
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                args.append(text[start:i])
                return [a.strip() for a in args if a.strip()], i + 1
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:i])
            start = i + 1
        elif ch in "\"'":
            j = i + 1
            while j < len(text) and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j
        elif ch == "`":
            j = text.find("`", i + 1)
            i = len(text) if j < 0 else j
        i += 1
    return [], i


def _literal(part: str) -> str | None:
    """A Go string literal's text, or None when `part` is not one."""
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] == "`":
        return part[1:-1]
    if len(part) >= 2 and part[0] == part[-1] == '"':
        body, out, i = part[1:-1], [], 0
        while i < len(body):
            if body[i] == "\\" and i + 1 < len(body):
                out.append(_GO_ESC.get(body[i + 1], body[i + 1]))
                i += 2
            else:
                out.append(body[i])
                i += 1
        return "".join(out)
    return None


def _text(arg: str, escape: bool) -> tuple[str, bool]:
    """An argument as message text (literals joined, anything else a %s) and whether it
    held a literal; `escape` doubles a literal's `%` (a value, not a format)."""
    out, saw = [], False
    for part in split_plus(arg, raw="`"):
        lit = _literal(part)
        if lit is None:
            out.append("%s")
        else:
            saw = True
            out.append(lit.replace("%", "%%") if escape else lit)
    return "".join(out), saw


def _printf(fmt: str) -> str:
    def verb(m: re.Match[str]) -> str:
        v = m.group("verb")
        if v == "%":
            return "%%"
        if v in "dboxXcefgEGU":
            return f"%{m.group('width')}{'d' if v in 'bU' else v}"
        return "%s"

    return _GO_VERB.sub(verb, fmt)


def go_messages(text: str) -> list[tuple[str, str]]:
    """(level, template) of every message call in one Go file, in order, once each."""
    found: list[tuple[str, str]] = []
    for m in _GO_CALL.finditer(text):
        recv, fn = m.group("recv"), m.group("fn")
        if recv == "fmt" and fn != "Errorf":
            continue
        if recv == "errors" and fn not in ("New", "Errorf", "Wrap", "Wrapf"):
            continue
        if recv not in ("fmt", "errors") and fn in ("New", "Wrap", "Wrapf"):
            continue
        args, _ = _args(text, m.end())
        if not args:
            continue
        if fn in ("Wrap", "Wrapf"):
            if len(args) < 2:
                continue
            head, saw = _text(args[1], escape=fn == "Wrap")
            template = (_printf(head) if fn == "Wrapf" else head) + ": %s"
        elif fn.endswith("f"):
            head, saw = _text(args[0], escape=False)
            template = _printf(head)
        else:
            pieces = [_text(a, escape=True) for a in args]
            saw = any(s for _, s in pieces)
            template = pieces[0][0]
            for (_, lit_before), (text_i, lit) in itertools.pairwise(pieces):
                # Sprintln spaces every operand; Sprint only two that are not strings
                spaced = fn.endswith("ln") or not (lit_before or lit)
                template += (" " if spaced else "") + text_i
        if saw and template.replace("%s", "").strip(" :"):
            found.append((_level(fn), template.strip()))
    return list(dict.fromkeys(found))


_TOOLKIT = re.compile(
    r"^(?:nvidia-container-toolkit/|pkg/[^/]+\.go$|cmd/nvidia-container-toolkit/"
    r"|cmd/nvidia-container-runtime[^/]*/|cmd/nvidia-cdi-hook/|cmd/nvidia-ctk/hook/"
    r"|internal/(?:runtime|modifier|discover|oci|info|requirements|config/image|lookup"
    r"|ldcache|edits)/|pkg/nvcdi/)"
)


def toolkit_file(path: str) -> bool:
    """The hook, the runtime and what they call to edit the container (CDI, discovery,
    lookups, requirements); not the installers (`tools/`), the config writers or vendor."""
    if "/vendor/" in path or path.endswith("_test.go"):
        return False
    return path.endswith(".go") and bool(_TOOLKIT.match(path))


def first_last_per_minor(tags: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The first and last (tag, version) of each major.minor, oldest first."""
    return first_and_last(tags, 2)


def _scan_git(
    merger: Merger,
    git_dir: Path,
    revisions: list[tuple[str, str]],
    keep: Callable[[str], bool],
    read: Callable[[str], list[tuple[str, str]]],
) -> None:
    reader = BlobReader(git_dir)
    done: dict[Hashable, list[Found]] = {}

    def found(_path: str, text: str) -> list[Found]:
        return [(level, template, {}) for level, template in read(text)]

    try:
        for rev, version in revisions:
            add_files(merger, reader, files_at(git_dir, rev, keep), version, found, done)
    finally:
        reader.close()


# ------------------------------------------------------------------------- kernel module

KERNEL_FILES = (
    "kernel-open/nvidia/nv.c",
    "kernel-open/nvidia/nv-pci.c",
    "src/nvidia/arch/nvalloc/unix/src/osapi.c",
)
_NV_HEAD = re.compile(r"(?<![\w.>])(nv_printf|NV_DEV_PRINTF)\s*\(\s*(NV_DBG_\w+)")
_NV_LEVEL = {"NV_DBG_ERRORS": "error", "NV_DBG_WARNINGS": "warn"}


def kernel_messages(text: str) -> list[tuple[str, str]]:
    """The errors and warnings (`NV_DBG_ERRORS`/`NV_DBG_WARNINGS`) the module prints; the
    info and setup levels are off by default."""
    levels: dict[int, list[str]] = {}
    for m in _NV_HEAD.finditer(text):
        levels.setdefault(text.count("\n", 0, m.start()) + 1, []).append(m.group(2))
    found = []
    for call in cprintf.calls(text, {"nv_printf": 1, "NV_DEV_PRINTF": 2}):
        at = levels.get(call.line) or [""]
        level = _NV_LEVEL.get(at.pop(0) if len(at) > 1 else at[0])
        if level:
            found.append((level, call.template))
    return list(dict.fromkeys(found))


def driver_branches(git_dir: Path) -> list[tuple[str, str]]:
    """The first and last release of each driver branch (515, 520, ... )."""
    return first_and_last(release_tags(git_dir, r"(\d+\.\d+(?:\.\d+)?)"), 1)


# ------------------------------------------------------------------------------ pynvml

_TABLE = re.compile(r"_errcode_to_string\s*=\s*\{(.*?)\}", re.S)
_ENTRY = re.compile(r"NVML_ERROR_\w+\s*:\s*\"([^\"]+)\"")


def pynvml_messages(text: str) -> list[tuple[str, str]]:
    """The NVMLError strings: its table (what `str(NVMLError)` prints for a known code) and
    the fall-back for a code the library cannot name."""
    found = []
    table = _TABLE.search(text)
    if table:
        found = [("error", s) for s in _ENTRY.findall(table.group(1))]
    if "NVML Error with code %d" in text:
        found.append(("error", "NVML Error with code %d"))
    return list(dict.fromkeys(found))


def _pynvml_source(archive: Path) -> str:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            return z.read("pynvml.py").decode("utf-8", "replace")
    with tarfile.open(archive) as t:
        member = next(m for m in t.getmembers() if m.name.endswith("/pynvml.py"))
        data = t.extractfile(member)
        return data.read().decode("utf-8", "replace") if data else ""


def _pynvml_version(archive: Path) -> str:
    m = re.search(r"nvidia[-_]ml[-_]py-(\d+(?:\.\d+)+)", archive.name)
    if not m:
        raise ValueError(f"{archive}: not an nvidia-ml-py archive name")
    return m.group(1)


# ---------------------------------------------------------------------------- transcribed


def transcribed(path: Path = SNAPSHOT) -> list[Seen]:
    """The messages read file by file: each `{template, level, file, versions}`."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out = []
    for n, m in enumerate(data.get("messages") or [], 1):
        missing = [k for k in ("template", "level", "file", "versions") if not m.get(k)]
        if missing:
            raise ValueError(f"{path}: message {n} lacks {', '.join(missing)}")
        first, _, last = str(m["versions"]).partition("-")
        out.append(Seen(str(m["template"]), str(m["level"]), first, last or first, m["file"]))
    return out


def scan(src: Path) -> tuple[str, list[Seen]]:
    merger = Merger()
    toolkit = src / "toolkit.git"
    kernel = src / "kernel.git"
    wheels = src / "pynvml"
    for need in (toolkit, kernel, wheels):
        if not need.exists():
            raise ValueError(f"{need}: missing (see scripts/catalogue/nvidia_container_src.py)")
    tags = first_last_per_minor(release_tags(toolkit, r"v(\d+\.\d+\.\d+)", "1.0.0"))
    _scan_git(merger, toolkit, tags, toolkit_file, go_messages)
    _scan_git(merger, kernel, driver_branches(kernel), KERNEL_FILES.__contains__, kernel_messages)
    archives = sorted(
        (p for p in wheels.iterdir() if p.name.endswith((".whl", ".tar.gz"))),
        key=lambda p: version_key(_pynvml_version(p)),
    )
    for archive in archives:
        for level, template in pynvml_messages(_pynvml_source(archive)):
            merger.add(_pynvml_version(archive), level, template, "pynvml.py")
    seen = merger.entries() + transcribed()
    versions = f"{tags[0][1]}-{tags[-1][1]}"
    return versions, sorted(seen, key=lambda s: (s.file, s.level, s.template))
