#!/usr/bin/env bash
# Run the GPU part of the project on an offline CUDA host: install the wheels the project needs
# from a local folder, run the gpu test suite, then the benchmarks and/or the tuner.
#
#   scripts/gpu_host.sh WHEEL_DIR OUT_DIR [tests] [bench] [tune] [bench-quick]
#
# The host's Python must already have numpy, scipy and numba (the CUDA images do). Results and
# logs go to OUT_DIR. The wheels are installed into $SSSP_SITE when set (kept), else into a
# private temporary folder (mktemp: mode 0700, a fresh name) that is removed at the end, so no
# other user can plant modules on our PYTHONPATH.
set -uo pipefail
wheels=${1:?wheel folder}; out=${2:?output folder}; shift 2
steps=${*:-tests bench}
if [[ -n "${SSSP_SITE:-}" ]]; then
  site=$SSSP_SITE
else
  site=$(mktemp -d "${TMPDIR:-/tmp}/sssp-site.XXXXXX") || exit 3
  trap 'rm -rf "$site"' EXIT
fi
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$wheels"/*.whl || exit 3
export PYTHONPATH="$site:$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
cd "$here"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/nvidia-smi.txt"
python3 -c "import pycuda, kernel_tuner, optuna, sqlalchemy, numba, numpy, scipy; print('pycuda', pycuda.VERSION_TEXT, 'kernel_tuner', kernel_tuner.__version__, 'optuna', optuna.__version__, 'sqlalchemy', sqlalchemy.__version__, 'numba', numba.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__)" | tee "$out/versions.txt"
rc=0
for step in $steps; do
  case $step in
    tests)
      # The whole GPU suite; with pytest-xdist, 12 workers share the device (8 workers took
      # about 9.5 minutes on an H200; the host has 16 cores).
      workers=$(python3 -c 'import xdist' 2>/dev/null && echo "-n 12")
      python3 -m pytest -m gpu -q -p no:cacheprovider --timeout 900 $workers tests/ --ignore=tests/test_notebooks.py 2>&1 | tee "$out/pytest-gpu.log"; rc=$((rc | $?)) ;;
    bench) python3 benchmarks/bench_gpu.py --out "$out/bench_gpu.csv" ${SSSP_BOOST:+--boost "$SSSP_BOOST"} 2>&1 | tee "$out/bench_gpu.log"; rc=$((rc | $?)) ;;
    bench-quick) python3 benchmarks/bench_gpu.py --out "$out/bench_gpu_quick.csv" --sizes 24k --degrees 2 200 --synthetic-only ${SSSP_BOOST:+--boost "$SSSP_BOOST"} 2>&1 | tee "$out/bench_gpu_quick.log"; rc=$((rc | $?)) ;;
    tune) python3 -m tuner.cli run --db "sqlite:///$out/tuning.sqlite" --all --cache-dir "$out/kt_cache" 2>&1 | tee "$out/tune.log"; rc=$((rc | $?)) ;;
    *) echo "unknown step $step" >&2; rc=2 ;;
  esac
done
exit $rc
