"""Keys pressed before the knowledge base has loaded are acted on once it has.

Why: the first frame comes long before the rules (a second or more on a loaded
machine); a user who starts typing or presses a shortcut at once must not lose it.
The real loader runs, held back by a gate until the keys are in.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kb.authoring import checked
from tests.tui.common import RULES
from tests.tui.driving import until


@pytest.fixture
def gated_load(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """`load_kb` as the app calls it, waiting for the returned event first."""
    gate = threading.Event()
    real = checked.load_kb

    def load_after_gate(rules: Path | None = None) -> object:
        assert gate.wait(30), "the test never let the rules load"
        return real(rules)

    monkeypatch.setattr(checked, "load_kb", load_after_gate)
    return gate


@pytest.mark.slow
async def test_a_shortcut_pressed_before_the_rules_load_is_acted_on_after(
    gated_load: threading.Event, tmp_path: Path
) -> None:
    from dlperf_tui.app import DlperfHelpApp
    from dlperf_tui.screens.cluster import ClusterScreen
    from dlperf_tui.screens.start import LogArea

    app = DlperfHelpApp(rules=RULES, export_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("n", "c", "c", "l")  # typing in the log box needs no rules
        await pilot.press("ctrl+k")  # the cluster view needs them: held
        await pilot.pause(0.3)
        assert app.kb is None
        assert not isinstance(app.screen, ClusterScreen)
        assert app.screen.query_one(LogArea).text == "nccl"  # typed at once, not held
        gated_load.set()
        await until(pilot, lambda: isinstance(app.screen, ClusterScreen))
        assert app.kb is not None


@pytest.mark.slow
async def test_held_keys_keep_their_order_with_typing_after_them(
    gated_load: threading.Event, tmp_path: Path
) -> None:
    from dlperf_tui.app import DlperfHelpApp
    from dlperf_tui.screens.start import LogArea

    app = DlperfHelpApp(rules=RULES, export_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        area = app.screen.query_one(LogArea)
        await pilot.press("a")
        await pilot.press("f2", "f2")  # to the symptom tab and back: held
        await pilot.press("b")  # after held keys: held too, so it lands after them
        await pilot.pause(0.3)
        assert area.text == "a"
        gated_load.set()
        await until(pilot, lambda: area.text == "ab")
        assert app.screen.focused is area  # f2 twice: back in the box, where "b" went
