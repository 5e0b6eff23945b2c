#!/usr/bin/env bash
# Run the test suite (everything that needs no GPU) in the project's virtual environment.
#
#   bash scripts/test.sh [PYTEST_ARGS...]     e.g.  bash scripts/test.sh -x -k store
#
# Creates/updates .venv first (scripts/bootstrap.sh). Tests marked `gpu` are deselected; they
# skip themselves without a CUDA device anyway. The exit status is pytest's.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/bootstrap.sh"
cd "$root"
printf 'test: .venv/bin/python -m pytest -m "not gpu" -q %s\n' "$*" >&2
exec "$root/.venv/bin/python" -m pytest -m "not gpu" -q "$@"
