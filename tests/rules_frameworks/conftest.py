"""Shared helpers for the framework/CUDA/perf rule tests: the shipped rules, and a way to
run a rule's check command for real with fake GPU tools on PATH."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from kb import loader
from kb.checkeval import CheckOutcome, evaluate
from kb.knowledge import KnowledgeBase
from kb.paths import rules_dir
from kb.placeholders import fill_command
from kb.schema.models import Check

_HERE = Path(__file__).resolve()
# recorded outputs of a real 2xH200 host: the copy in the repository, else the shared one
FIXTURES = next(
    (
        d
        for d in (
            _HERE.parents[1] / "cluster" / "fixtures" / "h200-x2",
            _HERE.parents[2].parent / "shared" / "fixtures" / "h200-x2",
        )
        if (d / "ldconfig.txt").is_file()
    ),
    _HERE.parents[2].parent / "shared" / "fixtures" / "h200-x2",
)


@pytest.fixture(scope="session")
def rules() -> KnowledgeBase:
    """The shipped rules (loaded even if another area has lint errors right now)."""
    kb, _ = loader.load(rules_dir())
    return kb


def check_of(kb: KnowledgeBase, check_id: str) -> Check:
    return kb.checks[check_id][1]


def _recorded_output(name: str) -> str:
    lines = (FIXTURES / name).read_text().splitlines()
    return "\n".join(ln for ln in lines if not ln.startswith("$ ") and not ln.startswith("[exit "))


@pytest.fixture
def recorded() -> Callable[[str], str]:
    """A recorded command output of the 2xH200 host, without its `$ cmd` / `[exit N]` frame."""
    if not FIXTURES.is_dir():
        pytest.skip(f"recorded outputs not available at {FIXTURES}")
    return _recorded_output


RunCheck = Callable[..., CheckOutcome]


@pytest.fixture
def run_check(tmp_path: Path, rules: KnowledgeBase) -> RunCheck:
    """Run a check's command with /bin/sh (as the local runner does) and evaluate it.

    `tools` maps a program name to the text it prints; `env` adds variables.
    """

    def run(
        check_id: str,
        params: dict[str, str] | None = None,
        tools: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
    ) -> CheckOutcome:
        check = check_of(rules, check_id)
        fake_bin = tmp_path / "bin"
        fake_bin.mkdir(exist_ok=True)
        for name, text in (tools or {}).items():
            out = fake_bin / f"{name}.out"
            out.write_text(text)
            script = fake_bin / name
            script.write_text(f"#!/bin/sh\ncat '{out}'\n")
            script.chmod(script.stat().st_mode | stat.S_IEXEC)
        full_env = {"PATH": f"{fake_bin}:{os.environ['PATH']}", "HOME": str(tmp_path)}
        full_env.update(env or {})
        command = fill_command(check.run, params or {})
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            capture_output=True,
            text=True,
            env=full_env,
            timeout=60,
            cwd=tmp_path,
        )
        return evaluate(check, proc.stdout, proc.returncode, proc.stderr)

    return run
