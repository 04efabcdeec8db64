"""A plain `diagnose` command line is read without argparse (`kb.cli.quickargs`, issue 13),
and read exactly as argparse reads it: the same attributes for every command line it
takes, and every other one (help, abbreviations, errors) left to the real parser."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.cli import quickargs
from kb.cli.main import build_parser, main
from kb.cli.quickargs import quick_args
from kb.diagnosis import compiled

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "corpora/dev-h200/h200-libcudart-10.1-missing.log"
RULES = REPO / "tests/diagnosis/rules"  # the fixture rules: a cache of their own is quick
CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"

TOKENS = [
    "diagnose", "--json", "--explain", "--no-mask", "--no-hyperscan", "--top", "--top=2",
    "--top=0", "--top=x", "3", "0", "-1", "+3", "--engine", "--engine=reference",
    "--engine=slow", "fast", "reference", "--rules", "--rules=R", "--rules=", "R", "a.log",
    "b.log", "-", "--", "-h", "--help", "--js", "--version", "--json=1", "-x", "walk",
]  # fmt: skip


def _argparse(argv: list[str]) -> dict[str, Any] | None:
    """What the whole parser makes of `argv` (None when it stops: an error, help)."""
    sink = io.StringIO()
    try:
        with contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            ns = build_parser().parse_args(argv)
    except SystemExit:
        return None
    got = vars(ns)
    got.pop("_module", None)
    return got


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(TOKENS), max_size=3),
    st.lists(st.sampled_from(TOKENS), max_size=6),
)
def test_what_it_reads_argparse_reads_alike(before: list[str], after: list[str]) -> None:
    argv = [*before, "diagnose", *after]
    quick = quick_args(argv)
    if quick is not None:
        assert quick == _argparse(argv), argv


@pytest.mark.parametrize(
    "argv",
    [
        ["diagnose", "a.log"],
        ["diagnose", "--json", "a.log", "b.log"],
        ["diagnose", "a.log", "b.log", "--json", "--top", "3"],
        ["--rules", "R", "diagnose", "--top=2", "--explain", "-"],
        ["--rules=R", "diagnose", "--rules", "S", "--no-mask", "x"],
        ["diagnose", "--engine", "reference", "--no-hyperscan", "x"],
        ["diagnose"],
    ],
)
def test_the_plain_command_lines_are_read_here(argv: list[str]) -> None:
    quick = quick_args(argv)
    assert quick is not None and quick == _argparse(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["diagnose", "--help"],
        ["diagnose", "--js", "a.log"],  # an abbreviation argparse accepts
        ["diagnose", "a.log", "--json", "b.log"],  # logs in two runs: argparse refuses
        ["diagnose", "--top", "0", "a.log"],
        ["diagnose", "--top", "-1", "a.log"],
        ["diagnose", "--engine", "slow", "a.log"],
        ["diagnose", "--", "-a.log"],
        ["diagnose", "-1"],  # a log named like a number: argparse's own reading
        ["--version"],
        ["walk"],
        ["--rules", "diagnose"],
        [],
    ],
)
def test_anything_else_goes_to_argparse(argv: list[str]) -> None:
    assert quick_args(argv) is None


def _diagnose_parser() -> argparse.ArgumentParser:
    parser = build_parser("diagnose")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["diagnose"]


def test_the_tables_are_the_parsers_options() -> None:
    """An option added to `diagnose` (or changed) must be added here too, or a command
    line using it would be refused here and read by argparse: never misread."""
    flags, valued = {}, {}
    for action in _diagnose_parser()._actions:
        if not action.option_strings or action.dest == "help":
            continue
        (name,) = (o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._StoreTrueAction):
            flags[name] = action.dest
        else:
            valued[name] = action.dest
            if action.choices:
                assert tuple(action.choices) == quickargs.ENGINES
    assert flags == quickargs.FLAGS
    assert valued == quickargs.VALUED
    defaults = {
        a.dest: a.default
        for a in _diagnose_parser()._actions
        if a.option_strings and a.dest not in ("help", "rules")
    }
    assert defaults == quickargs.DEFAULTS


def test_a_plain_diagnose_answers_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    """The quick reading runs the same command: its JSON is the whole parser's."""
    assert main(["diagnose", "--json", str(LOG)]) == 1
    quick = json.loads(capsys.readouterr().out)
    assert quick["causes"][0]["id"] == "cuda-lib-missing"
    # `--json=` is no plain spelling of an option: the whole parser reads it (an error)
    assert main(["diagnose", "--json=1", str(LOG)]) == 2
    assert "ignored explicit argument" in capsys.readouterr().err


@pytest.mark.slow
def test_a_plain_diagnose_imports_neither_argparse_nor_pathlib(tmp_path: Path) -> None:
    """Neither is needed to read a plain command line and the cached rules: together they
    (and gettext, locale, urllib.parse, ipaddress behind them) were a tenth of the run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    (tmp_path / "no-catalogue").mkdir()
    env["DLPERF_HELP_CATALOGUE"] = str(tmp_path / "no-catalogue")
    root = tmp_path / "rules"
    shutil.copytree(RULES, root)
    log = tmp_path / "paste.log"
    log.write_text(CUDA_LINE + "\n")
    probe = (
        "import contextlib, io, sys\n"
        "from dlperf_tui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['--rules', sys.argv[1], 'diagnose', '--json', sys.argv[2]])\n"
        "print(code, sorted(m for m in ('argparse', 'pathlib', 'importlib', 'zlib')"
        " if m in sys.modules))\n"
    )

    def run() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", probe, str(root), str(log)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            cwd=REPO,
        )
        return done.stdout.split(maxsplit=1)

    assert run()[0] == "1"  # compiles and caches the rules (and needs pathlib for it)
    # their key is recorded for their files' stat once these are 2 s old: then no run
    # hashes them again (`kb.diagnosis.compiled._fingerprint`)
    time.sleep(max(0.0, compiled.RACY_NS / 1e9 - (time.time() - root.stat().st_ctime)) + 0.2)
    run()
    assert run() == ["1", "[]\n"]
