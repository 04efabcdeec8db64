"""Shared helpers for the check tests: the shipped rules, and a way to
run a rule's check command for real with fake GPU tools on PATH."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kb.checks.evaluate import CheckOutcome, evaluate
from kb.rules import loader
from kb.rules.knowledge import KnowledgeBase
from kb.rules.placeholders import fill_command
from kb.rules.schema.models import Check
from kb.util.paths import rules_dir

_HERE = Path(__file__).resolve()
# recorded outputs of a real 2xH200 host (tests/shared: a copy of the project's shared ones)
FIXTURES = _HERE.parents[1] / "shared" / "fixtures" / "h200-x2"


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
    return _recorded_output


RunCheck = Callable[..., CheckOutcome]


Tool = str | tuple[str, int]


def _fake_tools(fake_bin: Path, tools: dict[str, Tool]) -> None:
    """Scripts that print the given text (and exit with the given status) for any arguments."""
    cat = shutil.which("cat") or "/bin/cat"
    for name, spec in tools.items():
        text, status = spec if isinstance(spec, tuple) else (spec, 0)
        out = fake_bin / f"{name}.out"
        out.write_text(text)
        script = fake_bin / name
        script.write_text(f"#!/bin/sh\n{cat} '{out}'\nexit {status}\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)


def _linked_programs(fake_bin: Path, programs: list[str]) -> None:
    """Links to the real programs named, so that PATH holds them and nothing else."""
    for name in programs:
        real = sys.executable if name == "python3" else shutil.which(name)
        if real is None:
            pytest.skip(f"{name} is not installed here")
        link = fake_bin / name
        if not link.exists():
            link.symlink_to(real)


@pytest.fixture
def run_check(tmp_path: Path, rules: KnowledgeBase) -> RunCheck:
    """Run a check's command with /bin/sh (as the local runner does) and evaluate it.

    `tools` maps a program name to the text it prints (or to `(text, exit status)`); `env`
    adds variables. With `only` (a list of real program names), PATH holds the fake tools
    and those programs only, so a program left out is missing as on a bare node.
    """

    def run(
        check_id: str,
        params: dict[str, str] | None = None,
        tools: dict[str, Tool] | None = None,
        env: dict[str, str] | None = None,
        only: list[str] | None = None,
    ) -> CheckOutcome:
        check = check_of(rules, check_id)
        fake_bin = tmp_path / "bin"
        fake_bin.mkdir(exist_ok=True)
        _fake_tools(fake_bin, tools or {})
        path = f"{fake_bin}:{os.environ['PATH']}"
        if only is not None:
            _linked_programs(fake_bin, only)
            path = str(fake_bin)
        full_env = {"PATH": path, "HOME": str(tmp_path)}
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
