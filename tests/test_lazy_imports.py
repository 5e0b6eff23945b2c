"""The packages import, and the CPU paths run, without loading pycuda."""

from __future__ import annotations

import subprocess
import sys

CODE = r"""
import sys
import sssp, kernels, tuning_db, tuner
import sssp.gpu, sssp.solve
from sssp.gpu import runtime
g = sssp.Graph.from_edges(3, [0, 1], [1, 2], [4, 5])
r = sssp.solve(g, 0, backend="cpu")
assert list(r.dist) == [0, 4, 9], r.dist
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pycuda", "kernel_tuner"))
print("LOADED:" + ",".join(loaded))
"""


def test_import_does_not_load_pycuda():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("LOADED:")][0]
    assert line == "LOADED:", f"GPU modules imported eagerly: {line}"
