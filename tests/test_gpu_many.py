"""Many sources on the GPU: the checks of tests/test_many_sources.py on the device (rows equal to
SciPy's, out= dtypes, limit, min_only through the super-source graph, batches of more rows
than a chunk holds, and Ctrl-C leaving whole rows only)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

import sssp
from sssp.cpu.reference import min_weight_csr

try:
    from tests.gpu_common import need_gpu  # noqa: F401  (autouse: skips without a device)
except ImportError:  # run from inside tests/
    from gpu_common import need_gpu  # noqa: F401

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[1]
MARK = -7


def graph(real: bool = False, n: int = 3000, seed: int = 0) -> sssp.Graph:
    rng = np.random.default_rng(seed)
    m = 6 * n
    w = rng.random(m) * 50 if real else rng.integers(1, 100, m)
    return sssp.Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, int(0.95 * n), m), w)


def reference(g, sources, **kw):
    return scipy_dijkstra(min_weight_csr(g), indices=np.asarray(sources), **kw)


@pytest.mark.parametrize("algorithm", ["crauser", "near-far"])
@pytest.mark.parametrize("real", [False, True], ids=["int", "real"])
def test_rows_equal_scipys(algorithm, real):
    g = graph(real)
    sources = [5, 0, 5, g.n - 1, 17]
    r = sssp.solve(g, sources, backend="gpu", algorithm=algorithm, return_predecessors=True)
    assert r.backend == "gpu" and r.dist.shape == (5, g.n) and r.timings["gpu"] > 0
    np.testing.assert_array_equal(r.dist_float, reference(g, sources))
    np.testing.assert_array_equal(r.dist[0], r.dist[2])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32, np.float64])
def test_out_dtypes_and_many_chunks(dtype):
    g = graph()
    k = 200
    out = np.full((k, g.n), MARK, dtype=dtype)
    r = sssp.solve(g, range(k), backend="gpu", out=out, memory_budget=8 * g.n * 12)
    assert r.stats["chunks"] > 5
    want = reference(g, range(k))
    np.testing.assert_array_equal(r.dist_float, want)


def test_limit_and_min_only():
    g = graph(seed=2)
    for limit in (0, 40, 200):
        r = sssp.solve(g, [1, 9], backend="gpu", limit=limit)
        np.testing.assert_array_equal(r.dist_float, reference(g, [1, 9], limit=limit))
    near = sssp.solve(g, [4, 400, 2999], backend="gpu", min_only=True, return_predecessors=True)
    np.testing.assert_array_equal(near.dist_float, reference(g, [4, 400, 2999], min_only=True))
    assert all(near.nearest[s] == s for s in (4, 400, 2999))
    for v in np.flatnonzero(near.reached)[:50]:
        path = near.path_to(int(v))
        assert path[0] in (4, 400, 2999) and path[-1] == v


CHILD = textwrap.dedent("""
    import sys, numpy as np, sssp
    g = sssp.generate("grid", size=int(sys.argv[2]), seed=0)
    out = np.memmap(sys.argv[1], dtype=np.int32, mode="r+", shape=(g.n, g.n))
    print(g.n, flush=True)
    sssp.solve(g, range(g.n), backend="gpu", out=out, memory_budget=8 * 12 * g.n)
""")


def test_ctrl_c_leaves_whole_rows_only(tmp_path):
    g = sssp.generate("grid", size=20000, seed=0)
    n = g.n
    path = tmp_path / "t.i32"
    np.full((n, n), MARK, dtype=np.int32).tofile(path)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), "20000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p
            ),
        },
    )
    assert int(child.stdout.readline()) == n
    table = np.memmap(path, dtype=np.int32, mode="r", shape=(n, n))
    deadline = time.monotonic() + 300
    while np.all(table[:64] == MARK):
        assert time.monotonic() < deadline and child.poll() is None, (
            child.stderr.read() if child.poll() else ""
        )
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    child.communicate(timeout=120)
    assert child.returncode != 0
    untouched = np.all(table == MARK, axis=1)
    written = np.flatnonzero(~untouched)
    assert written.size and untouched.any()  # interrupted in the middle
    for a in range(
        0, written.size, 256
    ):  # the reference for the written rows only (n x n is 1.6 GB)
        rows = written[a : a + 256]
        want = reference(g, rows)
        want = np.where(np.isinf(want), np.iinfo(np.int32).max, want).astype(np.int32)
        assert np.array_equal(table[rows], want), "a written row is not the right answer"
