"""Near-far (Δ-stepping) on the GPU against SciPy and the CPU reference (marker ``gpu``).

Distances must equal SciPy's exactly and predecessors the CPU reference's exactly (the tree rule
depends on the distances only, never on Δ or on the order of the relaxations). Several Δ (the
default rule, 1, a huge one, Bellman-Ford's ``inf``), block sizes, lanes and block-local limits
run on every graph, each solve after poisoning the device outputs, and the same solver solves
from several sources in turn so that state left over from a previous solve would show.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import kernels
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
    LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", fuse=2),
    LaunchConfig(KernelConfig(256, "N", 8), loop="cluster", cluster=16, fuse=2),
]
"""The cluster loop (kernels/sssp_cluster.cu): the fewest blocks that hold the graph, at least 4
blocks of 256 threads, and 16 blocks (beyond the portable cluster size); then fused (bands of
reverse Cuthill-McKee, local work inside the blocks) on the fewest blocks and on 16; then fused
across blocks (local work that hands targets to other blocks' queues) on the same two."""

SHORTCUT_CONFIGS = [
    replace(CONFIGS[0], shortcuts=8),
    replace(CONFIGS[2], shortcuts=16),
    replace(CLUSTER_CONFIGS[0], shortcuts=4),
    replace(CLUSTER_CONFIGS[2], shortcuts=32),
    replace(CLUSTER_CONFIGS[4], shortcuts=16),
]
"""Shortcut edges (``LaunchConfig.shortcuts``) on the persistent loop (default; whole warps with
block-local steps) and the cluster loop (fewest blocks, 16 blocks, fused on 16)."""

PHAST_CONFIGS = [
    LaunchConfig(loop="phast"),
    LaunchConfig(KernelConfig(1024, "N", 32), loop="phast", local_limit=0),
    LaunchConfig(KernelConfig(1024, "N", 4), loop="phast", local_limit=32768),
]
"""Near-far's answer by a contraction hierarchy's sweep (``sssp.gpu.phast``): block 0 sweeping
the top levels of up to 1 024 nodes (one pass each) a thread a node; none (every level a grid
step) with up to 32 lanes a node; and those of up to 32 768 (several passes a level, as far as
their distances fit its shared memory) with up to 4."""
PHAST_CORE_CONFIG = LaunchConfig(loop="phast", core=1024)
"""The sweep below a core table of up to 1 024 nodes (on these tests' tiny graphs every node is
in the core: the launch sweeps no level)."""


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
                    assert res.algorithm == "near-far"
                    if res.stats["loop"] == "phast":  # a step per level below the core
                        ph = res.stats["phast"]
                        assert res.iterations == ph["levels"] - ph["core_levels"]
                    else:
                        assert res.stats["buckets"] >= 1
                    results.append(res)
    return results


def grid_graph(side: int, seed: int, *, low: int = 1, unreached: int = 0, perm=None) -> sssp.Graph:
    """A side x side grid, both directions of each edge with one weight from ``low`` to 99
    (seeded), ``unreached`` more nodes without edges, node ids mapped through ``perm``."""
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    w = np.random.default_rng(seed).integers(low, 100, u.size)
    src, dst = np.concatenate([u, v]), np.concatenate([v, u])
    if perm is not None:
        src, dst = perm[src], perm[dst]
    return sssp.Graph.from_edges(side * side + unreached, src, dst, np.concatenate([w, w]))


def hub_graph(n: int, hubs: int, fan: int, extra: int, seed: int) -> sssp.Graph:
    """``hubs`` nodes of ``fan`` out-edges each plus ``extra`` random edges, weights 0-49."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([np.repeat(np.arange(hubs), fan), rng.integers(0, n, extra)])
    dst = np.concatenate([rng.integers(0, n, hubs * fan), rng.integers(0, n, extra)])
    return sssp.Graph.from_edges(n, src, dst, rng.integers(0, 50, src.size))


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
    graph = grid_graph(side, 4)
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
@pytest.mark.parametrize(
    "config",
    [*CONFIGS, *CLUSTER_CONFIGS, *SHORTCUT_CONFIGS, *PHAST_CONFIGS, PHAST_CORE_CONFIG],
    ids=str,
)
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
    grid = grid_graph(100, 14)
    results = check(grid, [0, 5050], deltas=(None, 30), configs=CLUSTER_CONFIGS, repeats=2)
    assert max(r.iterations for r in results) > 100
    wide = sssp.generate("random", size="98k", degree=4, seed=15)
    results = check(wide, [3], deltas=(float("inf"),), configs=CLUSTER_CONFIGS)
    assert max(r.stats["max_frontier"] for r in results) >= 2048  # some block's list hit the cap
    check(hub_graph(20_000, 8, 5000, 40_000, 16), [0, 1, 100], configs=CLUSTER_CONFIGS)


def test_fused_cluster_loop_runs_local_work():
    """On a grid the fused loop's bands keep most edges inside a block (0.95 at 16 blocks, above
    sssp.bands.FUSE_MIN_LOCALITY): local work carries the wave, so it needs fewer cluster steps
    than the loop without them, with the same answers. On a random graph the bands keep few edges
    local, so the same configuration runs unfused and says why."""
    side = 200
    perm = np.random.default_rng(19).permutation(side * side)  # ids that say nothing of the layout
    grid = grid_graph(side, 18, perm=perm)
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


@pytest.mark.smoke
def test_cluster_loop_fused_across_blocks():
    """Fused across blocks (fuse=2): a target of another block that falls below the threshold is
    relaxed in the same step by its owner, so a bucket takes one cluster step unless a list or a
    queue overflows. On a grid (bands) and a random graph (no bands: nodes v % C), with the
    default Δ, a tiny Δ (a bucket per distance) and an infinite one (one bucket: one step and the
    queues past their capacity), zero weights and unreachable nodes; distances equal SciPy's and
    predecessors the CPU reference's (check)."""
    side = 200  # bands keep 0.948 of the edges inside 16 blocks
    grid = grid_graph(side, 21, low=0, unreached=50)  # zero weights, 50 nodes no edge reaches
    across, fused = (
        LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", cluster=16, fuse=f) for f in (2, 1)
    )
    sources = [0, side * side // 2 + side // 2]
    runs = check(grid, sources, deltas=(None, 1, float("inf")), configs=[across], repeats=2)
    assert all(r.stats["cluster_fused_across_blocks"] and r.stats["local_nodes"] > 0 for r in runs)
    assert all(r.stats["fusion_gate"].endswith("in bands, fused across blocks") for r in runs)
    per_block = check(grid, sources, configs=[fused])
    assert max(r.iterations for r in runs[:4]) < min(r.iterations for r in per_block)
    for r in runs[:8]:  # default and unit Δ: a step per bucket (no queue overflows here)
        assert r.iterations <= r.stats["buckets"] + 1, (r.iterations, r.stats["buckets"])
    rand = sssp.generate("random", size=20_000, degree=3, seed=22)
    spread = check(rand, [0, 1], deltas=(None, 1, float("inf")), configs=[across])
    assert all(r.stats["cluster_fused_across_blocks"] for r in spread)
    assert all("nodes spread v % C" in r.stats["fusion_gate"] for r in spread)


@pytest.mark.smoke
def test_fused_across_blocks_on_the_grid(monkeypatch):
    """fuse=2 where no cluster holds the graph (forced here by a layout that never fits): near-far
    across the grid (sssp_nf_async), a grid barrier per bucket. Grids with zero weights and
    unreachable nodes, a random graph, hubs, a source without out-edges and one node, under the
    default, a unit and an infinite Δ (one bucket; the queue holds n entries a bucket, so the
    pushes past them take more buckets at the same threshold); distances equal SciPy's and
    predecessors the CPU reference's (check)."""
    import kernels

    monkeypatch.setattr(kernels, "cluster_layout", lambda *a, **k: None)
    across = LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", fuse=2)
    side = 150
    grid = grid_graph(side, 23, low=0, unreached=40)
    runs = check(grid, [0, side * side // 2], deltas=(None, 1, float("inf")), configs=[across])
    assert all(
        r.stats["grid_fused_across_blocks"] and r.stats["loop"] == "persistent" for r in runs
    )
    assert all(r.iterations <= r.stats["buckets"] + 1 for r in runs[:2])  # a step a bucket
    rand = sssp.generate("random", size=20_000, degree=3, seed=24)
    check(rand, [0, 7], deltas=(None, 1, float("inf")), configs=[across], repeats=2)
    check(hub_graph(20_000, 4, 3000, 30_000, 25), [0, 5], configs=[across])
    tiny = sssp.Graph.from_edges(4, np.array([0, 1]), np.array([1, 2]), np.array([3, 4]))
    res = sssp.solve(tiny, 3, backend="gpu", algorithm="near-far", config=across)
    assert res.dist[3] == 0 and np.all(res.dist[:3] == sssp.UNREACHABLE)
    assert res.stats["grid_fused_across_blocks"]
    one = sssp.Graph.from_edges(1, np.array([0]), np.array([0]), np.array([5]))
    res = sssp.solve(one, 0, backend="gpu", algorithm="near-far", config=across)
    assert res.dist.tolist() == [0] and res.pred.tolist() == [-1]


def test_fused_across_blocks_on_a_graph_past_the_cluster():
    """A road-like graph of 1.2 million nodes, past what a cluster's shared memory holds: fuse=2
    runs across the grid, with the same answers."""
    road = sssp.generate("road", size=1_200_000, seed=26)
    across = LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", fuse=2)
    runs = check(road, [3, 600_000], configs=[across])
    assert all(r.stats["grid_fused_across_blocks"] for r in runs)
    assert all("do not fit" in r.stats["cluster_fallback"] for r in runs)


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


@pytest.mark.parametrize("config", CONFIGS + CLUSTER_CONFIGS + PHAST_CONFIGS, ids=str)
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


def _grid(side: int, seed: int, low: int = 1) -> sssp.Graph:
    """A side x side grid with random weights in [low, 100) and ids that say nothing of it."""
    idx = np.arange(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    rng = np.random.default_rng(seed)
    w = rng.integers(low, 100, u.size)
    perm = rng.permutation(side * side)
    return sssp.Graph.from_edges(
        side * side,
        perm[np.concatenate([u, v])],
        perm[np.concatenate([v, u])],
        np.concatenate([w, w]),
    )


@pytest.mark.smoke
def test_shortcuts_same_answers_in_fewer_steps():
    """A grid and a road-like network: with shortcuts the distances equal SciPy's and the tree
    the CPU reference's on the graph's own edges (check), in fewer steps than without."""
    for graph in (_grid(90, 31), sssp.generate("road", size=20_000, seed=32)):
        sources = [0, graph.n // 2 + 3]
        for delta in (None, 30):
            base = check(graph, sources, deltas=(delta,), configs=CONFIGS[:1])
            runs = check(graph, sources, deltas=(delta,), configs=SHORTCUT_CONFIGS, repeats=2)
            for r in runs:
                cut = r.stats["shortcuts"]
                assert cut["rho"] in (4, 8, 16, 32) and cut["edges"] > 0
                assert "shortcut_fallback" not in r.stats
            steps = [r.iterations for r in runs if r.stats["loop"] == "persistent"]
            assert max(steps) < min(r.iterations for r in base)  # 8 and 16 a node: ~2-3x fewer


@pytest.mark.smoke
@pytest.mark.parametrize("config", SHORTCUT_CONFIGS, ids=str)
def test_shortcuts_zero_weights_and_unreachable(config):
    """Zero weights (nodes left to the host's level rule: a shortcut of weight 0 must not become
    a parent) and unreachable nodes; sinks and one node: test_source_without_out_edges..."""
    rng = np.random.default_rng(33)
    n = 4000
    src, dst = rng.integers(0, n - 50, 16_000), rng.integers(0, n - 50, 16_000)
    zero = sssp.Graph.from_edges(n, src, dst, rng.integers(0, 4, src.size))  # a quarter zero
    results = check(zero, [0, 17], deltas=(None, 1), configs=[config])
    assert any(r.stats["flat_parents_on_host"] > 0 for r in results)
    assert all((r.dist[-50:] == sssp.UNREACHABLE).all() for r in results)


def test_shortcuts_at_the_size_and_width_limits():
    """Shortcuts that push a graph past the cluster's shared memory (its distances stay, its
    edges go to global memory); weights whose shortcuts would pass 32-bit distances (capped:
    the distances stay 32-bit); 64-bit distances (no cap)."""
    from sssp.gpu.engine import EngineSolver

    graph = _grid(150, 34)  # resident on 8 blocks; with 32 shortcuts a node (727k edges) not
    fits = EngineSolver(graph, algorithm="near-far", config=CLUSTER_CONFIGS[0])
    with fits:
        assert fits.cluster_mb > 0  # the graph alone is resident
    big = replace(CLUSTER_CONFIGS[0], shortcuts=32)
    for r in check(graph, [0, 1000], configs=[big]):
        assert r.stats["loop"] == "cluster" and not r.stats["cluster_resident"]
    rng = np.random.default_rng(35)
    n = 3000
    src, dst = rng.integers(0, n, 12_000), rng.integers(0, n, 12_000)
    heavy = sssp.Graph.from_edges(n, src, dst, rng.integers(1, 2**32 // (n + 1) - 1, src.size))
    for r in check(heavy, [0, 9], configs=[SHORTCUT_CONFIGS[0], SHORTCUT_CONFIGS[2]]):
        assert r.stats["dist_bits"] == 32
        assert (n + 1) * r.stats["shortcuts"]["max_weight"] < kernels.UINT32_INF
    wide = sssp.Graph.from_edges(n, src, dst, rng.integers(10**6, 3 * 10**9, src.size))
    for r in check(wide, [0, 9], configs=SHORTCUT_CONFIGS[:2]):
        assert r.stats["dist_bits"] == 64 and r.stats["shortcuts"]["edges"] > 0


def test_shortcuts_not_taken_say_why():
    """Real weights and Crauser's algorithm run without shortcuts, and the result says why."""
    rng = np.random.default_rng(36)
    n = 2000
    src, dst = rng.integers(0, n, 8000), rng.integers(0, n, 8000)
    real = sssp.Graph.from_edges(n, src, dst, (rng.random(src.size) * 10).astype(np.float32))
    for r in check(real, [0], configs=SHORTCUT_CONFIGS[:1]):
        assert "shortcuts" not in r.stats and "real weights" in r.stats["shortcut_fallback"]
    graph = sssp.Graph.from_edges(n, src, dst, rng.integers(1, 50, src.size))
    res = sssp.solve(graph, 0, backend="gpu", algorithm="crauser", config=SHORTCUT_CONFIGS[0])
    check_against(dijkstra(graph, 0).dist, res)
    assert "near-far only" in res.stats["shortcut_fallback"]


@pytest.mark.smoke
def test_phast_same_answers_in_a_step_per_level():
    """A grid and a road-like network: the sweep's distances equal SciPy's and its tree the
    CPU reference's (check), from several sources in turn on one solver, in one step per level
    of the hierarchy: a third of near-far's steps or fewer (46 against 144 on the grid)."""
    for graph in (_grid(90, 41), sssp.generate("road", size=20_000, seed=42)):
        sources = [0, graph.n // 2 + 3, graph.n - 1]
        base = check(graph, sources, configs=CONFIGS[:1])
        runs = check(graph, sources, configs=PHAST_CONFIGS, repeats=2)
        for r in runs:
            ph = r.stats["phast"]
            assert r.stats["loop"] == "phast" and "loop_fallback" not in r.stats
            assert 0 <= ph["top_levels"] <= ph["levels"] == r.iterations
            assert (ph["top_levels"] == 0) == (r.config.local_limit == 0)
            assert (ph["staged_levels"] > 0) == (ph["top_levels"] > 0)  # staged by default
            assert 0 < r.stats["upward_settled"] < graph.n
        assert max(r.iterations for r in runs) * 3 < min(r.iterations for r in base)


@pytest.mark.smoke
def test_phast_zero_weights_unreachable_and_widths():
    """Zero weights (the host's level rule completes the tree), unreachable nodes, 64-bit
    distances; real weights run the persistent loop and say why."""
    _, _, zero, wide = _phast_graphs()  # a quarter zero weights; weights past 32 bits
    results = check(zero, [0, 17], configs=PHAST_CONFIGS)
    assert any(r.stats["flat_parents_on_host"] > 0 for r in results)
    assert all((r.dist[-50:] == sssp.UNREACHABLE).all() for r in results)
    for r in check(wide, [0, 9], configs=PHAST_CONFIGS):
        assert r.stats["dist_bits"] == 64 and r.stats["loop"] == "phast"
    rng = np.random.default_rng(43)
    src, dst = rng.integers(0, 1950, 8_000), rng.integers(0, 1950, 8_000)
    real = sssp.Graph.from_edges(2000, src, dst, (rng.random(src.size) * 10).astype(np.float32))
    for r in check(real, [0], configs=PHAST_CONFIGS):
        assert r.stats["loop"] == "persistent" and "integer weights" in r.stats["loop_fallback"]


@pytest.mark.smoke
@pytest.mark.parametrize("pull", [True, False])
def test_phast_tree_in_the_result_pass_or_the_tree_pass(monkeypatch, pull):
    """The result pass finds each node's predecessor from the reverse graph's CSR (directed
    graphs with a quarter zero weights, whose flat parents the host completes, unreachable
    nodes, 64-bit distances, a road-like network), or, past ``PULL_TREE_MAX_IN_DEGREE``
    incoming edges at a node (here 0), the tree pass does: every tree the CPU reference's, edge
    by edge; a sink source and a graph of one node have none."""
    from sssp.gpu.engine import EngineSolver

    monkeypatch.setattr(EngineSolver, "RESULT_PASS_TREE", True)
    if not pull:
        monkeypatch.setattr(EngineSolver, "PULL_TREE_MAX_IN_DEGREE", 0)
    want = "result pass" if pull else "tree pass"
    _, road, zero, wide = _phast_graphs()
    flat = 0
    for graph, sources in ((zero, [0, 17]), (wide, [0, 9]), (road, [0, 19_999])):
        for r in check(graph, sources, configs=PHAST_CONFIGS[:2]):
            assert r.stats["loop"] == "phast" and r.stats["tree"] == want
            flat += r.stats["flat_parents_on_host"]
    assert flat > 0

    def tree_where(sv) -> None:
        assert sv._gpu._static_stats()["tree"] == ("result pass" if pull else "tree pass")

    _check_sink_and_one_node(PHAST_CONFIGS[:1], tree_where)


def _check_sink_and_one_node(configs, check_solver=None) -> None:
    """A source without out-edges and a graph of one node under each of ``configs``: only the
    source reached, no predecessor; ``check_solver(solver)`` first, where given."""
    sink = sssp.Graph.from_edges(4, np.array([0, 1]), np.array([1, 2]), np.array([3, 4]))
    one = sssp.Graph.from_edges(1, np.array([0]), np.array([0]), np.array([5]))
    for config in configs:
        for g, s, dist in ((sink, 3, None), (one, 0, [0])):
            with sssp.Solver(g, backend="gpu", algorithm="near-far", config=config) as sv:
                if check_solver is not None:
                    check_solver(sv)
                res = sv.solve(s)
            if dist is None:
                assert res.dist[3] == 0 and np.all(res.dist[:3] == sssp.UNREACHABLE)
            else:
                assert res.dist.tolist() == dist
            assert np.all(res.pred == -1)


@functools.cache
def _phast_graphs() -> tuple[sssp.Graph, ...]:
    """A grid, a road-like network, and a random graph of 2 000 nodes (its last 50
    unreachable) with a quarter zero weights and with weights that need 64-bit distances: the
    same four for every phast test, so a machine's hierarchy cache builds each once. A random
    graph's hierarchy is the dear part (this project's 2-core host: 1.8 and 11 s at 2 000 nodes,
    15 and 98 s at 4 000, where a fresh GPU machine's workers each built their own per test)."""
    rng = np.random.default_rng(41)
    n = 2000
    src, dst = rng.integers(0, n - 50, 8_000), rng.integers(0, n - 50, 8_000)
    zero = sssp.Graph.from_edges(n, src, dst, rng.integers(0, 4, src.size))
    wide = sssp.Graph.from_edges(n, src, dst, rng.integers(10**6, 3 * 10**9, src.size))
    return _grid(90, 41), sssp.generate("road", size=20_000, seed=42), zero, wide


def _phast_many_then_one(config: LaunchConfig):
    """On the road-like phast test graph under ``config``: many sources with trees (each row
    SciPy's distances and the reference's tree), then one more solve on the same solver (its
    answer and tree checked). Returns the solver's phast loop and that last result."""
    graph = _phast_graphs()[1]
    with sssp.Solver(graph, backend="gpu", algorithm="near-far", config=config) as sv:
        sources = [5, 6, 900, 19_999]
        rows = sv.solve_many(sources, return_predecessors=True)
        for i, s in enumerate(sources):
            np.testing.assert_array_equal(rows.dist[i], dijkstra(graph, s).dist)
            np.testing.assert_array_equal(rows.pred[i], near_far(graph, s).pred)
        one_more = sv.solve(7)
        check_against(dijkstra(graph, 7).dist, one_more)
        check_tree(graph, one_more)
        return sv._gpu._phast, one_more


@pytest.mark.smoke
@pytest.mark.parametrize("nodes", [64, 4096])
def test_phast_core_table_same_answers(nodes):
    """The core's distances from the host's table (``LaunchConfig.core``: the top levels of
    at most 64 nodes, or of 4 096, all of the grid and of both random graphs, so the device
    sweeps no level there and every source is in the core): the launch sweeps the levels below
    the core with the core's distances as seeds. The same answers and trees on a grid, a
    road-like network, zero weights with unreachable nodes and 64-bit distances, with block 0's
    top levels at 1 lane, the widest top at 4 and none (every level below the core a grid step)
    at 32, in the device's levels: the hierarchy's less the core's."""
    configs = [
        LaunchConfig(KernelConfig(1024, "N", lanes), loop="phast", local_limit=limit, core=nodes)
        for lanes, limit in ((1, -1), (4, 32768), (32, 0))
    ]
    for graph in _phast_graphs():
        runs = check(graph, [0, 17, graph.n - 1], configs=configs, repeats=2)
        for r in runs:
            ph = r.stats["phast"]
            assert r.stats["loop"] == "phast" and 0 < ph["core_nodes"] <= nodes
            assert r.iterations == ph["levels"] - ph["core_levels"]
            assert (ph["core_levels"] == ph["levels"]) == (graph.n <= nodes)


@pytest.mark.smoke
@pytest.mark.parametrize("early", [True, False])
def test_phast_early_launch_same_answers(monkeypatch, early):
    """The sweep launched before the host's upward search, its seeds written into mapped host
    memory after it (``PhastSweep.early_launch``): the same answers and trees on a grid, a
    road-like network, zero weights with unreachable nodes and 64-bit distances, without a
    core and with one, from a source without out-edges and on one node, and a single solve
    after many sources (which copy their seeds). Off (the seeds copied before the launch, as
    on a device that cannot map host memory): the same."""
    import sssp.gpu.phast

    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "early_launch", early)
    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "device_search", False)  # the host searches
    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "labels", False)
    configs = [PHAST_CONFIGS[0], replace(PHAST_CONFIGS[2], core=512)]
    for graph in _phast_graphs():
        sources = [0, 17, graph.n - 1]
        for r in check(graph, sources, configs=configs, repeats=2):
            assert r.stats["loop"] == "phast"

    def mapped(sv) -> None:
        assert (sv._gpu._phast._flag is not None) == early

    _check_sink_and_one_node(configs, mapped)
    graph = _phast_graphs()[1]
    with sssp.Solver(graph, backend="gpu", algorithm="near-far", config=configs[1]) as sv:
        assert (sv._gpu._phast._flag is not None) == early  # the device maps host memory
        rows = sv.solve_many([5, 6], return_predecessors=True)
        one = sv.solve(7)
        for i, s in enumerate((5, 6)):
            np.testing.assert_array_equal(rows.dist[i], dijkstra(graph, s).dist)
        check_against(dijkstra(graph, 7).dist, one)
        check_tree(graph, one)


@pytest.mark.smoke
@pytest.mark.parametrize("nodes", [64, 512, 4096])
def test_phast_device_search_same_answers(monkeypatch, nodes):
    """The sweep's block 0 searching upward itself (``PhastSweep.device_search``, under a
    core): a core of 64 nodes (a long climb), of 512 (the entries merged through the
    table on the device), and one of 4 096
    (all of the grid and of both random graphs: every source in the core, its table row). The
    same answers and trees on a grid, a road-like network, zero weights with unreachable nodes
    (a source among them) and 64-bit distances, at 1 lane with the top in block 0 and at 32
    with none; from a source without out-edges and on one node; many sources with trees; the
    search's words put back each solve (a second round on the same solver)."""
    import sssp.gpu.phast

    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "device_search", True)
    configs = [replace(PHAST_CONFIGS[0], core=nodes), replace(PHAST_CONFIGS[1], core=nodes)]
    for graph in _phast_graphs():
        sources = [0, 17, graph.n // 2 + 1, graph.n - 1]
        for r in check(graph, sources, configs=configs, repeats=2):
            ph = r.stats["phast"]
            assert r.stats["loop"] == "phast" and ph["device_search"]
            assert (
                r.stats["upward_settled"] >= 0 and r.iterations == ph["levels"] - ph["core_levels"]
            )
    _check_sink_and_one_node(configs)
    _, one_more = _phast_many_then_one(configs[0])
    assert one_more.stats["upward_settled"] > 0


@pytest.mark.smoke
@pytest.mark.parametrize("labels", [True, False])
def test_phast_widest_core_with_levels_below_it_same_answers(monkeypatch, labels):
    """The widest core table a configuration allows (``CORE_NODES_MAX``, the tuner's first
    phast point) on graphs larger than it, so levels remain below the core: the road-like test
    graph with its own weights and with weights that need 64-bit distances (the table's rows
    and block 0's top distances twice as wide), a label's entries merged through the table
    (``labels``) or the host's search through it. The same answers and trees at 1 lane with
    the top in block 0 and at 32 with none."""
    import sssp.gpu.phast
    from sssp.config import CORE_NODES_MAX

    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "labels", labels)
    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "device_search", False)
    road = _phast_graphs()[1]
    src, dst, _ = road.edges()
    rng = np.random.default_rng(43)
    heavy = sssp.Graph.from_edges(road.n, src, dst, rng.integers(10**6, 3 * 10**9, src.size))
    configs = [replace(c, core=CORE_NODES_MAX) for c in PHAST_CONFIGS[:2]]
    for graph in (road, heavy):
        for r in check(graph, [0, 17, graph.n // 2 + 1, graph.n - 1], configs=configs):
            ph = r.stats["phast"]
            assert r.stats["loop"] == "phast" and ph["labels"] == labels
            assert 0 < ph["core_nodes"] <= CORE_NODES_MAX < graph.n
            assert 0 < r.iterations == ph["levels"] - ph["core_levels"]


@pytest.mark.smoke
@pytest.mark.parametrize("nodes", [0, 512, 4096])
def test_phast_labels_same_answers(monkeypatch, nodes):
    """Every position's upward search kept on the device (``PhastSweep.labels``): a solve
    launches the sweep from its source's label, no search and no seeds sent. Without a core
    (every label climbs to the top), under a core of 512 nodes (the labels' entries merged
    through the table on the device) and of 4 096 (all of the grid and of both random graphs:
    every source in the core, its one entry). The same answers and trees on a grid, a
    road-like network, zero weights with unreachable nodes (a source among them) and 64-bit
    distances, at 1 lane with the top in block 0 and at 32 with none; from a source without
    out-edges and on one node; many sources with trees, then a single solve."""
    import sssp.gpu.phast

    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "labels", True)
    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "device_search", False)
    configs = [replace(PHAST_CONFIGS[0], core=nodes), replace(PHAST_CONFIGS[1], core=nodes)]
    for graph in _phast_graphs():
        sources = [0, 17, graph.n // 2 + 1, graph.n - 1]
        for r in check(graph, sources, configs=configs, repeats=2):
            ph = r.stats["phast"]
            assert r.stats["loop"] == "phast" and ph["labels"] and ph["label_items"] > 0
            assert r.iterations == ph["levels"] - ph["core_levels"]

    def labelled(sv) -> None:
        assert sv._gpu._phast._labels is not None

    _check_sink_and_one_node(configs, labelled)
    ph, one_more = _phast_many_then_one(configs[0])
    below = ph.hierarchy.position[7] >= ph.core.nodes  # else its label is itself, no seed
    assert (one_more.stats["upward_settled"] > 0) == below


@pytest.mark.smoke
def test_phast_unstaged_edges_same_answers(monkeypatch):
    """Block 0 reading its top levels' in-edges from global memory (``PhastSweep.stage_edges``
    off; the other tests stage them, the default): the same answers on a grid, a road-like
    network, zero weights with unreachable nodes and 64-bit distances, at 1, 4 and 32 lanes a
    node."""
    import sssp.gpu.phast

    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "stage_edges", False)
    for graph in _phast_graphs():
        sources = [0, 17, graph.n - 1]
        lanes32 = LaunchConfig(KernelConfig(1024, "N", 32), loop="phast")
        configs = [PHAST_CONFIGS[0], PHAST_CONFIGS[2], lanes32]
        runs = check(graph, sources, configs=configs, repeats=2)
        for r in runs:
            ph = r.stats["phast"]
            assert r.stats["loop"] == "phast" and ph["staged_levels"] == 0 < ph["top_levels"]


@pytest.mark.parametrize("top", ["none", "all"])
def test_phast_top_levels_none_and_all(monkeypatch, top):
    """Every level swept by the grid (no top levels in block 0), and every level in block 0
    (no grid step at all): the same answers."""
    import sssp.gpu.phast

    def rule(sizes, dist_bytes, smem_bytes, block=kernels.PHAST_BLOCK):
        if top == "none":
            return 0
        assert sum(sizes) * dist_bytes <= smem_bytes  # levels wider than a block loop in it
        return len(sizes)

    monkeypatch.setattr(sssp.gpu.phast.kernels, "phast_top_levels", rule)
    graph = _grid(60, 44)  # 3 600 nodes: every level fits block 0's shared memory
    for r in check(graph, [0, 1799, 3599], configs=PHAST_CONFIGS, repeats=2):
        ph = r.stats["phast"]
        assert ph["top_levels"] == (0 if top == "none" else ph["levels"])


@pytest.mark.smoke
@pytest.mark.parametrize("nap", [0, 4096])
def test_phast_naps_and_the_generation_wrap(monkeypatch, nap):
    """The grid's threads poll their tails without a nap, or nap up to 4 us: the same answers.
    A solve whose generation number wraps past 2^32 - 1 clears every stamp first (a stamp left
    by an earlier solve would otherwise read as published in this one): the solves before and
    after it are right, with 32- and 64-bit distances, and with every level a grid level."""
    import sssp.gpu.phast
    from sssp.gpu import make_solver

    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "nap_ns", nap)
    road = sssp.generate("road", size=20_000, seed=47)
    rng = np.random.default_rng(47)
    src, dst, _ = road.edges()
    wide = sssp.Graph.from_edges(road.n, src, dst, rng.integers(10**6, 3 * 10**9, src.size))
    for graph in (road, wide):
        sources = [0, 4321, graph.n - 1, 77]
        refs = {s: dijkstra(graph, s).dist for s in sources}
        for config in PHAST_CONFIGS[:2]:
            with make_solver(graph, algorithm="near-far", config=config) as solver:
                ph = solver._phast
                assert ph is not None and ph.solver.config.loop == "phast"
                solver.solve(sources[0])  # stamps of a generation the wrap must clear
                ph.gen = 2**32 - 3
                for s in sources:  # generations 2^32 - 2, 2^32 - 1, then 1 (cleared), 2
                    solver.poison()
                    res = solver.solve(s)
                    check_against(refs[s], res)
                    check_tree(graph, res)
                assert ph.gen == 2
                assert (res.stats["dist_bits"] == 64) == (graph is wide)


@pytest.mark.smoke
def test_a_tuned_phast_pick_takes_over_after_its_background_build(monkeypatch, tmp_path):
    """``Solver(tuned=True)`` whose record picks the phast loop, the hierarchy not cached: the
    fallback answers at once while a real background process builds the hierarchy; the first
    solve after the cache file appears runs the phast loop. Every answer equals SciPy's."""
    import time

    import sssp.hierarchy
    import sssp.tuned
    from sssp.config import ConfigSource
    from sssp.tuned import TunedChoice, TunedFallback

    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path))
    fallback = TunedFallback(CONFIGS[0], "near-far", 1.0, None)

    class Provider:
        def lookup(self, query):
            return TunedChoice(
                PHAST_CONFIGS[0], ConfigSource.TUNED_EXACT, "near-far", 1.0, "", None, fallback
            )

        def state(self, db):
            return None

    provider = Provider()
    sssp.tuned.register_provider(provider)
    try:
        graph = sssp.generate("road", size=20_000, seed=48)
        with sssp.Solver(graph, backend="gpu", tuned=True) as sv:
            r = sv.solve(11)
            assert r.stats["loop"] != "phast" and "background" in r.stats["config_detail"]
            check_against(dijkstra(graph, 11).dist, r)
            path = sssp.hierarchy.cache_path(graph)
            deadline = time.monotonic() + 240
            while not path.exists() and time.monotonic() < deadline:  # renamed into place
                time.sleep(0.2)
            r = sv.solve(12)
            assert r.stats["loop"] == "phast", r.stats["config_detail"]
            assert "built in the background" in r.stats["config_detail"]
            check_against(dijkstra(graph, 12).dist, r)
            check_tree(graph, r)
    finally:
        sssp.tuned.unregister_provider(provider)


@pytest.mark.smoke
def test_a_low_diameter_graph_with_a_cached_hierarchy_of_few_levels_runs_phast(
    monkeypatch, tmp_path
):
    """A low-diameter graph whose own record picks near-far, its hierarchy in the cache with
    fewer levels below the high-diameter record's core than near-far takes steps: the tuned
    solver runs the phast pick (``sssp.tuned._fewer_levels``), and every distance equals
    SciPy's, every tree edge checks; under a core of no nodes near-far runs, as exactly."""
    from dataclasses import replace

    import sssp.hierarchy
    import sssp.tuned
    from sssp.classes import GraphClass
    from sssp.config import ConfigSource
    from sssp.tuned import TunedChoice, TunedFallback

    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path))
    fallback = TunedFallback(CONFIGS[0], "near-far", 1.0, None)

    class Provider:
        core = 256

        def lookup(self, query):
            if query.graph_class.diameter == "lowdiam":
                return TunedChoice(
                    CONFIGS[0], ConfigSource.TUNED_EXACT, "near-far", 1.0, "", query.graph_class
                )
            config = replace(PHAST_CONFIGS[0], core=self.core)
            return TunedChoice(
                config, ConfigSource.TUNED_NEAREST, "near-far", 1.0, "",
                GraphClass("24k", "deg2", "highdiam"), fallback,
            )  # fmt: skip

        def state(self, db):
            return None

    provider = Provider()
    sssp.tuned.register_provider(provider)
    try:
        for wide in (False, True):
            graph = sssp.generate("random", size=2000, degree=2, seed=3)
            if wide:  # 64-bit distances
                src, dst, w = graph.edges()
                graph = sssp.Graph.from_edges(graph.n, src, dst, w.astype(np.int64) << 26)
            assert graph.graph_class().diameter == "lowdiam"
            hierarchy, _ = sssp.hierarchy.hierarchy_for(graph)
            assert hierarchy.levels_below(256) < 10 < hierarchy.levels
            for core, loop in ((256, "phast"), (0, CONFIGS[0].loop)):
                provider.core = core
                with sssp.Solver(graph, backend="gpu", tuned=True) as sv:
                    assert sv.config.loop == loop, sv.config_detail
                    assert "levels below a core of" in sv.config_detail
                    for s in (0, 999, graph.n - 1):
                        r = sv.solve(s)
                        assert r.stats["loop"] == loop
                        check_against(dijkstra(graph, s).dist, r)
                        check_tree(graph, r)
    finally:
        sssp.tuned.unregister_provider(provider)


def test_phast_many_sources():
    """Many sources on a PHAST solver: without the trees the rows run on the batch kernel (near-far
    on the solver's Δ, as on every loop), with them one sweep after another; every row equals
    SciPy's, and a single sweep after the batch on the same solver too."""
    graph = sssp.generate("road", size=5000, seed=45)
    sources = [0, 10, 2500, 4999, 10]
    with sssp.Solver(graph, backend="gpu", algorithm="near-far", config=PHAST_CONFIGS[0]) as sv:
        for trees in (False, True):
            r = sv.solve_many(sources, return_predecessors=trees)
            assert ("batch kernel" in r.stats["batch"]) != trees, r.stats["batch"]
            for i, s in enumerate(sources):
                np.testing.assert_array_equal(r.dist[i], dijkstra(graph, s).dist)
                if trees:
                    np.testing.assert_array_equal(r.pred[i], near_far(graph, s).pred)
        one = sv.solve(2500)
        assert one.stats["loop"] == "phast"
        check_against(dijkstra(graph, 2500).dist, one)


def test_phast_many_sources_while_the_device_lags(monkeypatch):
    """Sweeps with trees queued one after another on a graph whose sweep, tree and result
    passes take the device longer than the host's search: the host writes the next source's
    seeds while earlier copies still wait in the stream (each into a buffer whose copy has
    run), and every row equals SciPy's, every tree the reference's."""
    import sssp.gpu.phast

    monkeypatch.setattr(sssp.gpu.phast.PhastSweep, "labels", False)  # the host searches
    graph = sssp.generate("road", size=120_000, seed=48)
    rng = np.random.default_rng(48)
    sources = [int(s) for s in rng.choice(graph.n, 12, replace=False)]
    with sssp.Solver(graph, backend="gpu", algorithm="near-far", config=PHAST_CONFIGS[0]) as sv:
        r = sv.solve_many(sources, return_predecessors=True)
        assert "batch kernel" not in r.stats["batch"]
        for i, s in enumerate(sources):
            np.testing.assert_array_equal(r.dist[i], dijkstra(graph, s).dist)
            np.testing.assert_array_equal(r.pred[i], near_far(graph, s).pred)
