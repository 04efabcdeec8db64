#!/usr/bin/env bash
# Runs every check CI runs: set up .venv with the test extras, then lint, type-check,
# the import contract, the rules and the test suite. Usage: ./scripts/test.sh [pytest args]
#
# ./scripts/test.sh --fast [pytest args]: the inner loop while changing code: ruff, mypy,
# the import contract and the tests not marked slow or ssh, with the .venv as it is (no
# install, no `rules lint`/`rules test`: their cases run as tests); it prints its time.
set -euo pipefail
cd "$(dirname "$0")/.."
FAST=0
if [ "${1:-}" = "--fast" ]; then
  FAST=1
  shift
fi
PY=${PYTHON:-python3}
if [ "$FAST" = 1 ]; then
  if [ ! -x .venv/bin/python ]; then
    echo "test.sh --fast: no .venv yet; run ./scripts/test.sh once to make it" >&2
    exit 2
  fi
else
  if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
  fi
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e '.[test]'
fi
export PATH="$PWD/.venv/bin:$PATH"
START=$SECONDS
echo "== ruff"; ruff check . && ruff format --check .
echo "== mypy (kb, dlperf_tui, tests)"; mypy
echo "== import contract (kb never imports Textual)"; lint-imports
if [ "$FAST" = 1 ]; then
  echo "== pytest (not slow, not ssh)"
  python -m pytest -q -n "${PYTEST_WORKERS:-2}" -m "not slow and not ssh" "$@"
  echo "== fast loop: $((SECONDS - START)) s"
  exit 0
fi
echo "== rules"; dlperf-help rules lint && dlperf-help rules test
echo "== pytest"; python -m pytest -n "${PYTEST_WORKERS:-2}" "$@"
