"""Where the shipped rules and data live, for an installed wheel and for a source checkout."""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the kb package (this file is kb/util/paths.py)


def rules_dir() -> Path:
    """The rules directory: `$DLPERF_HELP_RULES`, the copy inside the wheel, or the checkout's."""
    env = os.environ.get("DLPERF_HELP_RULES")
    if env:
        return Path(env)
    shipped = _PKG / "_rules"
    if shipped.is_dir():
        return shipped
    return _PKG.parent / "rules"


def data_dir() -> Path:
    """Data files shipped inside the package (DLPerf's published results)."""
    return _PKG / "data"


def cache_dir() -> Path:
    """Per-user cache for the compiled form of the rules."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dlperf-help"


def catalogue_dir() -> Path:
    """The message catalogue: `$DLPERF_HELP_CATALOGUE`, the copy inside the wheel, or the
    checkout's `catalogue/`."""
    env = os.environ.get("DLPERF_HELP_CATALOGUE")
    if env:
        return Path(env)
    shipped = _PKG / "_catalogue"
    if shipped.is_dir():
        return shipped
    return _PKG.parent / "catalogue"
