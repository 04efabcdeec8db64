"""A missing module that is the job's own code: the checkout is not on the import path.

`No module named 'X'` alone says nothing of where X should come from: a package to
install, a framework module another release renamed, or the job's own repository.
The traceback says which: when X is a folder on the path of the job's own files (a
frame `File "deeplab2/model/deeplab_test.py"` above `No module named 'deeplab2'`, the
script started as `python official/vision/train.py`), X is that checkout, which Python
finds only from its root (PYTHONPATH or the working folder). A folder under
site-packages or dist-packages is an installed package instead (a missing submodule of
it is another release's layout), so it says nothing here.
"""

from __future__ import annotations

from kb.diagnosis.analyzers.base import Analyzer, Facts, Finding, Report, Tap
from kb.diagnosis.model import Evidence
from kb.util.lazyre import LazyPattern

_MISSING = r"No module named '?([A-Za-z_][\w.]*)"
_FRAME = r"File \"([^\"]+\.py)\", line \d+"
_SCRIPT = r"\bpython[\d.]*\s+(?:-[\w-]+\s+)*([\w./-]+\.py)\b"
_INSTALLED = frozenset({"site-packages", "dist-packages"})
TAPS_CAP = 400
_READ = {
    tap: LazyPattern(p)
    for tap, p in (("missing", _MISSING), ("frame", _FRAME), ("script", _SCRIPT))
}


class Imports(Analyzer):
    name = "imports"
    taps = (
        Tap("missing", _MISSING, cap=50),
        Tap("frame", _FRAME, cap=TAPS_CAP),
        Tap("script", _SCRIPT, cap=50),
    )

    def __init__(self) -> None:
        super().__init__()
        self.missing: list[tuple[str, Evidence]] = []  # (top-level module, its line)
        self.paths: dict[str, list[tuple[list[str], Evidence]]] = {}  # file -> own paths

    def feed(self, tap: str, line_no: int, text: str) -> None:
        rx = _READ.get(tap)
        m = rx.search(text) if rx is not None else None
        if m is None:
            return
        ev = self.evidence(line_no, text, m.start(1), m.end(1), tap)
        if tap == "missing":
            self.missing.append((m[1].split(".")[0], ev))
        else:
            folders = m[1].replace("\\", "/").split("/")[:-1]
            self.paths.setdefault(self.file, []).append((folders, ev))

    def finish(self, facts: Facts) -> Report:
        report = Report()
        for module, ev in self.missing:
            where = _own_folder(module, self.paths.get(ev.file, []))
            if where is None:
                continue
            report.findings.append(
                Finding(
                    "missing-module-is-own-checkout",
                    "missing-module-is-own-checkout",
                    0.85,
                    f"the missing module {module!r} is a folder of the job's own files: "
                    "its checkout is not on the import path",
                    [ev, where],
                    {"module": module},
                )
            )
            break  # one is enough: the others are the same checkout
        return report


def _own_folder(module: str, paths: list[tuple[list[str], Evidence]]) -> Evidence | None:
    """The line of a path of the job's own files with a folder named `module` (not one
    inside an installed package's tree)."""
    for folders, ev in paths:
        if module in folders and not _INSTALLED & set(folders[: folders.index(module)]):
            return ev
    return None
