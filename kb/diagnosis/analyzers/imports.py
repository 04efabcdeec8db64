"""A missing module that is the job's own code: the checkout is not on the import path.

`No module named 'X'` alone says nothing of where X should come from: a package to
install, a framework module another release renamed, or the job's own repository.
The traceback says which: when X is a folder on the path of the job's own files (a
frame `File "deeplab2/model/deeplab_test.py"` above `No module named 'deeplab2'`, the
script started as `python official/vision/train.py`), X is that checkout, which Python
finds only from its root (PYTHONPATH or the working folder). A folder under
site-packages or dist-packages is an installed package instead.

A script started by a relative path inside a folder (`python tools/train.py`, the raising
frame `File "tools/train.py"`) says the same of a top-level module it cannot import:
Python put `tools/`, not the repository's root, on the path.

The dotted name says more, by Python 3's own import rules: `No module named 'a.b'`
(quoted; Python 2's unquoted form names the whole path whatever part is missing) is
printed only once `a` was found and imported, so an `a` that is not the job's own
folder is an installed package whose release lacks `b` (another release's layout).
Likewise `cannot import name 'x'` right under a frame's `from a.b import x` (or with
`from 'a.b' (…/site-packages/…)` in the message itself): the installed module exists
and lacks the name. A bare top-level name (`from nets import x`) is left alone: a
checkout shadowed by an unrelated installed package prints the same.
"""

from __future__ import annotations

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

_MISSING = r"No module named ('?)([A-Za-z_][\w.]*)"
_FRAME = r"File \"([^\"]+\.py)\", line \d+"
_SCRIPT = r"\bpython[\d.]*\s+(?:-[\w-]+\s+)*([\w./-]+\.py)\b"
_CANNOT = r"cannot import name '?(\w+)'?(?: from '([\w.]+)'(?: \(([^)]*)\))?)?"
_FROM_LINE = r"^\s+from ([A-Za-z_][\w.]*) import "
_INSTALLED = frozenset({"site-packages", "dist-packages"})
TAPS_CAP = 400
_READ = {
    tap: LazyPattern(p)
    for tap, p in (
        ("missing", _MISSING),
        ("frame", _FRAME),
        ("script", _SCRIPT),
        ("cannot", _CANNOT),
        ("from", _FROM_LINE),
    )
}


class Imports(Analyzer):
    name = "imports"
    taps = (
        Tap("missing", _MISSING, cap=50),
        Tap("frame", _FRAME, cap=TAPS_CAP),
        Tap("script", _SCRIPT, cap=50),
        Tap("cannot", _CANNOT, cap=50),
        Tap("from", _FROM_LINE, cap=TAPS_CAP),
    )

    def __init__(self) -> None:
        super().__init__()
        self.missing: list[tuple[str, Evidence]] = []  # (module as named, its line)
        # (installed module, its line, how sure): a dotted missing module is Python's own
        # word; a name missing under a frame's `from a.b import` is the weaker reading
        self.lacking: list[tuple[str, Evidence, float]] = []
        self.last_from: tuple[int, str] | None = None  # (line, module) of `from a.b import`
        self.paths: dict[str, list[tuple[list[str], Evidence]]] = {}  # file -> own paths

    def feed(self, tap: str, line_no: int, text: str) -> None:
        rx = _READ.get(tap)
        m = rx.search(text) if rx is not None else None
        if m is None:
            return
        if tap == "from":
            self.last_from = (line_no, m[1])
            return
        group = 2 if tap == "missing" else 1
        ev = self.evidence(line_no, text, m.start(group), m.end(group), tap)
        if tap == "missing":
            # Python 2 names the whole dotted path whatever part is missing; Python 3
            # quotes what it could not find, so only a quoted `a.b` says `a` was found
            self.missing.append((m[2] if m[1] else m[2].split(".")[0], ev))
        elif tap == "cannot":
            module = _lacking_module(m[2], m[3], self.last_from, line_no)
            if module:
                self.lacking.append((module, ev, 0.7 if m[2] else 0.6))
        else:
            folders = m[1].replace("\\", "/").split("/")[:-1]
            self.paths.setdefault(self.file, []).append((folders, ev))

    def finish(self, facts: Facts) -> Report:
        report = Report()
        for name, ev in self.missing:
            module = name.split(".")[0]
            paths = self.paths.get(ev.file, [])
            where = _own_folder(module, paths)
            if where is None and "." in name:
                self.lacking.append((name.rsplit(".", 1)[0], ev, 0.7))  # `a` was found
                continue
            if where is not None:
                fid, weight = "missing-module-is-own-checkout", 0.85
                text = (
                    f"the missing module {module!r} is a folder of the job's own files: "
                    "its checkout is not on the import path"
                )
            elif (where := _script_in_a_subfolder(ev, paths)) is not None:
                fid, weight = "script-in-a-subfolder", 0.7
                text = (
                    f"{module!r} is imported by a script started from a folder of its "
                    "repository (`python tools/train.py`): Python puts that folder, not "
                    "the repository's root, on the import path"
                )
            else:
                continue
            report.findings.append(
                Finding(
                    "missing-module-is-own-checkout",
                    fid,
                    weight,
                    text,
                    [ev, where],
                    {"module": module},
                )
            )
            break  # one is enough: the others are the same checkout
        for module, ev, sure in self.lacking:
            if _own_folder(module.split(".")[0], self.paths.get(ev.file, [])) is not None:
                continue  # the job's own package: its checkout, not a release
            report.findings.append(
                Finding(
                    "installed-module-lacks-name",
                    "installed-module-lacks-name",
                    sure,
                    f"the installed module {module!r} was found but lacks what the code "
                    "imports from it: another release of it than the code was written for",
                    [ev],
                    {"module": module},
                )
            )
            break
        return report


def _lacking_module(
    named: str | None, path: str | None, last_from: tuple[int, str] | None, line_no: int
) -> str | None:
    """The installed module a `cannot import name` line says lacks the name: the one the
    message names when it is dotted or its file is under site-packages, else the dotted
    module of the `from a.b import` frame line just above (a bare top-level name proves
    nothing: a checkout shadowed by an unrelated installed package prints the same)."""
    if named:
        folders = set((path or "").replace("\\", "/").split("/"))
        return named if _INSTALLED & folders or "." in named else None
    if last_from is not None and 0 < line_no - last_from[0] <= 2 and "." in last_from[1]:
        return last_from[1]
    return None


SCRIPT_REACH = 8  # lines from the raising frame to the exception line


def _script_in_a_subfolder(
    missing: Evidence, paths: list[tuple[list[str], Evidence]]
) -> Evidence | None:
    """The frame that raised, when it is a script given by a relative path inside a folder
    (`File "tools/train.py"`, not an installed or absolute file): its repository's own
    packages are then importable only from the root, which Python did not put on the path."""
    frames = [
        (folders, ev)
        for folders, ev in paths
        if ev.signature.endswith("/frame") and 0 < missing.line - ev.line <= SCRIPT_REACH
    ]
    if not frames:
        return None
    folders, ev = max(frames, key=lambda f: f[1].line)
    relative = folders and folders[0] not in ("", "~") and not folders[0].endswith(":")
    if relative and not _INSTALLED & set(folders) and any(f not in (".", "..") for f in folders):
        return ev
    return None


def _own_folder(module: str, paths: list[tuple[list[str], Evidence]]) -> Evidence | None:
    """The line of a path of the job's own files with a folder named `module` (not one
    inside an installed package's tree)."""
    for folders, ev in paths:
        if module in folders and not _INSTALLED & set(folders[: folders.index(module)]):
            return ev
    return None
