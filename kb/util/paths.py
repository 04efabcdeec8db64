"""Where the shipped rules and data live, for an installed wheel and for a source checkout.

Each place is also given as a plain string (`rules_folder`, `catalogue_folder`,
`cache_file`): a warm `diagnose` reads its caches without importing pathlib (with
urllib.parse, ipaddress and fnmatch behind it: a twentieth of a small log's run).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# the kb package (this file is kb/util/paths.py), as `Path(__file__).resolve()` finds it
_PKG = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def rules_folder() -> str:
    """The rules directory: `$DLPERF_HELP_RULES`, the copy inside the wheel, or the checkout's."""
    env = os.environ.get("DLPERF_HELP_RULES")
    if env:
        return env
    shipped = os.path.join(_PKG, "_rules")
    if os.path.isdir(shipped):
        return shipped
    return os.path.join(os.path.dirname(_PKG), "rules")


def rules_dir() -> Path:
    """`rules_folder()` as a `Path`."""
    from pathlib import Path

    return Path(rules_folder())


def data_dir() -> Path:
    """Data files shipped inside the package (DLPerf's published results)."""
    from pathlib import Path

    return Path(_PKG) / "data"


def cache_folder() -> str:
    """Per-user cache for the compiled form of the rules: `$XDG_CACHE_HOME/dlperf-help`,
    else `~/.cache/dlperf-help`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dlperf-help")


def cache_dir() -> Path:
    """`cache_folder()` as a `Path`."""
    from pathlib import Path

    return Path(cache_folder())


def cache_file(name: str) -> str:
    """The cache file called `name` (`cache_dir() / name`, as a string)."""
    return os.path.join(cache_folder(), name)


def catalogue_folder() -> str:
    """The message catalogue: `$DLPERF_HELP_CATALOGUE`, the copy inside the wheel, or the
    checkout's `catalogue/`."""
    env = os.environ.get("DLPERF_HELP_CATALOGUE")
    if env:
        return env
    shipped = os.path.join(_PKG, "_catalogue")
    if os.path.isdir(shipped):
        return shipped
    return os.path.join(os.path.dirname(_PKG), "catalogue")


def catalogue_dir() -> Path:
    """`catalogue_folder()` as a `Path`."""
    from pathlib import Path

    return Path(catalogue_folder())
