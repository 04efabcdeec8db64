#!/usr/bin/env bash
# Runs every check CI runs: set up .venv with the test extras, then lint, type-check,
# the import contract, the rules, and the test suite. Usage: ./scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'
export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff"; ruff check . && ruff format --check .
echo "== mypy (kb, dlperf_tui, tests)"; mypy
echo "== import contract (kb never imports Textual)"; lint-imports
echo "== rules"; dlperf-help rules lint && dlperf-help rules test
echo "== pytest"; python -m pytest -n "${PYTEST_WORKERS:-2}" "$@"
