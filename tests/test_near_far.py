"""Near-far (Δ-stepping) on the CPU: exact distances, its predecessor rule, its step and bucket
counts, and Δ's validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

import sssp
from sssp import UNREACHABLE, Graph, InvalidArgumentError, InvalidTypeError, SSSPError
from sssp.cpu import default_delta, dijkstra, near_far, solve_cpu
from sssp.cpu.reference import min_weight_csr
from sssp.verify import check_against, check_tree

try:  # tests/ as a package (tests/__init__.py) or as a rootdir-relative path
    from tests.strategies import graph_and_source, graphs
except ImportError:  # pytest's default "prepend" import mode puts tests/ itself on sys.path
    from strategies import graph_and_source, graphs  # type: ignore[no-redef]

pytestmark = pytest.mark.timeout(300)

INF = UNREACHABLE
X = -1  # no predecessor
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Dijkstra-like (tiny), Davidson's default (None), middling, and Bellman-Ford-like (huge, inf).
DELTAS = [5e-324, 1e-9, 0.5, 1, 3, None, 50, 1e300, math.inf]


def g_(n: int, edges: list[tuple[int, int, float]], dtype=np.int64) -> Graph:
    src, dst, w = zip(*edges, strict=True) if edges else ((), (), ())
    return Graph.from_edges(
        n, np.asarray(src, np.int64), np.asarray(dst, np.int64), np.asarray(w, dtype)
    )


def scipy_dist(g: Graph, s: int) -> np.ndarray:
    """SciPy's float64 distances in the result's dtype (int64 with INF on integer graphs)."""
    d = scipy_dijkstra(min_weight_csr(g), directed=True, indices=s)
    if g.is_float:
        return d
    out = np.full(g.n, INF, dtype=np.int64)
    out[np.isfinite(d)] = d[np.isfinite(d)].astype(np.int64)
    return out


def naive_pred(g: Graph, s: int, dist: list) -> list[int]:
    """The documented predecessor rule (:mod:`sssp.cpu.nearfar`), transcribed naively."""
    n = g.n
    src, dst, w = (a.tolist() for a in g.edges())
    edges = [(u, v, wt) for u, v, wt in zip(src, dst, w, strict=True) if u != v]
    fin = [not (d == INF or d == math.inf) for d in dist]
    tight = [(u, v) for u, v, wt in edges if fin[u] and fin[v] and dist[u] + wt == dist[v]]
    pred = [X] * n
    for v in range(n):
        strict = [u for u, vv in tight if vv == v and dist[u] < dist[v]]
        if strict:
            pred[v] = min(strict)
    level = [0 if fin[v] and (v == s or pred[v] != X) else -1 for v in range(n)]
    depth = 0
    while True:
        new = {}
        for u, v in tight:
            if level[u] == depth and level[v] == -1 and dist[u] == dist[v]:
                new[v] = min(new.get(v, u), u)
        if not new:
            break
        for v, u in new.items():
            level[v], pred[v] = depth + 1, u
        depth += 1
    return pred


def simulate(g: Graph, s: int, delta: int) -> tuple[list[int], int, int]:
    """The module docstring's loop on an integer graph, in plain Python: (dist, steps, buckets)."""
    adj: list[list[tuple[int, int]]] = [[] for _ in range(g.n)]
    for u, v, wt in zip(*(a.tolist() for a in g.edges()), strict=True):
        adj[u].append((v, wt))
    dist = [INF] * g.n
    dist[s] = 0
    far, frontier, threshold, steps, buckets = [(s, 0)], [], 0, 0, 0
    while True:
        if not frontier:
            far = [(v, d) for v, d in far if dist[v] == d]
            if not far:
                return dist, steps, buckets
            dmin = min(d for _, d in far)
            threshold = min((dmin // delta + 1) * delta, INF)
            buckets += 1
            frontier = [(v, d) for v, d in far if d < threshold]
            far = [(v, d) for v, d in far if d >= threshold]
        steps += 1
        improved = []
        for u, du in frontier:
            for v, wt in adj[u]:
                if du + wt < dist[v]:
                    dist[v] = du + wt
                    improved.append(v)
        improved = list(dict.fromkeys(improved))
        frontier = [(v, dist[v]) for v in improved if dist[v] < threshold]
        far += [(v, dist[v]) for v in improved if dist[v] >= threshold]


# -- hand-solved graphs ---------------------------------------------------------------------------
# 0 -> 1 (1), 0 -> 2 (2), 0 -> 3 (3), 1 -> 4 (5), 2 -> 4 (5), 3 -> 4 (1).
# Δ = 1: buckets [0,1) {0}, [1,2) {1}: 4 = 6 to far, [2,3) {2}, [3,4) {3}: 4 = 4, [4,5) {4}:
#        5 steps, 5 buckets.
# Δ = 2: [0,2) {0} then {1} (4 = 6 to far), [2,4) {2, 3} (4 = 4), [4,6) {4}: 4 steps, 3 buckets.
# Δ = 100: one bucket: {0}, {1, 2, 3}, {4}: 3 steps.
FAN = g_(5, [(0, 1, 1), (0, 2, 2), (0, 3, 3), (1, 4, 5), (2, 4, 5), (3, 4, 1)])


@pytest.mark.parametrize(("delta", "steps", "buckets"), [(1, 5, 5), (2, 4, 3), (100, 3, 1)])
def test_fan_by_hand(delta: int, steps: int, buckets: int) -> None:
    r = solve_cpu(FAN, 0, algorithm="near-far", delta=delta)
    assert r.dist.tolist() == [0, 1, 2, 3, 4]
    assert r.pred.tolist() == [X, 0, 0, 0, 3]
    assert (r.iterations, r.stats["buckets"], r.stats["delta"]) == (steps, buckets, delta)
    assert (r.algorithm, r.variant, r.backend) == ("near-far", "successors", "cpu")
    assert r.stats["relaxations"] == 6 and r.stats["reached"] == 5
    assert r.dist.dtype == np.int64 and r.pred.dtype == np.int32 and not r.dist.flags.writeable
    check_tree(FAN, r)


def test_a_step_pushes_the_distance_its_entry_carries() -> None:
    # One bucket. Step 1: {0} sets 1 = 1, 2 = 5. Step 2: {1, 2}: 1 lowers 2 to 2, while 2 pushes
    # the 5 it entered with: 3 = 6. Step 3: {2, 3}: 3 = 3. Step 4: {3}. Had 2 read its lowered
    # distance mid-step, 3 would get 3 one step earlier (3 steps): counts would then depend on
    # the order of the pushes within a step.
    g = g_(4, [(0, 1, 1), (0, 2, 5), (1, 2, 1), (2, 3, 1)])
    r = near_far(g, 0, delta=math.inf)
    assert r.dist.tolist() == [0, 1, 2, 3]
    assert (r.iterations, r.stats["buckets"], r.stats["updates"]) == (4, 1, 5)
    assert r.stats["relaxations"] == 2 + 1 + 1 + 1 + 0 + 0


def test_zero_weight_cycles_get_an_acyclic_tree() -> None:
    # 1 <-> 2 at distance 1, entered only from 3. The smallest tight in-neighbour of 2 is 1 and
    # of 1 is 2: a cycle. The level rule hangs 2 under 3 and 1 under 2.
    g = g_(4, [(0, 3, 1), (3, 2, 0), (1, 2, 0), (2, 1, 0)])
    # Zero cycle reached by zero edges from the source, and a zero self-loop.
    z = g_(4, [(0, 1, 0), (0, 2, 0), (1, 2, 0), (2, 1, 0), (1, 3, 2), (2, 3, 2), (3, 3, 0)])
    for delta in DELTAS:
        r = near_far(g, 0, delta=delta)
        assert r.dist.tolist() == [0, 1, 1, 1] and r.pred.tolist() == [X, 2, 3, 0]
        check_tree(g, r)
        r = near_far(z, 0, delta=delta)
        assert r.dist.tolist() == [0, 0, 0, 2] and r.pred.tolist() == [X, 0, 0, 1]
        check_tree(z, r)


def test_real_weight_rounded_away_is_a_flat_edge() -> None:
    # 1e16 + 1.0 == 1e16 in float64: 2 sits at 1's distance through a positive edge, and 1 <-> 2
    # is a tight cycle; 2 must hang under 1, not the reverse.
    g = g_(3, [(0, 1, 1e16), (1, 2, 1.0), (2, 1, 1.0)], dtype=np.float64)
    r = near_far(g, 0)
    assert r.dist.tolist() == [0.0, 1e16, 1e16] and r.pred.tolist() == [X, 0, 1]
    check_tree(g, r)
    assert np.array_equal(r.dist, scipy_dist(g, 0))


def test_edge_cases() -> None:
    cases = [
        (g_(1, []), [0]),
        (g_(1, [(0, 0, 0)]), [0]),
        (g_(1, [(0, 0, 3)]), [0]),
        (g_(4, [(1, 2, 1), (2, 3, 1), (3, 1, 1)]), [0, INF, INF, INF]),  # source without out-edges
        (g_(3, [(0, 1, 5), (0, 1, 2), (0, 1, 7), (1, 2, 0), (1, 2, 4), (0, 2, 9)]), [0, 2, 2]),
        (g_(5, [(0, 1, 4), (1, 1, 0), (3, 4, 1), (4, 3, 0)]), [0, 4, INF, INF, INF]),  # unreachable
    ]
    for g, want in cases:
        for delta in DELTAS:
            r = near_far(g, 0, delta=delta)
            assert r.dist.tolist() == want
            check_tree(g, r)
            assert r.stats["reached"] == sum(d != INF for d in want)
    r = near_far(cases[3][0], 0)
    assert r.pred.tolist() == [X] * 4 and (r.iterations, r.stats["buckets"]) == (1, 1)
    assert near_far(cases[4][0], 0).pred.tolist() == [X, 0, 1]


def test_large_integer_weights_stay_exact() -> None:
    w = 2**58
    g = g_(3, [(0, 1, w), (1, 2, w + 1), (0, 2, 3 * w)])
    for delta in (1, w, 2**62, 10**40, math.inf):
        r = near_far(g, 0, delta=delta)
        assert r.dist.tolist() == [0, w, 2 * w + 1] and r.pred.tolist() == [X, 0, 1]
    assert near_far(g, 0, delta=10**40).stats["delta"] == INF  # capped


def test_float32_weights_give_float64_sums() -> None:
    g = g_(3, [(0, 1, 0.1), (1, 2, 0.2)], dtype=np.float32)
    r = near_far(g, 0, delta=0.05)
    assert r.dist.dtype == np.float64
    assert r.dist[2] == np.float64(np.float32(0.1)) + np.float64(np.float32(0.2))
    g = g_(3, [(0, 1, 0.1), (1, 2, 0.2), (0, 2, 0.3)], dtype=np.float64)
    assert near_far(g, 0).dist.tolist() == [0.0, 0.1, 0.3]  # 0.1 + 0.2 > 0.3, as in SciPy


# -- Δ ----------------------------------------------------------------------------------------------
def test_default_delta_is_davidsons_rule() -> None:
    # n = 5, m = 6, Σw = 17: 32 · (17 / 6) / (6 / 5) = 75.6 → 76 on an integer graph.
    assert default_delta(FAN) == 76
    real = g_(2, [(0, 1, 0.5), (1, 0, 1.5)], dtype=np.float64)
    assert default_delta(real) == pytest.approx(32 * 1.0 / 1.0)
    assert default_delta(g_(3, [])) == 1 and default_delta(g_(2, [(0, 1, 0)])) == 1
    assert solve_cpu(FAN, 0, algorithm="near-far").stats["delta"] == 76
    # Dense graph, light weights: the rule goes below 1, an integer Δ cannot.
    dense = g_(3, [(u, v, 1) for u in range(3) for v in range(3)] * 20)
    assert default_delta(dense) == 1


@pytest.mark.parametrize("bad", [0, -1, -0.5, 0.0, math.nan, np.float64("nan"), -math.inf])
def test_bad_delta_values(bad: float) -> None:
    with pytest.raises(InvalidArgumentError, match=r"^delta must be a positive number, got "):
        solve_cpu(FAN, 0, algorithm="near-far", delta=bad)


@pytest.mark.parametrize("bad", ["3", True, [1], object()])
def test_delta_that_is_not_a_number(bad: object) -> None:
    with pytest.raises(InvalidTypeError, match=r"^delta must be a positive number, got "):
        near_far(FAN, 0, delta=bad)  # type: ignore[arg-type]


def test_delta_and_variant_belong_to_near_far() -> None:
    with pytest.raises(InvalidArgumentError, match="delta applies to algorithm 'near-far' only"):
        solve_cpu(FAN, 0, algorithm="crauser", delta=3)
    with pytest.raises(SSSPError, match="algorithm 'near-far' has no variant 'predecessors'"):
        solve_cpu(FAN, 0, algorithm="near-far", variant="predecessors")
    for d, used in ((np.int32(2), 2), (np.float32(2.0), 2), (2.5, 3), (1e-9, 1)):
        assert near_far(FAN, 0, delta=d).stats["delta"] == used  # rounded up on integer graphs


def test_near_far_runs_on_both_backends() -> None:
    r = sssp.solve(FAN, 0, algorithm="near-far", backend="cpu")
    assert r.backend == "cpu" and r.dist.tolist() == [0, 1, 2, 3, 4]
    from sssp.result import ALGORITHMS, GPU_ALGORITHMS, PHASED_ALGORITHMS

    assert "near-far" in ALGORITHMS and "near-far" in GPU_ALGORITHMS
    assert "near-far" not in PHASED_ALGORITHMS  # no per-kernel tuning, no paper loop


def test_paper_tuner_refuses_near_far_in_one_line(capsys) -> None:
    with pytest.raises(SystemExit):  # the per-kernel tuner runs the phase-synchronous loop only
        from tuner.cli import main as tune_main

        tune_main(["run", "--algorithm", "near-far", "--replay"])
    assert "invalid choice: 'near-far'" in capsys.readouterr().err


# -- properties ------------------------------------------------------------------------------------
@PROPS
@given(graph_and_source(), st.sampled_from(DELTAS))
def test_integer_graphs_match_scipy_and_the_written_semantics(gs, delta) -> None:
    g, s = gs
    r = near_far(g, s, delta=delta)
    check_against(scipy_dist(g, s), r)
    check_tree(g, r)
    dist, steps, buckets = simulate(g, s, r.stats["delta"])
    assert r.dist.tolist() == dist
    assert (r.iterations, r.stats["buckets"]) == (steps, buckets)
    assert r.pred.tolist() == naive_pred(g, s, dist)
    if r.stats["delta"] == 1:  # Dijkstra-like: one bucket per distinct distance
        assert buckets == len(set(r.dist[r.reached].tolist()))
    if r.stats["delta"] == INF:  # Bellman-Ford-like: a single bucket
        assert buckets == 1


@PROPS
@given(graph_and_source(real=True), st.sampled_from(DELTAS))
def test_real_graphs_match_scipy_bit_for_bit(gs, delta) -> None:
    g, s = gs
    r = near_far(g, s, delta=delta)
    assert r.dist.dtype == np.float64
    assert np.array_equal(r.dist, scipy_dist(g, s))
    check_tree(g, r)
    assert r.pred.tolist() == naive_pred(g, s, r.dist.tolist())


@settings(max_examples=40, deadline=None)
@given(graphs(max_n=30, max_m=150, max_weight=1000), st.booleans())
def test_pred_is_the_same_for_every_delta(g: Graph, real: bool) -> None:
    if real:
        g = Graph(g.indptr, g.indices, g.weights / 7.0)
    runs = [near_far(g, 0, delta=d) for d in DELTAS]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.dist, runs[0].dist)
        np.testing.assert_array_equal(r.pred, runs[0].pred)
    # More buckets never mean fewer steps: every raise is followed by at least one step.
    assert all(r.iterations >= r.stats["buckets"] >= 1 for r in runs)


# -- larger graphs ----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("n", "degree", "max_w"), [(50, 1, 5), (2000, 5, 20), (3000, 30, 100)])
def test_random_graphs_against_scipy(seed: int, n: int, degree: int, max_w: int) -> None:
    rng = np.random.default_rng(seed)
    m = n * degree
    w = rng.integers(0, max_w, m)
    g = Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), w)
    gf = Graph.from_edges(n, g.edges()[0], g.edges()[1], rng.random(m) * max_w)
    for graph in (g, gf):
        for s in (0, int(rng.integers(n))):
            ref = dijkstra(graph, s)
            preds = set()
            for delta in (1e-9, 1, 7, None, math.inf):
                r = near_far(graph, s, delta=delta)
                assert np.array_equal(r.dist, ref.dist)
                check_tree(graph, r)
                preds.add(r.pred.tobytes())
            assert len(preds) == 1


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("martin", dict(size=4000)),
        ("martin", dict(size=3000, weight_range=(0, 3))),
        ("kronecker", dict(scale=10)),
        ("random", dict(size=2000, degree=50)),
    ],
)
def test_paper_generators_against_scipy(kind: str, options: dict) -> None:
    g = sssp.generate(kind, seed=3, **options)
    ref = dijkstra(g, 0)
    for delta in (1, None, 10**9):
        r = solve_cpu(g, 0, algorithm="near-far", delta=delta)
        assert np.array_equal(r.dist, ref.dist)
        check_tree(g, r)


def test_solve_front_door_forwards_delta_and_refuses_what_it_cannot_use():
    import sssp
    from sssp.errors import InvalidArgumentError, InvalidTypeError

    g = sssp.generate("random", size=300, degree=4, seed=3)
    res = sssp.solve(g, 0, algorithm="near-far", backend="cpu", delta=7)
    assert res.stats["delta"] == 7
    with pytest.raises(InvalidArgumentError, match="delta applies to algorithm 'near-far' only"):
        sssp.solve(g, 0, algorithm="crauser", backend="cpu", delta=7)
    with pytest.raises(InvalidTypeError, match="unexpected keyword argument 'detla'"):
        sssp.solve(g, 0, algorithm="near-far", backend="cpu", detla=7)
    sssp.solve(g, 0, backend="cpu", profile=True)  # a GPU option, ignored on the CPU as documented
