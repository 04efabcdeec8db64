"""A pasted question that no line answers: the diagnosis screen says the causes come from
the description, on each cause and in its values line, at 80x24 (kb.diagnosis.described)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.authoring.checked import load_kb
from tests.tui.driving import paste, shows, until_screen

ROOT = Path(__file__).resolve().parents[2]
POST = ROOT / "corpora/batch-2026-11-30c/input-geti-5958-gpu-idle-data-time.log"


@pytest.mark.slow
async def test_a_pasted_description_is_answered_from_the_description(tmp_path: Path) -> None:
    from dlperf_tui.app import DlperfHelpApp

    rules = ROOT / "rules"
    app = DlperfHelpApp(rules=rules, export_dir=tmp_path, kb=load_kb(rules))
    async with app.run_test(size=(80, 24)) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), POST.read_text(encoding="utf-8"))
        await until_screen(pilot, "DiagnosisScreen", timeout=30)
        await shows(
            pilot,
            "No line names a cause; 1 fits the description",
            "Data loading cannot keep the GPUs busy",
            "(from the description)",
        )
        await shows(pilot, "no line names a cause; the text describes it: it shares")
