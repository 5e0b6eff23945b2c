"""The wide loop (``kernels/sssp_wide.cu``, :mod:`sssp.gpu.wide`) against SciPy and the CPU
reference (marker ``gpu``).

Distances must equal SciPy's and predecessors the CPU reference's exactly, after poisoning the
outputs, from several sources in turn on one solver. The graphs cover the wide step's two ways of
dealing edges out: rows of up to ``kernels.WIDE_HUB_DEGREE`` edges walked by warps as runs of
edges, and hubs in chunks of ``kernels.WIDE_CHUNK`` (degrees just below, at and above both
sizes), plus the solve's edge cases.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import kernels
import sssp
from sssp.config import KernelConfig, LaunchConfig

try:
    from tests.gpu_common import need_gpu  # noqa: F401  (autouse)
    from tests.test_gpu_nearfar import check
except ImportError:  # pragma: no cover
    from gpu_common import need_gpu  # noqa: F401
    from test_gpu_nearfar import check

pytestmark = pytest.mark.gpu

WIDE = [LaunchConfig(KernelConfig(256, "N", 8), loop="wide")]
DELTAS = (None, 1, 10**6, float("inf"))
# The module's builds: as shipped (the light/heavy split: a step pushes light edges, a heavy move
# per bucket the heavy ones), without the split, and split with the hub sizes at their smallest so
# that chunks and runs meet the split's bucket list at many sizes.
BUILDS = [
    kernels.WideParams(),
    kernels.WideParams(split=False),
    kernels.WideParams(batch=1, hub_degree=32, chunk=64),
]
build = pytest.mark.parametrize("wide", BUILDS, ids=lambda p: p.key)


def hub_graph(seed: int = 0) -> sssp.Graph:
    """A sparse random graph plus nodes whose out-degrees sit at the wide step's edges: the
    warp run's limit (256, 257) and the hub chunk (1024, 1025, 5000 edges: several chunks)."""
    rng = np.random.default_rng(seed)
    n = 12_000
    rows = [rng.integers(5, n, 3 * n)]  # the hubs' rows hold only their own edges
    cols = [rng.integers(0, n, 3 * n)]
    for hub, degree in enumerate((256, 257, 1024, 1025, 5000)):
        rows.append(np.full(degree, hub))
        cols.append(rng.choice(n, degree, replace=False))
    r, c = np.concatenate(rows), np.concatenate(cols)
    w = rng.integers(1, 100, r.size)
    m = sp.coo_matrix((w, (r, c)), shape=(n, n)).tocsr()
    m.sum_duplicates()
    return sssp.Graph.from_scipy(m)


@pytest.mark.smoke
@build
def test_random_graphs_every_delta(wide):
    for degree, seed in ((2, 1), (8, 2), (50, 3)):
        graph = sssp.generate("random", size=6000, degree=degree, seed=seed)
        sources = [int(s) for s in np.random.default_rng(seed).integers(0, graph.n, 3)]
        results = check(graph, sources, deltas=DELTAS, configs=WIDE, wide=wide)
        assert all(r.stats["loop"] == "wide" for r in results)


@pytest.mark.smoke
@build
def test_hubs_split_in_chunks(wide):
    graph = hub_graph()
    degrees = np.diff(graph.indptr)[:5]
    assert list(degrees) == [256, 257, 1024, 1025, 5000]
    assert kernels.WIDE_HUB_DEGREE == 256 and kernels.WIDE_CHUNK == 1024
    deltas = (None, 1, 50, float("inf"))  # 50: weights 1..99 both light and heavy
    check(graph, [4, 0, 2, 77], deltas=deltas, configs=WIDE, repeats=2, wide=wide)


@build
def test_kronecker_hubs(wide):
    graph = sssp.generate("kronecker", scale=14, degree=16, seed=5)
    assert np.diff(graph.indptr).max() > kernels.WIDE_CHUNK
    rng = np.random.default_rng(5)
    sources = [int(s) for s in rng.choice(np.flatnonzero(np.diff(graph.indptr)), 3)]
    check(graph, sources, deltas=(None, 8, 40), configs=WIDE, wide=wide)


@build
def test_edge_cases(wide):
    # Unreachable nodes, zero-weight edges, a source without out-edges, one node.
    indptr = np.array([0, 2, 3, 4, 4, 4, 5])
    indices = np.array([1, 2, 2, 3, 0])
    weights = np.array([0, 5, 0, 0, 3])
    g = sssp.Graph(indptr=indptr, indices=indices, weights=weights)
    check(g, [0, 3, 4, 5], deltas=(None, 1, 3), configs=WIDE, wide=wide)
    one = sssp.Graph(indptr=[0, 0], indices=[], weights=[])
    check(one, [0], configs=WIDE, wide=wide)


@build
def test_heavy_edges_only_and_light_edges_only(wide):
    """Every edge heavy (Δ = 1 below the lightest weight): each bucket's heavy move does all the
    work; every edge light (Δ above the heaviest): no heavy move at all."""
    graph = sssp.generate("random", size=5000, degree=6, seed=11, weight_range=(5, 60))
    sources = [0, 4999, 2500]
    check(graph, sources, deltas=(4, 61, 10**6), configs=WIDE, wide=wide)


@pytest.mark.smoke
def test_the_split_partitions_each_row_once():
    """With the split, the device's rows hold their light edges (w < Δ) first and their heavy
    ones after, each part in the graph's order, and the light edges are counted per row; the
    solves then walk parts of rows (the tests above check their answers)."""
    from sssp.gpu import make_solver

    graph = hub_graph()
    with make_solver(graph, algorithm="near-far", config=WIDE[0], delta=50) as solver:
        assert solver.plan.split_rows and solver.plan.delta_bits == 50
        got = {
            "indices": np.empty(graph.m, np.int32),
            "weights": np.empty(graph.m, np.uint32),
            "light": np.empty(graph.n, np.int32),
        }
        for name, array in got.items():
            solver.cuda.memcpy_dtoh(array, getattr(solver, f"d_{name}"))
    rows = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    heavy = graph.weights >= 50
    order = np.argsort(2 * rows + heavy, kind="stable")
    np.testing.assert_array_equal(got["indices"], graph.indices[order])
    np.testing.assert_array_equal(got["weights"], graph.weights[order])
    np.testing.assert_array_equal(got["light"], np.bincount(rows[~heavy], minlength=graph.n))
    assert 0 < got["light"].sum() < graph.m


def test_no_tree_and_rows():
    from sssp.gpu import make_solver

    graph = sssp.generate("random", size=20_000, degree=6, seed=9)
    sources = np.array([3, 3, 17, 19_999])
    with make_solver(graph, algorithm="near-far", config=WIDE[0]) as solver:
        full = solver.solve(3)
        bare = solver.solve(3, return_predecessors=False)
        assert bare.pred is None
        np.testing.assert_array_equal(bare.dist, full.dist)
        rows = np.empty((len(sources), graph.n), dtype=np.int64)
        solver.solve_rows(sources, rows)
    for row, s in zip(rows, sources, strict=True):
        np.testing.assert_array_equal(row, sssp.solve(graph, int(s), backend="cpu").dist)


def test_wide_distances_fall_back_to_the_persistent_loop():
    # Distances that need 64 bits: the wide loop takes packed 32-bit keys only.
    g = sssp.Graph(indptr=[0, 1, 2, 2], indices=[1, 2], weights=[2**31, 2**31])
    res = check(g, [0], configs=WIDE)[0]
    assert res.stats["loop"] == "persistent" and "32-bit" in res.stats["loop_fallback"]
