"""GPU solvers against SciPy and the CPU versions, on a real CUDA device (marker ``gpu``).

Every loop mechanism (engine 2's persistent, graph and host loops, and the paper's loop, ``"legacy"``),
every algorithm, both variants and several launch configurations run on every graph. Every
solve poisons the device outputs first, so an element the kernels fail to write shows up as a
wrong distance or predecessor. Distances must equal SciPy's exactly; predecessor trees and
iteration counts must equal the CPU version's (same settled_at rule), and the tree is checked on
its own, edge by edge (each node's distance recomputed from its predecessor's).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu import solve_cpu
from sssp.cpu.reference import dijkstra
from sssp.verify import check_against, check_tree

try:
    from tests.gpu_common import need_gpu, shared_graph_files  # noqa: F401  (need_gpu: autouse)
    from tests.strategies import graph_and_source
except ImportError:  # pragma: no cover
    from gpu_common import need_gpu, shared_graph_files  # noqa: F401
    from strategies import graph_and_source

pytestmark = pytest.mark.gpu


ALGOS = list(
    itertools.product(
        ("crauser", "martin", "crauser-in", "crauser-inout"), ("successors", "predecessors")
    )
)
BLOCKS = (32, 96, 256, 1024)
L1S = ("N", "A", "S")
LANES = (1, 8, 32)
LOOPS = ("persistent", "graph", "host", "legacy")
LOCAL = (-1, 0, 100_000)  # default, no block-local phases, every phase block-local


def configs_for(key: int, count: int, algorithm: str = "crauser") -> list[LaunchConfig]:
    """``count`` configurations cycling through loop x block size x L1 x lanes x block-local
    limit, offset by ``key``, so the cross product is covered across the graphs of a test. The
    paper's loop has only Crauser OUT and Martín."""
    space = list(itertools.product(LOOPS, BLOCKS, L1S, LANES, LOCAL))
    out = []
    j = 0
    while len(out) < count:
        loop, bs, l1, lanes, local = space[(key * 7 + j * 11) % len(space)]
        other = space[(key * 7 + j * 11 + 5) % len(space)]
        j += 1
        if loop == "legacy" and algorithm not in ("crauser", "martin"):
            continue
        out.append(
            LaunchConfig(
                KernelConfig(bs, l1, lanes),
                KernelConfig(other[1], other[2]),
                KernelConfig(other[1], l1),
                loop=loop,
                blocks_per_sm=j % 3,
                local_limit=local,
            )
        )
    return out


def run_and_check(
    graph: sssp.Graph, sources, algorithm, variant, config, *, ref_cache=None, cpu=True
):
    """Solve from ``sources``; distances must equal SciPy's, the tree must be valid edge by edge,
    and (``cpu``) phases and predecessors must equal the CPU version's."""
    from sssp.gpu import make_solver

    with make_solver(graph, algorithm=algorithm, variant=variant, config=config) as solver:
        for s in sources:
            solver.poison()
            res = solver.solve(int(s))
            ref = (
                ref_cache[s]
                if ref_cache is not None and s in ref_cache
                else dijkstra(graph, int(s)).dist
            )
            if ref_cache is not None:
                ref_cache[s] = ref
            check_against(ref, res)
            check_tree(graph, res)
            if not cpu:
                continue
            key = (algorithm, variant, int(s))
            if ref_cache is not None and key in ref_cache:
                cpu = ref_cache[key]
            else:
                cpu = solve_cpu(graph, int(s), algorithm=algorithm, variant=variant)
                if ref_cache is not None:
                    ref_cache[key] = cpu
            assert res.iterations == cpu.iterations, (algorithm, variant, str(config), s)
            np.testing.assert_array_equal(
                res.pred, cpu.pred, err_msg=f"{algorithm} {variant} {config}"
            )
            assert 0.0 < res.stats["relax_active_share"] <= 1.0


PAPER_GRAPHS = {
    # name: (kind, size, degree)
    "random-2k-deg2": ("random", 2048, 2),
    "random-3k-deg20": ("random", 3072, 20),
    "random-3k-deg200": ("random", 3072, 200),
    "random-2k-deg1000": ("random", 2048, 1000),
    "random-98k-deg20": ("random", "98k", 20),
    "martin-1M": ("martin", "1M", None),
    "kronecker-s14": ("kronecker", 2**14, None),
}


@pytest.mark.parametrize("name", list(PAPER_GRAPHS))
def test_paper_graphs(name):
    index = list(PAPER_GRAPHS).index(name)
    kind, size, degree = PAPER_GRAPHS[name]
    extra = {} if degree is None else {"degree": degree}
    graph = sssp.generate(kind, size=size, seed=index + 1, **extra)
    rng = np.random.default_rng(index)
    sources = rng.integers(0, graph.n, size=2)
    refs: dict = {}
    big = graph.m > 5_000_000
    for algo_i, (algorithm, variant) in enumerate(ALGOS):
        count = 1 if big else 3
        for config in [LaunchConfig.default(), *configs_for(index * 8 + algo_i, count, algorithm)]:
            run_and_check(
                graph, sources[:1] if big else sources, algorithm, variant, config, ref_cache=refs
            )


def test_full_cross_product_small_graph():
    """Every loop x block size x L1 state x lanes, every algorithm and variant, on one graph."""
    graph = sssp.generate("random", size=1500, degree=20, seed=11)
    refs: dict = {}
    for loop, bs, l1, lanes in itertools.product(LOOPS, BLOCKS, L1S, LANES):
        kc = KernelConfig(bs, l1, lanes)
        cfg = LaunchConfig(kc, KernelConfig(bs, l1), KernelConfig(bs, l1), loop=loop)
        for algorithm, variant in ALGOS:
            if loop == "legacy" and algorithm not in ("crauser", "martin"):
                continue
            run_and_check(graph, [0, 777], algorithm, variant, cfg, ref_cache=refs)


@pytest.mark.parametrize("path", shared_graph_files(), ids=lambda p: p.name)
def test_real_graphs(path):
    graph = sssp.load(path)
    key = sum(path.name.encode())
    sources = np.random.default_rng(key).integers(0, graph.n, size=2)
    refs: dict = {}
    # Large high-diameter graphs (road networks) take the sequential CPU versions minutes: they
    # are checked against SciPy and the tree rule only, on fewer combinations.
    large = graph.n > 100_000
    algos = [("crauser", "successors"), ("crauser-inout", "successors")] if large else ALGOS
    for algo_i, (algorithm, variant) in enumerate(algos):
        for config in configs_for(key + algo_i, 1, algorithm):
            run_and_check(
                graph,
                sources[:1] if large else sources,
                algorithm,
                variant,
                config,
                ref_cache=refs,
                cpu=not large,
            )


@pytest.mark.smoke
def test_64bit_distances():
    """(n + 1) * max_weight overflows 32 bits: the runtime must switch to 64-bit distances, and
    to 64-bit weights when a weight does not fit in 32 bits."""
    rng = np.random.default_rng(3)
    n = 3000
    src = rng.integers(0, n, 20_000)
    dst = rng.integers(0, n, 20_000)
    w = rng.integers(1_000_000, 3_000_000_000, 20_000)
    g32w = sssp.Graph.from_edges(n, src, dst, w)
    w64 = w.copy()
    w64[::7] = 6_000_000_000
    g64w = sssp.Graph.from_edges(n, src, dst, w64)
    for graph, bits in ((g32w, 32), (g64w, 64)):
        from sssp.gpu import make_solver

        with make_solver(graph) as solver:
            assert solver.params.dist_bits == 64 and solver.params.weight_bits == bits
        for loop in LOOPS:
            run_and_check(graph, [0, 5], "crauser", "successors", LaunchConfig(loop=loop))
            run_and_check(graph, [1], "martin", "predecessors", LaunchConfig(loop=loop))
        for algorithm in ("crauser-in", "crauser-inout"):
            run_and_check(graph, [2], algorithm, "successors", configs_for(bits, 1, algorithm)[0])
        res = sssp.solve(graph, 0, backend="gpu")
        assert res.dist.max() > 2**32 - 1 or res.dist[res.reached].max() > 2**32 - 1


# One test per criterion and variant: all eight in one test took 480 s of one xdist worker.
@pytest.mark.parametrize("k", range(len(ALGOS)), ids=lambda k: "-".join(ALGOS[k]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gs=graph_and_source())
def test_hypothesis_graphs(k, gs):
    graph, source = gs
    algorithm, variant = ALGOS[k]
    run_and_check(graph, [source], algorithm, variant, configs_for(graph.n + k, 1, algorithm)[0])


@pytest.mark.smoke
@pytest.mark.parametrize("loop", LOOPS)
def test_source_without_out_edges(loop):
    graph = sssp.Graph.from_edges(4, np.array([0, 1]), np.array([1, 2]), np.array([3, 4]))
    res = sssp.solve(graph, 3, backend="gpu", config=LaunchConfig(loop=loop))
    assert res.dist[3] == 0 and np.all(res.dist[:3] == sssp.UNREACHABLE)
    assert res.iterations == 0 and np.all(res.pred == -1)


@pytest.mark.smoke
@pytest.mark.parametrize("loop", LOOPS)
def test_one_node(loop):
    graph = sssp.Graph.from_edges(1, np.array([0]), np.array([0]), np.array([5]))  # a self-loop
    res = sssp.solve(graph, 0, backend="gpu", config=LaunchConfig(loop=loop))
    assert res.dist.tolist() == [0] and res.pred.tolist() == [-1] and res.iterations == 0


def test_relax_bound_keeps_the_nodes_reached_in_its_step():
    """The relax bound applies only from the phase after settle saw every node reached. It was
    decided from the live reached count, so a thread that saw the count reach n during a relax
    step bounded by the carried maximum, which misses the nodes first reached in that step, and
    skipped their tying or improving candidates: on the H200 a mesh lost predecessor ties under
    load (persistent loop, many blocks, 32 lanes). Many sources, ties everywhere (weights 1..4),
    the phase where the last node is reached full of work: predecessors must equal the CPU's."""
    graph = sssp.generate("geometric", size=12_000, degree=14, seed=7, weight_range=(1, 4))
    cfg = LaunchConfig(
        KernelConfig(32, "N", 32),
        KernelConfig(32),
        KernelConfig(32),
        blocks_per_sm=0,
        local_limit=0,
    )
    sources = np.random.default_rng(7).integers(0, graph.n, size=12)
    refs: dict = {}
    for algorithm in ("crauser", "crauser-inout"):
        run_and_check(graph, sources, algorithm, "successors", cfg, ref_cache=refs)


def test_skewed_degrees_use_the_block_path():
    """A hub with far more edges than SSSP_BIG_DEGREE (walked by its whole block) and a star of
    such hubs: every loop and lanes setting agrees with SciPy and the CPU tree."""
    rng = np.random.default_rng(5)
    n = 20_000
    hubs = np.arange(8)
    src = np.concatenate([np.repeat(hubs, 5000), rng.integers(0, n, 40_000)])
    dst = np.concatenate([rng.integers(0, n, 8 * 5000), rng.integers(0, n, 40_000)])
    w = rng.integers(0, 50, src.size)
    graph = sssp.Graph.from_edges(n, src, dst, w)
    refs: dict = {}
    for loop, lanes in itertools.product(LOOPS[:3], (1, 32)):
        cfg = LaunchConfig(KernelConfig(256, "N", lanes), loop=loop)
        for algorithm in ("crauser", "crauser-inout"):
            run_and_check(graph, [0, 1, 100], algorithm, "successors", cfg, ref_cache=refs)


@pytest.mark.smoke
def test_rows_are_sorted_by_weight_where_the_bound_uses_them():
    """Engine 2 sorts the device copy of every row by (weight, target) once, so that Crauser's
    bounded phases stop at a node's first edge above the bound. The copy must hold each row's
    edges in exactly that order, the answers stay exact on every loop, and graphs it does not
    sort (a row longer than kernels.SORT_CAP, 64-bit weights, the pull variant) run as before."""
    import kernels
    from sssp.gpu import make_solver

    rng = np.random.default_rng(12)
    n = 3000
    src, dst = rng.integers(0, n, 60_000), rng.integers(0, n, 60_000)
    ties = sssp.Graph.from_edges(
        n, src, dst, rng.integers(0, 4, src.size)
    )  # zero weights, many ties
    wf = (rng.random(src.size) * 5).astype(np.float32)
    wf[::9] = -0.0  # non-negative, but its bits would sort last
    floats = sssp.Graph.from_edges(n, src, dst, wf)
    hub = np.zeros(kernels.SORT_CAP + 1, np.int64)
    long_row = sssp.Graph.from_edges(
        n,
        np.concatenate([src, hub]),
        np.concatenate([dst, rng.integers(0, n, hub.size)]),
        rng.integers(1, 100, src.size + hub.size),
    )
    big = sssp.Graph.from_edges(n, src, dst, rng.integers(1, 6_000_000_000, src.size))
    cases = (
        (sssp.generate("random", size=3072, degree=200, seed=4), True),
        (ties, True),
        (floats, True),
        (long_row, False),
        (big, False),
    )
    for graph, expected in cases:
        cfg = LaunchConfig(KernelConfig(256, "N", 32))
        with make_solver(graph, algorithm="crauser", config=cfg) as solver:
            assert solver.rows_sorted is expected
            if expected:
                idx = np.empty(graph.m, np.int32)
                wt = np.empty(graph.m, solver.weight_dtype)
                solver.cuda.memcpy_dtoh(idx, solver.d_indices)
                solver.cuda.memcpy_dtoh(wt, solver.d_weights)
                rows = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
                w = graph.weights + graph.weights.dtype.type(
                    0
                )  # -0.0 -> +0.0, as the sort stores it
                order = np.lexsort((graph.indices, w, rows))
                np.testing.assert_array_equal(idx, graph.indices[order])
                np.testing.assert_array_equal(
                    wt.view(np.uint32) if graph.is_float else wt,
                    w[order].view(np.uint32) if graph.is_float else w[order],
                )
        for loop in LOOPS[:3]:
            config = LaunchConfig(KernelConfig(256, "N", 32), loop=loop)
            if graph.is_float:
                res = sssp.solve(graph, 0, backend="gpu", config=config)
                np.testing.assert_array_equal(res.dist, dijkstra(graph, 0).dist)
                check_tree(graph, res)
            else:
                run_and_check(graph, [0, 5], "crauser", "successors", config)
                run_and_check(graph, [7], "crauser-inout", "successors", config)
                res = sssp.solve(graph, 0, backend="gpu", config=config)
            assert res.stats["rows_sorted"] is expected
    with make_solver(ties, variant="predecessors") as solver:
        assert not solver.rows_sorted


@pytest.mark.smoke
def test_real_valued_weights():
    """float32 and float64 weights: float64 distances equal to SciPy's, inf for unreachable
    nodes, and a valid tree (every predecessor edge tight)."""
    rng = np.random.default_rng(8)
    n = 5000
    src, dst = (
        rng.integers(0, n, 30_000),
        rng.integers(0, n - 10, 30_000),
    )  # the last 10 unreachable
    for dtype in (np.float32, np.float64):
        w = (rng.random(src.size) * 10).astype(dtype)
        w[::50] = 0.0
        graph = sssp.Graph.from_edges(n, src, dst, w)
        assert graph.is_float
        ref = dijkstra(graph, 3).dist  # SciPy on the lightest of parallel edges
        for loop in LOOPS[:3]:
            for algorithm in ("crauser", "crauser-in", "martin"):
                res = sssp.solve(
                    graph, 3, backend="gpu", algorithm=algorithm, config=LaunchConfig(loop=loop)
                )
                assert res.dist.dtype == np.float64
                np.testing.assert_array_equal(res.dist, ref)
                tight = res.pred >= 0
                v = np.flatnonzero(tight)
                u = res.pred[v]
                # each tree edge is an edge of the graph whose weight closes the distance exactly
                ok = [
                    np.any(
                        (graph.indices[graph.indptr[a] : graph.indptr[a + 1]] == b)
                        & (
                            res.dist[a]
                            + graph.weights[graph.indptr[a] : graph.indptr[a + 1]].astype(
                                np.float64
                            )
                            == res.dist[b]
                        )
                    )
                    for a, b in zip(u[:500], v[:500], strict=True)
                ]
                assert all(ok)
                assert np.isinf(res.dist[-10:]).all() and (res.pred[-10:] == -1).all()


def test_loops_agree_and_report_phase_cost():
    graph = sssp.generate("random", size=4096, degree=4, seed=2)
    results = {
        loop: sssp.solve(graph, 7, backend="gpu", config=LaunchConfig(loop=loop)) for loop in LOOPS
    }
    first = results["legacy"]
    for loop, res in results.items():
        np.testing.assert_array_equal(res.dist, first.dist)
        np.testing.assert_array_equal(res.pred, first.pred)
        assert res.iterations == first.iterations, loop
        if loop != "legacy":
            assert res.stats["loop"] == loop and res.stats["phase_us"] > 0


@pytest.mark.smoke
def test_solve_front_door_reports_config():
    graph = sssp.generate("random", size=2048, degree=20, seed=9)
    res = sssp.solve(graph, 0, backend="gpu")
    assert res.backend == "gpu" and res.config == LaunchConfig.default()
    assert res.config_source == sssp.ConfigSource.DEFAULT
    assert {"total", "loop"} <= set(res.timings)
    res = sssp.solve(graph, 0, backend="gpu", config=LaunchConfig.paper(), profile=True)
    assert {"relax", "min", "update", "tree", "total"} <= set(res.timings)
    explicit = LaunchConfig.uniform(128, "A")
    res = sssp.solve(graph, 0, backend="gpu", config=explicit)
    assert res.config == explicit and res.config_source == sssp.ConfigSource.EXPLICIT
    assert "PREFER_L1" in res.stats["l1_applied"]["relax"]


@pytest.mark.parametrize("lanes", (1, 2, 4, 32))
def test_block_local_phases_switching_with_the_grid(lanes):
    """The persistent loop hands phases between block 0 and the grid many times on these graphs
    (the work limit sits inside the range of per-phase work). A warp split at a block barrier once
    lost fringe entries here with 1 or 2 lanes, so several block sizes, sources and repeated
    solves are checked; every answer must be exact, predecessors included."""
    graphs = [
        sssp.generate("random", size=4096, degree=4, seed=2),
        sssp.generate("random", size=3072, degree=20, seed=2),
    ]
    for graph in graphs:
        sources = [int(s) for s in np.random.default_rng(0).integers(0, graph.n, 3)]
        cache: dict = {}
        for bs in (128, 256, 512):
            config = LaunchConfig(
                KernelConfig(bs, "N", lanes), KernelConfig(bs, "N"), KernelConfig(bs, "N")
            )
            for _ in range(3):
                run_and_check(graph, sources, "crauser", "successors", config, ref_cache=cache)
