#!/usr/bin/env bash
# The main job, for a newcomer: set up .venv, generate one of the paper's graphs, solve it on the
# CPU (and on the GPU with the tuned kernels when one is usable), then print the tuning report from
# the results the project ships and replay one tuning run from recorded measurements.
#
#   bash scripts/main.sh [OUT_DIR]
#
# Files (graph, replay database) go to OUT_DIR when given and are kept; otherwise to a temporary
# folder that is removed at the end. Progress goes to stderr, results to stdout.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/bootstrap.sh"
cd "$root"
bin="$root/.venv/bin"

if [[ $# -ge 1 ]]; then
  tmp=$1
  mkdir -p "$tmp"
else
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/sssp-main.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
fi

step() { printf '\n== %s\n' "$*" >&2; }

step "generate the paper's random graph: 49k nodes, mean degree 200 (about 10M edges)"
"$bin/sssp" generate random --size 49k --degree 200 --seed 0 -o "$tmp/g.npz"

step "sssp info"
"$bin/sssp" info "$tmp/g.npz"

step "solve on the CPU: Crauser (the paper's algorithm) from 5 random sources"
"$bin/sssp" solve "$tmp/g.npz" --backend cpu --algorithm crauser --sources 5

step "solve on the CPU: SciPy's Dijkstra (the reference) from the same 5 sources"
"$bin/sssp" solve "$tmp/g.npz" --backend cpu --algorithm dijkstra --sources 5

if "$bin/python" -c "import sssp.gpu as g; raise SystemExit(0 if g.is_available() else 1)" 2>/dev/null; then
  step "solve on the GPU with the tuned launch configuration, from the same 5 sources"
  "$bin/sssp" solve "$tmp/g.npz" --backend gpu --tuned --sources 5
else
  step "no usable GPU (or no pycuda: .venv/bin/python -m pip install -e '.[gpu]'): skipping the GPU solve"
fi

step "tuning report: Table 1 from the recorded H200 results shipped in tuning_db/data"
"$bin/tune" report

step "replay the tuning of 49k/deg200 from recorded Kernel Tuner measurements (no GPU needed)"
"$bin/tune" run --replay --graph-class deg200 --size 49k --db "sqlite:///$tmp/replay.sqlite"

step "done${1:+ (files kept in $tmp)}"
