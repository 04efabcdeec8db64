"""`--rules DIR` works before and after the command, and holds for one call only."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kb.cli.main import main

TESTS = Path(__file__).resolve().parents[1]
RULES = TESTS / "diagnosis" / "rules"
LOG = TESTS.parent / "corpora" / "dev" / "h200-nccl-socket-ifname-missing.log"


def _first_title(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 1
    return str(json.loads(capsys.readouterr().out)["causes"][0]["title"])


@pytest.mark.slow
def test_rules_before_or_after_the_command_are_the_same_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = _first_title(capsys, "--rules", str(RULES), "diagnose", "--json", str(LOG))
    after = _first_title(capsys, "diagnose", "--json", "--rules", str(RULES), str(LOG))
    shipped = _first_title(capsys, "diagnose", "--json", str(LOG))
    assert before == after != shipped


def test_rules_hold_for_one_call_only(capsys: pytest.CaptureFixture[str]) -> None:
    had = os.environ.get("DLPERF_HELP_RULES")
    _first_title(capsys, "diagnose", "--json", "--rules", str(RULES), str(LOG))
    assert os.environ.get("DLPERF_HELP_RULES") == had
