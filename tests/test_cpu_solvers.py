"""CPU solvers: SciPy's Dijkstra and the sequential Martín / Crauser versions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sssp import UNREACHABLE, Graph, InvalidGraphError, InvalidTypeError, SSSPError
from sssp.cpu import UNSETTLED, crauser, dijkstra, martin, parallel_dijkstra, solve_cpu
from sssp.verify import check_against, check_tree

try:  # tests/ as a package (tests/__init__.py) or as a rootdir-relative path
    from tests.strategies import graph_and_source, graphs
except ImportError:  # pytest's default "prepend" import mode puts tests/ itself on sys.path
    from strategies import graph_and_source, graphs  # type: ignore[no-redef]

INF = UNREACHABLE
X = -1  # no predecessor
PARALLEL = [(a, v) for a in ("martin", "crauser") for v in ("successors", "predecessors")]
ALL = [("dijkstra", "successors"), *PARALLEL]
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def g_(n: int, edges: list[tuple[int, int, int]]) -> Graph:
    src, dst, w = zip(*edges, strict=True) if edges else ((), (), ())
    return Graph.from_edges(
        n, np.asarray(src, np.int64), np.asarray(dst, np.int64), np.asarray(w, np.int64)
    )


def simulate(graph: Graph, s: int, criterion: str) -> tuple[list[int], list[int], int]:
    """A deliberately naive pure-Python transcription of the shared semantics
    (see :mod:`sssp.cpu.parallel`), independent of the compiled code."""
    n = graph.n
    src, dst, w = (a.tolist() for a in graph.edges())
    edges = list(zip(src, dst, w, strict=True))
    omega = [INF] * n
    for u, _, wt in edges:
        omega[u] = min(omega[u], wt)
    dist, at = [INF] * n, [UNSETTLED] * n
    dist[s], at[s] = 0, 0
    i = 1
    while True:
        for u, v, wt in edges:
            if at[u] == i - 1 and at[v] == UNSETTLED:
                dist[v] = min(dist[v], dist[u] + wt)
        terms = [
            dist[v] + omega[v]
            if criterion == "crauser" and omega[v] != INF
            else (INF if criterion == "crauser" else dist[v])
            for v in range(n)
            if at[v] == UNSETTLED and dist[v] != INF
        ]
        delta = min(terms, default=INF)
        if delta == INF:
            break
        for v in range(n):
            if at[v] == UNSETTLED and (
                dist[v] <= delta if criterion == "crauser" else dist[v] == delta
            ):
                at[v] = i
        i += 1
    pred = [X] * n
    for v in range(n):
        if v != s and dist[v] != INF:
            pred[v] = min(
                u for u, vv, wt in edges
                if vv == v and dist[u] != INF and dist[u] + wt == dist[v] and at[u] < at[v]
            )  # fmt: skip
    return dist, pred, i - 1


# -- hand-solved graphs ---------------------------------------------------------------------------
# 0 -> 1 (1), 0 -> 2 (2), 0 -> 3 (3), 1 -> 4 (5), 2 -> 4 (5), 3 -> 4 (1); ω = [1, 5, 5, 1, ∞].
# Crauser, i=1: dist 1..3 = 1, 2, 3; Δ = min(1+5, 2+5, 3+1) = 4 settles 1, 2, 3.
#          i=2: dist[4] = min(6, 7, 4) = 4; node 4 is a sink (ω = ∞), so Δ = ∞: 1 iteration.
# Martín settles one distance per iteration: {1}, {2}, {3}, {4}: 4 iterations.
FAN = g_(5, [(0, 1, 1), (0, 2, 2), (0, 3, 3), (1, 4, 5), (2, 4, 5), (3, 4, 1)])
FAN_DIST = [0, 1, 2, 3, 4]
FAN_PRED = [X, 0, 0, 0, 3]

# Zero-weight 2-cycle 1 <-> 2 reached by zero edges from 0; 3 reached from both at cost 2.
# Crauser: i=1 Δ = 0 settles 1 and 2; i=2 relaxes 3 (a sink): stop, 1 iteration.
# Martín: i=1 settles {1, 2}, i=2 settles {3}: 2 iterations.
# pred[1]: 0 (settled 0 < 1) - not 2, which was settled in the same iteration; pred[3] = 1,
# the smallest of 1 and 2.
ZERO = g_(4, [(0, 1, 0), (0, 2, 0), (1, 2, 0), (2, 1, 0), (1, 3, 2), (2, 3, 2)])
ZERO_DIST = [0, 0, 0, 2]
ZERO_PRED = [X, 0, 0, 1]


@pytest.mark.parametrize("variant", ["successors", "predecessors"])
def test_fan_crauser_needs_fewer_iterations_than_martin(variant: str) -> None:
    c = crauser(FAN, 0, variant=variant)
    m = martin(FAN, 0, variant=variant)
    for r in (c, m):
        assert r.dist.tolist() == FAN_DIST
        assert r.pred.tolist() == FAN_PRED
        assert r.backend == "cpu" and r.variant == variant
        check_tree(FAN, r)
    assert (c.iterations, m.iterations) == (1, 4)
    assert c.algorithm == "crauser" and m.algorithm == "martin"
    assert c.stats["settled"] == 4 and c.stats["reached"] == 5  # the sink 4 stays unsettled
    assert c.stats["mean_frontier_share"] == pytest.approx(3 / 5)
    assert m.stats["mean_frontier_share"] == pytest.approx(1 / 5)
    assert c.timings["total"] >= 0


def test_fan_dijkstra() -> None:
    r = dijkstra(FAN, 0)
    assert r.dist.tolist() == FAN_DIST
    assert r.pred.tolist() == FAN_PRED
    assert (r.algorithm, r.variant, r.backend, r.iterations) == ("dijkstra", "successors", "cpu", 5)
    assert set(r.timings) == {"total"}


@pytest.mark.parametrize(("algorithm", "variant"), PARALLEL)
def test_zero_weight_cycle(algorithm: str, variant: str) -> None:
    r = solve_cpu(ZERO, 0, algorithm=algorithm, variant=variant)
    assert r.dist.tolist() == ZERO_DIST
    assert r.pred.tolist() == ZERO_PRED
    assert r.iterations == {"crauser": 1, "martin": 2}[algorithm]
    check_tree(ZERO, r)


def test_zero_weight_cycle_dijkstra() -> None:
    r = dijkstra(ZERO, 0)
    assert r.dist.tolist() == ZERO_DIST
    check_tree(ZERO, r)
    # A zero cycle away from the source, reached by a positive edge.
    g = g_(4, [(0, 1, 3), (1, 2, 0), (2, 1, 0), (2, 3, 0), (3, 3, 0)])
    for algorithm, variant in ALL:
        r = solve_cpu(g, 0, algorithm=algorithm, variant=variant)
        assert r.dist.tolist() == [0, 3, 3, 3]
        check_tree(g, r)


@pytest.mark.parametrize(("algorithm", "variant"), ALL)
def test_parallel_edges_pick_the_lighter_one(algorithm: str, variant: str) -> None:
    g = g_(3, [(0, 1, 5), (0, 1, 2), (0, 1, 7), (1, 2, 0), (1, 2, 4), (0, 2, 9)])
    r = solve_cpu(g, 0, algorithm=algorithm, variant=variant)
    assert r.dist.tolist() == [0, 2, 2]
    assert r.pred.tolist() == [X, 0, 1]
    check_tree(g, r)


@pytest.mark.parametrize(("algorithm", "variant"), ALL)
def test_source_without_out_edges(algorithm: str, variant: str) -> None:
    g = g_(4, [(1, 2, 1), (2, 3, 1), (3, 1, 1)])
    r = solve_cpu(g, 0, algorithm=algorithm, variant=variant)
    assert r.dist.tolist() == [0, INF, INF, INF]
    assert r.pred.tolist() == [X, X, X, X]
    assert r.iterations == (1 if algorithm == "dijkstra" else 0)
    check_tree(g, r)


@pytest.mark.parametrize(("algorithm", "variant"), ALL)
def test_single_node_and_self_loop(algorithm: str, variant: str) -> None:
    for g in (g_(1, []), g_(1, [(0, 0, 0)]), g_(1, [(0, 0, 3)])):
        r = solve_cpu(g, 0, algorithm=algorithm, variant=variant)
        assert r.dist.tolist() == [0] and r.pred.tolist() == [X]


@pytest.mark.parametrize("algorithm", ["dijkstra", "martin", "crauser"])
@pytest.mark.parametrize("source", [-1, 4, 100])
def test_source_out_of_range(algorithm: str, source: int) -> None:
    g = g_(4, [(0, 1, 1)])
    with pytest.raises(InvalidGraphError, match=rf"source {source} is out of range \[0, 4\)"):
        solve_cpu(g, source, algorithm=algorithm)


def test_source_not_an_integer() -> None:
    g = g_(2, [(0, 1, 1)])
    for bad in (0.0, "0", True, None):
        # A TypeError, worded as the front door words it (sssp.request.check_source).
        with pytest.raises(InvalidTypeError, match="is not an integer node id"):
            solve_cpu(g, bad, algorithm="crauser")  # type: ignore[arg-type]
    assert solve_cpu(g, np.int32(1), algorithm="martin").source == 1


def test_unknown_algorithm_or_variant() -> None:
    g = g_(2, [(0, 1, 1)])
    with pytest.raises(SSSPError, match="unknown algorithm 'bfs'"):
        solve_cpu(g, 0, algorithm="bfs")
    with pytest.raises(SSSPError, match="unknown variant 'both'"):
        solve_cpu(g, 0, algorithm="crauser", variant="both")
    with pytest.raises(SSSPError, match="dijkstra"):
        solve_cpu(g, 0, algorithm="dijkstra", variant="predecessors")
    with pytest.raises(SSSPError, match="unknown criterion"):
        parallel_dijkstra(g, 0, criterion="dijkstra")  # type: ignore[arg-type]


def test_weight_range_limits() -> None:
    big = 2**62
    # (n + 1) * max_weight = 4 * 2**62 does not fit in int64: refused when the graph is built
    with pytest.raises(InvalidGraphError, match="does not fit below 2\\*\\*63"):
        g_(3, [(0, 1, big), (1, 2, big)])
    with pytest.raises(InvalidGraphError, match="2\\*\\*53"):
        dijkstra(g_(3, [(0, 1, 2**52), (1, 2, 2**52)]), 0)
    # Large but safe int64 weights: exact integer distances beyond float64's exact range.
    w = 2**58
    g = g_(3, [(0, 1, w), (1, 2, w + 1), (0, 2, 3 * w)])
    assert g.weights.dtype == np.int64
    for variant in ("successors", "predecessors"):
        for r in (crauser(g, 0, variant=variant), martin(g, 0, variant=variant)):
            assert r.dist.tolist() == [0, w, 2 * w + 1]
            assert r.pred.tolist() == [X, 0, 1]


def test_result_arrays_are_typed_and_read_only() -> None:
    for algorithm, variant in ALL:
        r = solve_cpu(FAN, 0, algorithm=algorithm, variant=variant)
        assert r.dist.dtype == np.int64 and r.pred.dtype == np.int32
        assert not r.dist.flags.writeable


# -- properties ----------------------------------------------------------------------------------
@PROPS
@given(graph_and_source())
def test_all_solvers_agree_with_scipy_and_trees_are_valid(gs: tuple[Graph, int]) -> None:
    g, s = gs
    ref = dijkstra(g, s)
    check_tree(g, ref)
    assert ref.iterations == int(np.count_nonzero(ref.dist != INF))
    for algorithm, variant in PARALLEL:
        r = solve_cpu(g, s, algorithm=algorithm, variant=variant)
        check_against(ref.dist, r)
        check_tree(g, r)


@PROPS
@given(graph_and_source(), st.sampled_from(["martin", "crauser"]))
def test_compiled_code_matches_the_written_semantics(gs: tuple[Graph, int], criterion: str) -> None:
    g, s = gs
    dist, pred, iterations = simulate(g, s, criterion)
    for variant in ("successors", "predecessors"):
        r = parallel_dijkstra(g, s, criterion=criterion, variant=variant)  # type: ignore[arg-type]
        assert r.dist.tolist() == dist
        assert r.pred.tolist() == pred
        assert r.iterations == iterations


@PROPS
@given(graph_and_source())
def test_variants_identical_and_martin_needs_at_least_crauser_iterations(
    gs: tuple[Graph, int],
) -> None:
    g, s = gs
    out = {}
    for algorithm in ("martin", "crauser"):
        a = solve_cpu(g, s, algorithm=algorithm, variant="successors")
        b = solve_cpu(g, s, algorithm=algorithm, variant="predecessors")
        np.testing.assert_array_equal(a.dist, b.dist)
        np.testing.assert_array_equal(a.pred, b.pred)
        assert a.iterations == b.iterations
        assert dict(a.stats) == dict(b.stats)
        out[algorithm] = a.iterations
    assert out["martin"] >= out["crauser"]


@settings(max_examples=60, deadline=None)
@given(graphs(max_n=30, max_m=120, max_weight=1000, zero_weights=False))
def test_positive_weights_larger_graphs(g: Graph) -> None:
    ref = dijkstra(g, 0)
    for algorithm, variant in PARALLEL:
        r = solve_cpu(g, 0, algorithm=algorithm, variant=variant)
        check_against(ref.dist, r)
        check_tree(g, r)
        assert 0 <= r.stats["mean_frontier_share"] <= 1
        assert r.stats["settled"] <= r.stats["reached"]


def test_random_medium_graph_against_scipy() -> None:
    rng = np.random.default_rng(7)
    n, m = 2000, 10000
    g = Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 20, m))
    for s in (0, 17, 1999):
        ref = dijkstra(g, s)
        check_tree(g, ref)
        its = {}
        for algorithm, variant in PARALLEL:
            r = solve_cpu(g, s, algorithm=algorithm, variant=variant)
            check_against(ref.dist, r)
            check_tree(g, r)
            its[algorithm] = r.iterations
        assert its["crauser"] <= its["martin"]


# -- real weights --------------------------------------------------------------------------------
@PROPS
@given(graph_and_source(real=True))
def test_real_weights_match_scipy_exactly(gs: tuple[Graph, int]) -> None:
    """Every solver's float64 distances equal SciPy's bit for bit (each is the minimum over the
    same rounded path sums), unreached nodes are inf, and the tree recomputes them."""
    from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

    from sssp.cpu.reference import min_weight_csr

    g, s = gs
    expected = scipy_dijkstra(min_weight_csr(g), directed=True, indices=s)
    for algorithm, variant in ALL:
        r = solve_cpu(g, s, algorithm=algorithm, variant=variant)
        assert r.dist.dtype == np.float64
        assert np.array_equal(r.dist, expected), (algorithm, variant)
        assert np.array_equal(r.reached, np.isfinite(expected))
        check_tree(g, r)


def test_real_weights_rounding_case_by_hand() -> None:
    # 0.1 + 0.2 > 0.3 in float64: the direct edge wins, as in SciPy.
    g = Graph.from_edges(3, [0, 1, 0], [1, 2, 2], np.array([0.1, 0.2, 0.3]))
    for algorithm, variant in ALL:
        r = solve_cpu(g, 0, algorithm=algorithm, variant=variant)
        assert r.dist.tolist() == [0.0, 0.1, 0.3] and r.pred.tolist() == [X, 0, 0]


def test_float32_weights_give_float64_distances() -> None:
    g = Graph.from_edges(3, [0, 1], [1, 2], np.array([0.1, 0.2], dtype=np.float32))
    r = crauser(g, 0)
    assert r.dist.dtype == np.float64
    assert r.dist[2] == np.float64(np.float32(0.1)) + np.float64(np.float32(0.2))


def test_solvers_run_without_a_numba_cache(tmp_path) -> None:
    """numba refuses cache=True when it finds no writable cache location (read-only install,
    unwritable HOME and NUMBA_CACHE_DIR); the solvers must then compile without a cache."""
    import subprocess
    import sys
    import textwrap

    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    code = textwrap.dedent(
        """
        import numba.core.caching as caching

        def no_locator(self, py_func):
            raise RuntimeError("cannot cache function: no locator available (simulated)")

        caching.FunctionCache.__init__ = no_locator
        import numpy as np, sssp
        g = sssp.Graph.from_edges(3, [0, 1], [1, 2], np.array([2, 3]))
        for alg in ("dijkstra", "martin", "crauser"):
            print(alg, sssp.solve(g, 0, algorithm=alg, backend="cpu").dist.tolist())
        """
    )
    env = {**__import__("os").environ, "HOME": str(home), "NUMBA_CACHE_DIR": str(home / "numba")}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=240
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == [
        f"{a} [0, 2, 5]" for a in ("dijkstra", "martin", "crauser")
    ]
    assert "Traceback" not in proc.stderr
