"""One bad value in a rule gives one lint error (issue 14): a rule its schema refused is
not in the graph, and the references to it, its checks and its fixes are not reported
again as undefined or unused. A real dangling reference elsewhere is still reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kb.cli.main import main
from kb.util.paths import rules_dir


def _lint(capsys: pytest.CaptureFixture[str], root: Path) -> list[dict[str, object]]:
    assert main(["rules", "lint", "--json", str(root)]) == 1
    return list(json.loads(capsys.readouterr().out))


@pytest.fixture()
def rules(tmp_path: Path) -> Path:
    root = tmp_path / "rules"
    shutil.copytree(rules_dir(), root)
    return root


@pytest.mark.slow
def test_one_bad_value_one_error(capsys: pytest.CaptureFixture[str], rules: Path) -> None:
    cause = rules / "cuda" / "cuda-lib-missing.yaml"
    text = cause.read_text(encoding="utf-8")
    assert "\nprior: 0.35\n" in text  # used by symptoms, fixes and answers elsewhere
    cause.write_text(text.replace("\nprior: 0.35\n", "\nprior: 7\n"), encoding="utf-8")
    [only] = _lint(capsys, rules)
    assert only["check"] == "schema" and str(only["file"]).endswith("cuda-lib-missing.yaml")
    assert "prior" in str(only["message"])


@pytest.mark.slow
def test_a_real_dangling_reference_is_still_reported(
    capsys: pytest.CaptureFixture[str], rules: Path
) -> None:
    bad = rules / "cuda" / "cuda-lib-missing.yaml"
    bad.write_text(bad.read_text(encoding="utf-8").replace("\nprior: 0.35\n", "\nprior: 7\n"))
    other = rules / "cuda" / "gpu-out-of-memory.yaml"
    text = other.read_text(encoding="utf-8")
    old = "\nfixes: [reduce-per-gpu-batch-size]\n"
    assert old in text
    other.write_text(text.replace(old, "\nfixes: [reduce-per-gpu-batch-size, no-such-fix-x]\n"))
    checks = sorted((str(i["check"]), str(i["message"])) for i in _lint(capsys, rules))
    assert [c for c, _ in checks] == ["schema", "unresolved-ref"]
    assert "'no-such-fix-x'" in checks[1][1]
