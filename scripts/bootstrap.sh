#!/usr/bin/env bash
# Create (once) the project's virtual environment in <repo>/.venv and install the project into it
# with its test tools: `pip install -e '.[dev]'`, everything taken from pyproject.toml.
#
#   bash scripts/bootstrap.sh
#
# Idempotent: an existing .venv is reused, and the install step is skipped while pyproject.toml
# is unchanged since the last successful install (SSSP_BOOTSTRAP_FORCE=1 reinstalls anyway).
# PYTHON picks the interpreter that creates the venv (default python3; 3.11 or newer).
# Everything it does is reported on stderr, so callers keep stdout for results.
set -euo pipefail

say() { printf 'bootstrap: %s\n' "$*" >&2; }
die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 1; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv"
python=${PYTHON:-python3}
stamp="$venv/.sssp-bootstrap"

cd "$root"
if [[ ! -x "$venv/bin/python" ]]; then
  command -v "$python" >/dev/null || die "$python not found: install Python 3.11 or newer (or set PYTHON)"
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "$python is Python $("$python" -c 'import platform; print(platform.python_version())'); the project needs 3.11 or newer (set PYTHON)"
  say "creating $venv with $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  "$python" -m venv "$venv" || die "python -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)"
else
  say "reusing $venv ($("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])'))"
fi

want=$(cat pyproject.toml "$root/scripts/bootstrap.sh" | "$venv/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
if [[ "${SSSP_BOOTSTRAP_FORCE:-0}" != 1 && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  say "pyproject.toml unchanged since the last install: nothing to do (SSSP_BOOTSTRAP_FORCE=1 reinstalls)"
  exit 0
fi

rm -f "$stamp"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
say "upgrading pip"
"$venv/bin/python" -m pip install --quiet --upgrade pip >&2
say "installing the project: pip install -e '.[dev]' (first time: a few minutes)"
"$venv/bin/python" -m pip install --quiet -e '.[dev]' >&2
echo "$want" > "$stamp"
say "ready: $venv/bin/python, with the sssp and tune commands in $venv/bin"
