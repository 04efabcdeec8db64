"""Numeric conditions over extracted values (`where:` on a regex matcher).

The engine fires a matcher only on a match whose numbers satisfy its bounds, the compiled
form carries them, lint reports a bound on a group the regex lacks (and a bad operator or
operand) at its file and line, and the shipped perf rules judge numbers this way instead
of by regexes that spell numbers out digit by digit.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from kb.authoring.checked import load_kb
from kb.cli.main import main
from kb.diagnosis import compiled
from kb.diagnosis.engine import diagnose_text
from kb.diagnosis.matching import run_signatures, signature_spec
from kb.diagnosis.specs import MatcherSpec, SignatureSpec
from kb.rules.numeric import Bound, parse_operand
from kb.rules.schema.models import Signature

ROOT = Path(__file__).resolve().parents[2]
BASE_RULES = ROOT / "tests" / "core" / "base_rules"


def _sig(pattern: str, where: dict[str, dict[str, object]]) -> Signature:
    return Signature.model_validate(
        {"id": "s", "matchers": [{"type": "regex", "pattern": pattern, "where": where}]}
    )


STEP = r"step (?P<data>\d+(?:\.\d+)?)/(?P<batch>\d+(?:\.\d+)?)"


@pytest.mark.parametrize(
    ("line", "fires"),
    [
        ("step 0.6/1.0", True),
        ("step 0.5/1.0", True),  # ge: the bound itself holds
        ("step 0.49/1.0", False),
        ("step 30/40", True),
        ("step 0.0/0.3", False),
    ],
)
def test_a_bound_relative_to_another_group_is_judged_by_value(line: str, fires: bool) -> None:
    sig = _sig(STEP, {"data": {"ge": "0.5 * batch"}})
    assert bool(run_signatures([sig], [line])) is fires


def test_constant_bounds_all_hold_and_the_first_satisfying_match_is_the_evidence() -> None:
    sig = _sig(r"util (?P<gpu_util>\d+)%", {"gpu_util": {"lt": 30, "ge": 5}})
    assert not run_signatures([sig], ["util 30%"])
    assert not run_signatures([sig], ["util 4%"])
    [result] = run_signatures([sig], ["util 80% util 12% util 7%"])
    assert result.params == {"gpu_util": "12"}
    assert result.hits[0].start == len("util 80% ")


def test_a_value_that_is_missing_or_no_number_satisfies_no_bound() -> None:
    sig = _sig(r"cost (?P<a>[\d.]+)(?: of (?P<b>\d+))?", {"a": {"lt": "b"}})
    assert not run_signatures([sig], ["cost 3"])  # b did not take part
    assert not run_signatures([sig], ["cost 1.2.3 of 9"])  # a is no number
    assert run_signatures([sig], ["cost 1.5 of 9"])


def test_an_anchored_regex_keeps_its_bounds_on_a_prefixed_line() -> None:
    sig = _sig(r"^util (?P<u>\d+)%$", {"u": {"gt": 50}})
    assert run_signatures([sig], ["[rank3]: util 90%"])
    assert not run_signatures([sig], ["[rank3]: util 10%"])


@pytest.mark.parametrize(
    ("written", "parsed"),
    [
        (30, (30.0, None)),
        ("2.5", (2.5, None)),
        ("run_iters", (1.0, "run_iters")),
        ("0.5 * batch_time", (0.5, "batch_time")),
        (" 1e3*x ", (1000.0, "x")),
    ],
)
def test_bounds_are_numbers_groups_or_scaled_groups(
    written: float | str, parsed: tuple[float, str | None]
) -> None:
    assert parse_operand(written) == parsed


@pytest.mark.parametrize("written", ["half of batch", "batch * 0.5", "", True, float("nan")])
def test_anything_else_is_refused_with_a_reason(written: float | str) -> None:
    with pytest.raises(ValueError, match="bound"):
        parse_operand(written)


def test_the_compiled_form_carries_the_bounds() -> None:
    spec = signature_spec(_sig(STEP, {"data": {"ge": "0.5 * batch", "lt": 100}}))
    assert spec.matchers[0].where == (
        Bound("data", "lt", 100.0),
        Bound("data", "ge", 0.5, "batch"),
    )
    back = SignatureSpec.from_json(json.loads(json.dumps(spec.to_json())))
    assert back == spec
    assert hash(back.matchers[0]) == hash(spec.matchers[0])  # the scan plan caches by spec
    assert "where" not in MatcherSpec(type="regex", pattern="x").to_json()
    assert compiled.FORMAT == "dlperf-compiled-rules/9"


@pytest.mark.slow
def test_the_shipped_perf_rules_compare_numbers_not_digits() -> None:
    kb = load_kb(ROOT / "rules")
    judged = {
        ("input-pipeline-bottleneck", "data-time-dominates-step"),
        ("benchmark-misconfig", "warmup-longer-than-run"),
    }
    for cause_id, sig_id in judged:
        sig = next(s for s in kb.causes[cause_id].signatures if s.id == sig_id)
        for m in sig.matchers:
            assert m.type == "regex" and m.where, (cause_id, sig_id)
            assert len(m.pattern) < 300, (cause_id, sig_id)
    longest = max(
        len(m.pattern)
        for c in kb.causes.values()
        if kb.area_of(c.id) == "perf"
        for s in c.signatures
        for m in s.matchers
        if m.type == "regex"
    )
    assert longest < 300


# ---------------------------------------------------------------- lint


CAUSE = """id: demo-cause
title: A demonstration cause
description: Used by the linter tests as a valid starting point.
symptoms: [job-hangs]
prior: 0.2
signatures:
  - id: data-bound
    matchers:
      - type: regex
        pattern: 'reader_cost: (?P<data_time>[\\d.]+), batch_cost: (?P<batch_time>[\\d.]+)'
        where:
{where}
  - id: no-interface
    matchers:
      - type: substring
        text: 'Bootstrap : no socket interface found'
checks:
  - id: demo-list-interfaces
    title: List interfaces
    run: ip -o addr show
    read_only: true
    problem_if: {any_line_matches: 'veth'}
    means: a virtual interface exists
fixes: [demo-fix]
examples:
  match: ['reader_cost: 0.9, batch_cost: 1.0']
  no_match: ['reader_cost: 0.1, batch_cost: 1.0']
"""


def _rules(tmp_path: Path, cause: str) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(BASE_RULES, rules)
    (rules / "demo" / "demo-cause.yaml").write_text(cause, encoding="utf-8")
    return rules


def _lint(tmp_path: Path, where: str) -> tuple[int, list[dict[str, object]], str]:
    rules = _rules(tmp_path, CAUSE.replace("{where}", where))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["rules", "lint", "--json", str(rules)])
    return code, json.loads(out.getvalue()), err.getvalue()


def _errors(issues: list[dict[str, object]]) -> list[tuple[object, object, object]]:
    return [
        (i["check"], i["file"], i["line"])
        for i in issues
        if i["severity"] == "error" and str(i["file"]).endswith("demo-cause.yaml")
    ]


def test_a_valid_where_lints_clean_and_its_examples_pass(tmp_path: Path) -> None:
    code, issues, stderr = _lint(tmp_path, "          data_time: {ge: 0.5 * batch_time}")
    assert (code, _errors(issues), stderr) == (0, [], "")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["rules", "test", str(tmp_path / "rules")]) == 0


@pytest.mark.parametrize(
    ("where", "check", "line"),
    [
        ("          data_tme: {ge: 0.5 * batch_time}", "where-group", 12),
        ("          data_time: {ge: 0.5 * batch_tme}", "where-group", 12),
        ("          data_time: {gte: 0.5}", "unknown-field", 12),
        ("          data_time:\n            lt: half of batch_time", "schema", 13),
        ("          data_time: {}", "where-bound", 12),
    ],
)
def test_a_bad_where_is_an_error_at_its_line(
    tmp_path: Path, where: str, check: str, line: int
) -> None:
    code, issues, stderr = _lint(tmp_path, where)
    assert code == 1
    assert stderr == ""
    assert (check, "demo/demo-cause.yaml", line) in [
        (c, str(f).replace("\\", "/").split("rules/")[-1], n) for c, f, n in _errors(issues)
    ], issues


VETOED = CAUSE.replace(
    """  - id: data-bound
    matchers:
      - type: regex
        pattern: 'reader_cost: (?P<data_time>[\\d.]+), batch_cost: (?P<batch_time>[\\d.]+)'
        where:
{where}
""",
    """  - id: data-bound
    matchers:
      - type: substring
        text: 'batch_cost: '
    unless:
      - type: regex
        pattern: 'reader_cost: (?P<data_time>[\\d.]+), batch_cost: (?P<batch_time>[\\d.]+)'
        where: {data_time: {lt: 0.5 * batch_time}}
        scope: line
""",
)


@pytest.mark.slow
@pytest.mark.parametrize("fast", [True, False])
def test_a_veto_with_bounds_rejects_only_the_lines_its_numbers_fit(
    tmp_path: Path, fast: bool
) -> None:
    """Thousands of vetoed lines make the fast path reject lines by automaton
    (`kb.diagnosis.plan.VetoIndex`); a veto with bounds must never be taken as proven there."""
    assert "where: {data_time: {lt" in VETOED
    kb = load_kb(_rules(tmp_path, VETOED))
    healthy = [f"step {i} reader_cost: 0.1, batch_cost: 1.0" for i in range(3000)]
    slow = "step 3000 reader_cost: 0.9, batch_cost: 1.0"
    assert [c.id for c in diagnose_text(kb, "\n".join(healthy), fast=fast).causes] == []
    diag = diagnose_text(kb, "\n".join([*healthy, slow]), fast=fast)
    assert [c.id for c in diag.causes] == ["demo-cause"]
    assert [e.line for e in diag.causes[0].evidence] == [3001]
