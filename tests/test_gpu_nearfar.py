"""Near-far (Δ-stepping) on the GPU against SciPy and the CPU reference (marker ``gpu``).

Distances must equal SciPy's exactly and predecessors the CPU reference's exactly (the tree rule
depends on the distances only, never on Δ or on the order of the relaxations). Several Δ (the
default rule, 1, a huge one, Bellman-Ford's ``inf``), block sizes, lanes and block-local limits
run on every graph, each solve after poisoning the device outputs, and the same solver solves
from several sources in turn so that state left over from a previous solve would show.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu.nearfar import default_delta, near_far
from sssp.cpu.reference import dijkstra
from sssp.verify import check_against, check_tree

try:
    from tests.gpu_common import need_gpu, shared_graph_files  # noqa: F401  (need_gpu: autouse)
    from tests.strategies import graph_and_source
except ImportError:  # pragma: no cover
    from gpu_common import need_gpu, shared_graph_files  # noqa: F401
    from strategies import graph_and_source

pytestmark = pytest.mark.gpu


CONFIGS = [
    LaunchConfig.default(),
    LaunchConfig(KernelConfig(256, "N", 4), loop="persistent", blocks_per_sm=2, local_limit=0),
    LaunchConfig(KernelConfig(1024, "A", 32), loop="persistent", blocks_per_sm=1, local_limit=8192),
    LaunchConfig(KernelConfig(128, "S", 1), loop="persistent", blocks_per_sm=0, local_limit=10**9),
]
"""Default; grid steps only; whole warps per node with many block-local steps; everything in
block 0 (every step and raise block-local)."""

CLUSTER_CONFIGS = [
    LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster"),
    LaunchConfig(KernelConfig(256, "A", 8), loop="cluster", cluster=4),
    LaunchConfig(KernelConfig(512, "N", 8), loop="cluster", cluster=16),
    LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", fuse=True),
    LaunchConfig(KernelConfig(256, "N", 8), loop="cluster", cluster=16, fuse=True),
]
"""The cluster loop (kernels/sssp_cluster.cu): the fewest blocks that hold the graph, at least 4
blocks of 256 threads, and 16 blocks (beyond the portable cluster size); then fused (bands of
reverse Cuthill-McKee, local work inside the blocks) on the fewest blocks and on 16."""


def check(
    graph: sssp.Graph, sources, *, deltas=(None,), configs=CONFIGS, repeats: int = 1, wide=None
) -> list:
    """Solve from ``sources`` under every Δ and configuration (``wide``: the wide loop's module
    build); distances equal SciPy's, predecessors the CPU reference's, the tree valid."""
    from sssp.gpu import make_solver

    refs = {int(s): dijkstra(graph, int(s)).dist for s in sources}
    cpu = {int(s): near_far(graph, int(s)) for s in sources}
    results = []
    for delta, config in itertools.product(deltas, configs):
        extra = {} if wide is None else {"wide": wide}
        with make_solver(
            graph, algorithm="near-far", config=config, delta=delta, **extra
        ) as solver:
            for _ in range(repeats):
                for s in sources:
                    solver.poison()
                    res = solver.solve(int(s))
                    check_against(refs[int(s)], res)
                    check_tree(graph, res)
                    np.testing.assert_array_equal(
                        res.pred, cpu[int(s)].pred, err_msg=f"{config} delta {delta}"
                    )
                    assert res.algorithm == "near-far" and res.stats["buckets"] >= 1
                    results.append(res)
    return results


def test_random_classes_and_deltas():
    for deg, seed in ((2, 1), (8, 2), (50, 3)):
        graph = sssp.generate("random", size=6000, degree=deg, seed=seed)
        sources = [int(s) for s in np.random.default_rng(seed).integers(0, graph.n, 3)]
        check(graph, sources, deltas=(None, 1, 10**12, float("inf")))


def test_many_raises_and_handovers_on_large_graphs():
    """Large sparse graphs with small Δ: many raises, steps handed between block 0 and the grid,
    many blocks. A block that read the ring late once saw a raise's list count and chose another
    move than the rest of the grid (wrong distances, or a barrier that timed out)."""
    local = [
        CONFIGS[0],
        CONFIGS[2],
        LaunchConfig(KernelConfig(1024, "N", 4), blocks_per_sm=1, local_limit=8192),
    ]
    for deg in (2, 20):
        graph = sssp.generate("random", size="98k", degree=deg, seed=deg)
        sources = [int(s) for s in np.random.default_rng(deg).integers(0, graph.n, 3)]
        base = default_delta(graph)
        results = check(
            graph, sources, deltas=(None, max(1, base // 4), base * 16), configs=local, repeats=2
        )
        assert max(r.stats["buckets"] for r in results) > 3


def test_grid_high_diameter_many_handovers():
    """A 2-D grid: thousands of small steps, so the loop hands steps between block 0 and the grid
    many times; repeated solves on one solver."""
    side = 120
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = np.random.default_rng(4).integers(1, 100, u.size)
    graph = sssp.Graph.from_edges(
        side * side, np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([w, w])
    )
    results = check(graph, [0, side * side // 2 + 7], deltas=(None, 30), repeats=3)
    assert max(r.iterations for r in results) > 100


@pytest.mark.smoke
def test_zero_weights_take_the_reference_level_rule():
    """Zero-weight edges leave nodes without a strict tight in-edge: the host completes them with
    the reference's level rule, and the tree equals the CPU's."""
    rng = np.random.default_rng(6)
    n = 4000
    src, dst = rng.integers(0, n, 24_000), rng.integers(0, n, 24_000)
    w = rng.integers(0, 4, src.size)  # a quarter zero
    graph = sssp.Graph.from_edges(n, src, dst, w)
    results = check(graph, [0, 17], deltas=(None, 1))
    assert any(r.stats["flat_parents_on_host"] > 0 for r in results)


def test_real_valued_and_64bit_distances():
    rng = np.random.default_rng(8)
    n = 5000
    src, dst = rng.integers(0, n, 30_000), rng.integers(0, n - 10, 30_000)
    for dtype in (np.float32, np.float64):
        w = (rng.random(src.size) * 10).astype(dtype)
        w[::50] = 0.0
        graph = sssp.Graph.from_edges(n, src, dst, w)
        results = check(graph, [3], deltas=(None, 0.5, 1e-300, float("inf")), configs=CONFIGS[:2])
        assert all(np.isinf(r.dist[-10:]).all() for r in results)
    big = sssp.Graph.from_edges(n, src, dst, rng.integers(1_000_000, 3_000_000_000, src.size))
    results = check(big, [0, 5], configs=CONFIGS[:2])
    assert all(r.stats["dist_bits"] == 64 for r in results)


def test_skewed_degrees_use_the_block_path():
    rng = np.random.default_rng(5)
    n = 20_000
    hubs = np.arange(8)
    src = np.concatenate([np.repeat(hubs, 5000), rng.integers(0, n, 40_000)])
    dst = np.concatenate([rng.integers(0, n, 8 * 5000), rng.integers(0, n, 40_000)])
    graph = sssp.Graph.from_edges(n, src, dst, rng.integers(1, 50, src.size))
    check(graph, [0, 1, 100])


def test_step_and_bucket_counts_near_the_reference():
    """The GPU pushes a node's current distance (possibly lower than at the step's start), so its
    counts may differ from the reference's, but not by much on a graph of many steps."""
    graph = sssp.generate("random", size=20_000, degree=4, seed=9)
    gpu = check(graph, [11], configs=CONFIGS[:1])[0]
    cpu = near_far(graph, 11)
    assert gpu.stats["delta"] == cpu.stats["delta"] == default_delta(graph)
    assert 0.5 * cpu.iterations <= gpu.iterations <= 1.5 * cpu.iterations + 2
    assert gpu.stats["buckets"] <= cpu.stats["buckets"] * 1.5 + 2


@pytest.mark.smoke
@pytest.mark.parametrize("config", CONFIGS + CLUSTER_CONFIGS, ids=str)
def test_source_without_out_edges_and_one_node(config):
    graph = sssp.Graph.from_edges(4, np.array([0, 1]), np.array([1, 2]), np.array([3, 4]))
    res = sssp.solve(graph, 3, backend="gpu", algorithm="near-far", config=config)
    assert res.dist[3] == 0 and np.all(res.dist[:3] == sssp.UNREACHABLE) and np.all(res.pred == -1)
    one = sssp.Graph.from_edges(1, np.array([0]), np.array([0]), np.array([5]))
    res = sssp.solve(one, 0, backend="gpu", algorithm="near-far", config=config)
    assert res.dist.tolist() == [0] and res.pred.tolist() == [-1]


@pytest.mark.smoke
def test_cluster_loop_resident_and_not():
    """Distances, predecessors and repeated solves on the cluster loop, with the graph in shared
    memory (a small graph) and with only its distances there (a large one)."""
    small = sssp.generate("random", size=6000, degree=8, seed=12)
    results = check(
        small,
        [0, 9, 4000],
        deltas=(None, 1, 10**12, float("inf")),
        configs=CLUSTER_CONFIGS,
        repeats=2,
    )
    assert all(r.stats["loop"] == "cluster" and r.stats["cluster_resident"] for r in results)
    assert {r.stats["cluster_blocks"] for r in results} >= {4, 16}
    large = sssp.generate("random", size=300_000, degree=3, seed=13)
    results = check(large, [1, 77], configs=CLUSTER_CONFIGS[::2])
    assert all(r.stats["loop"] == "cluster" and not r.stats["cluster_resident"] for r in results)


def test_cluster_loop_many_steps_overflow_and_hubs():
    """A grid (hundreds of steps), Bellman-Ford's Δ on a large graph (lists past the per-block
    capacity, whose nodes wait for the next step), hubs (one list entry with thousands of edges)
    and zero weights."""
    side = 100
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = np.random.default_rng(14).integers(1, 100, u.size)
    grid = sssp.Graph.from_edges(
        side * side, np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([w, w])
    )
    results = check(grid, [0, 5050], deltas=(None, 30), configs=CLUSTER_CONFIGS, repeats=2)
    assert max(r.iterations for r in results) > 100
    wide = sssp.generate("random", size="98k", degree=4, seed=15)
    results = check(wide, [3], deltas=(float("inf"),), configs=CLUSTER_CONFIGS)
    assert max(r.stats["max_frontier"] for r in results) >= 2048  # some block's list hit the cap
    rng = np.random.default_rng(16)
    n = 20_000
    hubs = np.arange(8)
    src = np.concatenate([np.repeat(hubs, 5000), rng.integers(0, n, 40_000)])
    dst = np.concatenate([rng.integers(0, n, 8 * 5000), rng.integers(0, n, 40_000)])
    check(
        sssp.Graph.from_edges(n, src, dst, rng.integers(0, 50, src.size)),
        [0, 1, 100],
        configs=CLUSTER_CONFIGS,
    )


def test_fused_cluster_loop_runs_local_work():
    """On a grid the fused loop's bands keep most edges inside a block (0.95 at 16 blocks, above
    sssp.bands.FUSE_MIN_LOCALITY): local work carries the wave, so it needs fewer cluster steps
    than the loop without them, with the same answers. On a random graph the bands keep few edges
    local, so the same configuration runs unfused and says why."""
    side = 200
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = np.random.default_rng(18).integers(1, 100, u.size)
    perm = np.random.default_rng(19).permutation(side * side)  # ids that say nothing of the layout
    grid = sssp.Graph.from_edges(
        side * side,
        perm[np.concatenate([u, v])],
        perm[np.concatenate([v, u])],
        np.concatenate([w, w]),
    )
    plain, fused = (
        LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", cluster=16, fuse=f)
        for f in (False, True)
    )
    sources = [int(perm[0]), int(perm[side * side // 2 + side // 2])]
    base = check(grid, sources, configs=[plain])
    runs = check(grid, sources, configs=[fused], repeats=2)
    assert all(r.stats["cluster_fused"] and r.stats["local_nodes"] > 0 for r in runs)
    assert all(r.stats["fusion_gate"].endswith(": fused") for r in runs)
    assert not any(r.stats["cluster_fused"] for r in base)
    assert max(r.iterations for r in runs) < min(r.iterations for r in base)
    rand = sssp.generate("random", size=20_000, degree=3, seed=20)
    gated = check(rand, [0, 1], configs=[fused])
    assert not any(r.stats["cluster_fused"] for r in gated)
    assert all(r.stats["fusion_gate"].endswith(": ran unfused") for r in gated)


def test_cluster_loop_falls_back_to_the_grid():
    """Real-valued weights and 64-bit distances are not the cluster solver's: the persistent loop
    runs them and the result says why."""
    rng = np.random.default_rng(17)
    n = 3000
    src, dst = rng.integers(0, n, 15_000), rng.integers(0, n, 15_000)
    for w in (
        (rng.random(src.size) * 10).astype(np.float32),
        rng.integers(1_000_000, 3_000_000_000, src.size),
    ):
        graph = sssp.Graph.from_edges(n, src, dst, w)
        for r in check(graph, [0], configs=CLUSTER_CONFIGS[:1]):
            assert (
                r.stats["loop"] == "persistent" and "32-bit integer" in r.stats["cluster_fallback"]
            )


@pytest.mark.smoke
def test_refusals():
    from sssp.errors import InvalidGraphError

    graph = sssp.generate("random", size=500, degree=4, seed=1)
    with pytest.raises(InvalidGraphError, match="persistent"):
        sssp.solve(graph, 0, backend="gpu", algorithm="near-far", config=LaunchConfig(loop="host"))
    # The front door's validation refuses it before any engine is built (sssp.request).
    with pytest.raises(sssp.errors.InvalidArgumentError, match="successors"):
        sssp.solve(graph, 0, backend="gpu", algorithm="near-far", variant="predecessors")
    with pytest.raises(InvalidGraphError, match="near-far only"):
        sssp.solve(
            graph, 0, backend="gpu", algorithm="crauser", config=LaunchConfig(loop="cluster")
        )


@pytest.mark.parametrize("config", CONFIGS + CLUSTER_CONFIGS, ids=str)
@settings(max_examples=7, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gs=graph_and_source())
def test_hypothesis_graphs(config, gs):
    # Seven drawn graphs per configuration, one test each, so that parallel workers share the
    # three minutes the 63 examples take.
    graph, source = gs
    check(graph, [source], deltas=(None, 1), configs=[config])


@pytest.mark.parametrize("path", shared_graph_files(), ids=lambda p: p.name)
def test_real_graphs(path):
    graph = sssp.load(path)
    sources = [
        int(s) for s in np.random.default_rng(sum(path.name.encode())).integers(0, graph.n, 2)
    ]
    check(
        graph,
        sources,
        configs=(CONFIGS[:3] if graph.n < 100_000 else CONFIGS[:1]) + CLUSTER_CONFIGS[:1],
    )
