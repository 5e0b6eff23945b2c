#!/usr/bin/env bash
# Check and test the project (everything that needs no GPU) in the project's virtual environment.
#
#   bash scripts/test.sh [PYTEST_ARGS...]     e.g.  bash scripts/test.sh -x -k store
#
# Creates/updates .venv first (scripts/bootstrap.sh), then runs, in order, stopping at the first
# that fails: the linter (ruff check), the formatter's check (ruff format --check), the type
# checker (mypy, configured in pyproject.toml) and pytest. Tests marked `gpu` are deselected; they
# skip themselves without a CUDA device anyway. The exit status is that of the step that failed
# (pytest's when every check passes).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/bootstrap.sh"
cd "$root"

step() {
  local name=$1
  shift
  printf 'test: %s: %s\n' "$name" "$*" >&2
  local rc=0
  "$@" || rc=$?
  if ((rc != 0)); then
    printf '\ntest: FAILED: %s (%s exited %d)\n\n' "$name" "$*" "$rc" >&2
    exit "$rc"
  fi
}

step lint .venv/bin/ruff check .
step format .venv/bin/ruff format --check .
step types .venv/bin/mypy
printf 'test: tests: .venv/bin/python -m pytest -m "not gpu" -q %s\n' "$*" >&2
exec "$root/.venv/bin/python" -m pytest -m "not gpu" -q "$@"
