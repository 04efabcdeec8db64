"""The linter catches each deliberately broken rule file with a file:line message.

Each folder under broken/ is overlaid on the valid base_rules/ and must produce the
issues listed in its expect.txt (`check file line [position N]`), with exit status 1
and no traceback; an expect.txt whose first line is `warning` lists warnings (exit 0).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kb.cli.main import main

HERE = Path(__file__).parent
CASES = sorted(p.name for p in (HERE / "broken").iterdir() if p.is_dir())


def lint_json(rules: Path) -> tuple[int, list[dict[str, object]], str]:
    """`dlperf-help rules lint --json DIR`, in-process (the CLI's own entry point)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["rules", "lint", "--json", str(rules)])
    return code, json.loads(out.getvalue()), err.getvalue()


def overlay(case: str, tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(HERE / "base_rules", rules)
    for src in (HERE / "broken" / case).rglob("*"):
        if src.is_file() and src.name != "expect.txt":
            dest = rules / src.relative_to(HERE / "broken" / case)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    return rules


def test_there_are_at_least_fifteen_broken_fixtures() -> None:
    assert len(CASES) >= 15


def test_the_base_rules_are_clean() -> None:
    code, issues, _ = lint_json(HERE / "base_rules")
    assert code == 0, issues
    assert issues == []


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_lint_reports_the_broken_file_with_its_line(case: str, tmp_path: Path) -> None:
    rules = overlay(case, tmp_path)
    code, issues, stderr = lint_json(rules)
    lines = (HERE / "broken" / case / "expect.txt").read_text().splitlines()
    warning_only = lines[:1] == ["warning"]  # warnings are reported but do not fail lint
    assert code == (0 if warning_only else 1)
    assert "Traceback" not in stderr
    for expected in lines[1:] if warning_only else lines:
        check, file, line, *rest = expected.split()
        found = [
            i
            for i in issues
            if i["check"] == check and i["file"] == f"rules/{file}" and i["line"] == int(line)
        ]
        assert found, f"no {check} issue at rules/{file}:{line}; got {issues}"
        if rest[:1] == ["position"]:
            assert f"at position {rest[1]}" in str(found[0]["message"])


@pytest.mark.slow
def test_lint_text_output_is_file_line_message_without_traceback(tmp_path: Path) -> None:
    rules = overlay("unknown-field", tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "rules", "lint", str(rules)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("rules/demo/typo-field.yaml:2: unknown field 'titel'")
    assert "did you mean 'title'?" in first


@pytest.mark.slow
def test_lint_of_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "rules", "lint", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "no such rules directory" in proc.stderr


WEAK = """id: weak
title: Rests on generic words
description: x
symptoms: [job-hangs]
prior: 0.1
checks: [demo-list-interfaces]
signatures:
  - id: lonely-word
    matchers:
      - {type: substring, text: 'timeout'}
  - id: two-short-words-together
    condition: and
    matchers:
      - {type: substring, text: 'sshd'}
      - {type: substring, text: 'Address already in use'}
fixes: [demo-fix]
examples:
  match: ['sshd: Address already in use timeout']
"""


def test_one_generic_word_is_weak_alone_but_not_beside_a_specific_phrase(tmp_path: Path) -> None:
    rules = overlay("unknown-field", tmp_path)
    (rules / "demo" / "typo-field.yaml").unlink()
    (rules / "demo" / "weak.yaml").write_text(WEAK, encoding="utf-8")
    code, issues, _ = lint_json(rules)
    weak = [(i["check"], i["line"]) for i in issues if i["check"] == "weak-signature"]
    assert code == 0  # warnings do not fail lint
    assert weak == [("weak-signature", 10)]
