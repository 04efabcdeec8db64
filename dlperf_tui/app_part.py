"""The base of the app's parts (`held_keys`, `scanning`, `copy_export`): to the type
checker, the app with the state its parts share; at run time, nothing.

Why: each part's methods join `DlperfHelpApp` as a mixin, checked against the app's
attributes, without a second `App` class in the app's bases (Textual reads CSS, bindings
and type names along the bases, so the app's screens look as they did).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual import events
    from textual.app import App

    from dlperf_tui.screens.dialogs import BusyScreen
    from kb.rules.knowledge import KnowledgeBase
    from kb.walk.session import Session

    class AppPart(App[int]):
        """What `DlperfHelpApp.__init__` sets, as its parts read it."""

        export_dir: Path | None
        kb: KnowledgeBase | None
        session: Session | None
        exported: Path | None
        _busy: BusyScreen | None
        _pending: tuple[str | None, Path | None] | None
        _held: list[events.Key | events.Paste]
        _cancel_scan: threading.Event

else:
    AppPart = object
