"""The batch kernel on the device (markers ``gpu`` and ``smoke``): ``EngineSolver.solve_rows``
without predecessors solves a chunk of sources in one launch, each cluster taking source after
source. Every row must equal SciPy's, in every dtype, in the order of the sources, for every
cluster size and block size, with the graph in shared or global memory, with local work, at the
edges of a cluster size's limit, and for batches much larger than the clusters resident at once.
"""

from __future__ import annotations

import numpy as np
import pytest

import kernels
import sssp
from sssp.config import KernelConfig, LaunchConfig

try:
    from tests.gpu_common import as_dtype, need_gpu, scipy_rows  # noqa: F401  (autouse)
except ImportError:  # pragma: no cover
    from gpu_common import as_dtype, need_gpu, scipy_rows  # noqa: F401

pytestmark = [pytest.mark.gpu]

NEARFAR = LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster")


def batch_rows(graph, sources, dtype=np.int64, config=NEARFAR, **options):
    """Rows of ``sources`` through the batch kernel (checked to be the path taken)."""
    from sssp.gpu.engine import EngineSolver

    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        solver.batch_options = options
        batch = solver.batch()
        assert batch is not None, solver._batch
        dist = np.full((len(sources), graph.n), 7, dtype=dtype)
        its = np.zeros(len(sources), np.int64)
        solver.solve_rows(np.asarray(sources), dist, None, its)
        return dist, its, batch.plan, batch.clusters, solver


@pytest.mark.smoke
@pytest.mark.parametrize("dtype", ["int64", "int32", "float64", "float32"])
def test_batch_rows_equal_scipy_in_every_dtype(dtype):
    graph = sssp.generate("random", size=6000, degree=3, seed=2)
    rng = np.random.default_rng(1)
    sources = rng.integers(0, graph.n, 300)
    sources[5] = sources[6]  # a duplicate is a row of its own
    dist, its, plan, clusters, _ = batch_rows(graph, sources, dtype)
    np.testing.assert_array_equal(dist, as_dtype(scipy_rows(graph, sources), dtype))
    assert plan.cluster == 1 and plan.mb > 0  # the whole graph in one block's shared memory
    assert clusters >= 100 and (its > 0).all()


@pytest.mark.smoke
@pytest.mark.parametrize("cluster", kernels.CLUSTER_SIZES)
@pytest.mark.parametrize("block", [256, 1024])
def test_every_cluster_size_and_block(cluster, block):
    graph = sssp.generate("random", size=9000, degree=4, seed=5)
    sources = np.arange(0, graph.n, 61)
    dist, _, plan, _, _ = batch_rows(graph, sources, cluster=cluster, block=block)
    assert (plan.cluster, plan.block) == (cluster, block)
    np.testing.assert_array_equal(dist, as_dtype(scipy_rows(graph, sources), np.int64))


def test_iterations_match_single_solves():
    graph = sssp.generate("random", size=5000, degree=3, seed=9)
    sources = np.arange(0, graph.n, 500)
    dist, its, _, _, _ = batch_rows(graph, sources, cluster=4)
    from sssp.gpu.engine import EngineSolver

    with EngineSolver(graph, algorithm="near-far", config=NEARFAR) as single:
        assert single.cluster == 1
        for i, s in enumerate(sources):
            r = single.solve(int(s))
            np.testing.assert_array_equal(dist[i], r.dist)
            assert abs(int(its[i]) - r.iterations) <= max(2, r.iterations // 10)


def test_graph_in_global_memory_and_at_the_size_limits():
    """Distances that only just fit one block, that only just do not (two blocks), and a graph
    whose edges stay in global memory."""
    budget = 232448 - kernels.CLUSTER_STATIC_SMEM
    one = max(n for n in range(30000, 34000, 32) if kernels.cluster_smem_bytes(n, 1) <= budget)
    for n, want in ((one, 1), (one + 32, 2)):
        rng = np.random.default_rng(n)
        src = rng.integers(0, n, 3 * n)
        dst = rng.integers(0, n, 3 * n)
        graph = sssp.Graph.from_edges(n, src, dst, rng.integers(1, 50, 3 * n))
        sources = rng.integers(0, n, 150)
        dist, _, plan, _, _ = batch_rows(graph, sources)
        assert plan.cluster == want and plan.mb == 0, (n, plan)
        np.testing.assert_array_equal(dist, as_dtype(scipy_rows(graph, sources), np.int64))


def test_unreachable_zero_weights_one_node_and_sinks():
    rng = np.random.default_rng(3)
    n = 4000
    src = rng.integers(0, n // 2, 3 * n)  # the upper half has no out-edges
    dst = rng.integers(0, n, 3 * n)
    w = rng.integers(0, 4, 3 * n)  # a quarter of the weights are zero
    graph = sssp.Graph.from_edges(n, src, dst, w)
    sources = np.concatenate([rng.integers(0, n, 200), [n - 1, n - 2]])  # sinks as sources
    dist, its, _, _, _ = batch_rows(graph, sources, np.int32)
    ref = scipy_rows(graph, sources)
    assert np.isinf(ref).any()
    np.testing.assert_array_equal(dist, as_dtype(ref, np.int32))
    assert its[-1] >= 0 and (dist[-1] == np.iinfo(np.int32).max).sum() == n - 1
    none = np.zeros(0, np.int64)
    single = sssp.Graph.from_edges(1, none, none, np.zeros(0, np.int32))
    got, _, _, _, _ = batch_rows(single, [0, 0, 0])
    np.testing.assert_array_equal(got, np.zeros((3, 1), np.int64))


@pytest.mark.parametrize("fuse", [1, 2])
def test_local_work_on_a_mesh(fuse):
    """Local work in each block (fuse=1) and across blocks (fuse=2) on a grid (bands), and across
    the four blocks of a source on a random graph (nodes v % C)."""
    graph = sssp.generate("grid", size=20000, seed=4)
    fused = LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", fuse=fuse)
    sources = np.arange(0, graph.n, 97)
    dist, _, plan, _, _ = batch_rows(graph, sources, config=fused)
    assert plan.lq > 0 and plan.placement is not None and plan.spread == (fuse == 2)
    np.testing.assert_array_equal(dist, as_dtype(scipy_rows(graph, sources), np.int64))
    if fuse == 2:
        rand = sssp.generate("random", size=20000, degree=3, seed=5)
        dist, _, plan, _, _ = batch_rows(rand, sources, config=fused, cluster=4)
        assert plan.spread and plan.placement is None and plan.cluster == 4
        np.testing.assert_array_equal(dist, as_dtype(scipy_rows(rand, sources), np.int64))


def test_a_batch_far_larger_than_the_device_holds_and_the_front_door():
    """Thousands of sources over a few resident clusters, through ``sssp.Solver.solve_many``:
    the batch kernel's rows, and the statistics say it ran."""
    graph = sssp.generate("random", size=3000, degree=5, seed=8)
    sources = np.resize(np.arange(graph.n), 5000)
    solver = sssp.Solver(graph, backend="gpu", algorithm="near-far")
    res = solver.solve_many(sources)
    assert "batch kernel" in res.stats["batch"] and res.stats["lanes"] >= 100
    ref = scipy_rows(graph, np.arange(graph.n))
    np.testing.assert_array_equal(res.dist, as_dtype(ref[sources % graph.n], res.dist.dtype))
    # With predecessors the lanes run (the batch kernel writes no tree).
    tree = solver.solve_many(sources[:50], return_predecessors=True)
    assert "a launch per source" in tree.stats["batch"] or "one source" in tree.stats["batch"]
    np.testing.assert_array_equal(tree.dist, res.dist[:50])


@pytest.mark.smoke
@pytest.mark.parametrize("rho", [4, 32])
def test_rows_with_shortcuts(rho):
    """The batch kernel relaxes the solver's graph with its shortcut edges
    (``LaunchConfig.shortcuts``, 4 and 32 a node): the rows still equal SciPy's on the graph
    itself."""
    graph = sssp.generate("road", size=12_000, seed=21)
    sources = np.arange(0, graph.n, 97)
    config = LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", shortcuts=rho)
    dist, its, _, _, solver = batch_rows(graph, sources, config=config)
    np.testing.assert_array_equal(dist, as_dtype(scipy_rows(graph, sources), np.int64))
    assert solver.relax_graph.m > graph.m and (its > 0).all()
