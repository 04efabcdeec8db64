"""The cyclic garbage collector held off while the assistant starts, until its first frame.

Importing Textual and building the first screen makes some hundred thousand objects, all
of which live as long as the app; on the way the collector walks them again and again
(each older-generation collection visits every object made so far), a good part of the
time to the first frame. So `dlperf-help` pauses it before the imports and, once the
first frame is drawn, freezes what start-up made (`gc.freeze`: those objects are never
walked again; reference counting still frees them) and collects as usual from then on.
Only the command's own start pauses it: an app run in tests (`App.run_test`) never did,
and `resume` then does nothing.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop automatic collection until `resume` (when it is on)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what start-up made and collect as usual again, if `pause` stopped it."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
