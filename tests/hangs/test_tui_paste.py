"""The assistant's paste goes through the same engine: a pasted `ncclras` report names
the stuck rank and its host on the diagnosis screen (Textual's Pilot, shipped rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.authoring.checked import load_kb
from tests.tui.driving import paste, shows, until_screen

ROOT = Path(__file__).resolve().parents[2]
RAS = ROOT / "corpora" / "hangs" / "nccl-sleep" / "ras.txt"


@pytest.fixture(scope="module")
def shipped_kb(private_cache: Path):  # type: ignore[no-untyped-def]
    return load_kb(ROOT / "rules")


@pytest.mark.slow
async def test_a_pasted_ras_report_shows_the_stuck_rank(shipped_kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from dlperf_tui.app import DlperfHelpApp

    app = DlperfHelpApp(rules=ROOT / "rules", export_dir=tmp_path, kb=shipped_kb)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_screen(pilot, "StartScreen")
        await paste(pilot, app.screen.query_one("#log"), RAS.read_text())
        await until_screen(pilot, "DiagnosisScreen", timeout=300)  # compiles the rules first
        await shows(
            pilot,
            "A collective timed",
            "rank 2 (process 464 on host 127.0.0.1, GPU",
            "launched = 4, others_launched = 5",
            "rank = 2, rank_host",  # the rank and its host, as values of the cause
            "pid = 464",  # the value its stack-dump check is filled with
            timeout=30,
        )
