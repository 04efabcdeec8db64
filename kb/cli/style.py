"""Whether the CLI colours its output, and how wide the terminal is.

Colour only on a terminal, never in a pipe or a file, and never when NO_COLOR is set
(https://no-color.org) or TERM is `dumb`; the width of the terminal, else 100 columns.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

DEFAULT_WIDTH = 100


def use_color(stream: Any) -> bool:
    """Colour for `stream`: a terminal, NO_COLOR unset or empty, TERM not dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def width() -> int:
    """Columns of the terminal (COLUMNS wins), at least 40."""
    return max(40, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
