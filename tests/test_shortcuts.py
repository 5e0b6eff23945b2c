"""Shortcut edges (:mod:`sssp.shortcuts`) and the configuration that asks for them.

Every shortcut must be an exact distance to one of its node's ρ nearest nodes (by distance, then
id), so that the augmented graph has the original's distances; real weights are refused; the
cap on a shortcut's weight holds; the plan keeps a graph's 32-bit distances.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernels
import sssp
from sssp.config import ConfigError, LaunchConfig
from sssp.cpu.nearfar import near_far
from sssp.cpu.reference import dijkstra
from sssp.gpu.plan import GraphFacts, shortcut_choice
from sssp.shortcuts import with_shortcuts

try:
    from tests.interrupts import assert_ctrl_c_stops
except ImportError:  # pragma: no cover
    from interrupts import assert_ctrl_c_stops  # type: ignore[no-redef]


def _random(n: int, m: int, seed: int, low: int = 1, high: int = 50) -> sssp.Graph:
    rng = np.random.default_rng(seed)
    return sssp.Graph.from_edges(
        n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(low, high, m)
    )


def _check_nearest(graph: sssp.Graph, aug: sssp.Graph, rho: int) -> int:
    """Each node's shortcuts are exact distances to distinct nodes other than itself, none
    farther than its rho-th nearest, as many as its rho nearest less those it has an edge to
    at their distance (ties at the last distance are the search's to break). Returns the count."""
    total = 0
    for u, cuts in _shortcuts(aug, graph).items():
        row = dijkstra(graph, u).dist
        reach = np.sort(row[(row != sssp.UNREACHABLE) & (np.arange(graph.n) != u)])
        want = min(rho, reach.size)
        targets = [v for v, _ in cuts]
        assert len(set(targets)) == len(targets) and u not in targets
        assert all(w == row[v] for v, w in cuts), u
        assert all(w <= reach[want - 1] for _, w in cuts), u
        lo, hi = graph.indptr[u], graph.indptr[u + 1]
        tight = {int(v) for v, w in zip(graph.indices[lo:hi], graph.weights[lo:hi], strict=True)
                 if v != u and w == row[v]}  # fmt: skip
        assert want - len(tight) <= len(cuts) <= want, u
        assert not tight & set(targets), u
        total += len(cuts)
    return total


def _shortcuts(aug: sssp.Graph, graph: sssp.Graph) -> dict[int, list[tuple[int, int]]]:
    """Per node, the edges ``aug`` adds after the node's own."""
    out = {}
    for u in range(graph.n):
        own = graph.indptr[u + 1] - graph.indptr[u]
        lo, hi = aug.indptr[u] + own, aug.indptr[u + 1]
        np.testing.assert_array_equal(
            aug.indices[aug.indptr[u] : lo], graph.indices[graph.indptr[u] : graph.indptr[u + 1]]
        )
        out[u] = list(zip(aug.indices[lo:hi].tolist(), aug.weights[lo:hi].tolist(), strict=True))
    return out


@pytest.mark.parametrize("rho", [2, 4, 16])
def test_each_node_gets_its_nearest_at_their_distances(rho):
    graph = _random(300, 900, rho, low=0, high=6)  # zero weights and many ties
    aug = with_shortcuts(graph, rho)
    assert _check_nearest(graph, aug, rho) == aug.m - graph.m
    assert aug.meta["shortcuts"]["rho"] == rho
    assert aug.meta["shortcuts"]["edges"] == aug.m - graph.m > 0


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    m=st.integers(0, 160),
    rho=st.sampled_from([1, 2, 4, 8, 32]),
    seed=st.integers(0, 2**16),
)
def test_distances_unchanged_on_drawn_graphs(n, m, rho, seed):
    """Self-loops, parallel edges, zero weights, unreachable nodes and fewer reachable nodes
    than ρ: the augmented graph's distances equal SciPy's on the graph itself."""
    graph = _random(n, m, seed, low=0, high=9)
    aug = with_shortcuts(graph, rho)
    _check_nearest(graph, aug, rho)
    for s in range(min(n, 3)):
        np.testing.assert_array_equal(near_far(aug, s).dist, near_far(graph, s).dist)


def test_a_cap_bounds_every_shortcut():
    graph = sssp.generate("road", size=3000, seed=3)
    cap = 3 * int(graph.max_weight)
    aug = with_shortcuts(graph, 16, max_weight=cap)
    added = np.concatenate(
        [aug.weights[aug.indptr[u] + graph.indptr[u + 1] - graph.indptr[u] : aug.indptr[u + 1]]
         for u in range(graph.n)]
    )  # fmt: skip
    assert added.size and added.max() <= cap
    assert aug.meta["shortcuts"]["max_weight"] == cap
    free = with_shortcuts(graph, 16)
    assert free.m > aug.m  # the cap left some out
    for s in (0, 1500):
        np.testing.assert_array_equal(near_far(aug, s).dist, near_far(graph, s).dist)


def test_searches_do_not_pass_through_hubs():
    """A node joined both ways to every other node (weight 1): past ``hub_degree`` no search
    walks its edges, so each shortcut between two other nodes is their distance without it;
    with a larger ``hub_degree`` they are exact distances, through it. Distances never change."""
    road = sssp.generate("road", size=1500, seed=8)
    n = road.n + 1
    hub = road.n
    src = np.repeat(np.arange(road.n), np.diff(road.indptr))
    others = np.arange(road.n)
    graph = sssp.Graph.from_edges(
        n,
        np.concatenate([src, np.full(road.n, hub), others]),
        np.concatenate([road.indices, others, np.full(road.n, hub)]),
        np.concatenate([road.weights, np.ones(2 * road.n, np.int64)]),
    )
    bounded = with_shortcuts(graph, 8, hub_degree=64)
    assert bounded.meta["shortcuts"]["hub_degree"] == 64
    for u, cuts in _shortcuts(bounded, graph).items():
        if u == hub:
            continue
        without = dijkstra(road, u).dist
        assert all(v == hub or w == without[v] for v, w in cuts), u
    exact = with_shortcuts(graph, 8, hub_degree=n)
    assert _check_nearest(graph, exact, 8) == exact.m - graph.m
    for s in (0, 700, hub):
        want = near_far(graph, s).dist
        np.testing.assert_array_equal(near_far(bounded, s).dist, want)
        np.testing.assert_array_equal(near_far(exact, s).dist, want)


def test_steps_fall_on_a_grid():
    """What shortcuts are for: near-far's steps on a grid fall, the distances stay."""
    graph = sssp.generate("grid", size=4096, seed=4)
    base = near_far(graph, 0)
    aug = near_far(with_shortcuts(graph, 16), 0, delta=base.stats["delta"])
    np.testing.assert_array_equal(aug.dist, base.dist)
    assert aug.iterations < 0.6 * base.iterations


def test_refusals():
    real = sssp.Graph.from_edges(3, [0, 1], [1, 2], np.array([0.5, 1.5]))
    with pytest.raises(sssp.InvalidGraphError, match="integer weights"):
        with_shortcuts(real, 4)
    graph = _random(10, 20, 1)
    for bad in (0, -1, True, 2.0, "4"):
        with pytest.raises(sssp.InvalidArgumentError, match="rho"):
            with_shortcuts(graph, bad)
    with pytest.raises(sssp.InvalidArgumentError, match="max_weight"):
        with_shortcuts(graph, 4, max_weight=-1)
    for bad in (-1, True, 2.5):
        with pytest.raises(sssp.InvalidArgumentError, match="hub_degree"):
            with_shortcuts(graph, 4, hub_degree=bad)


def test_configuration():
    cfg = LaunchConfig(loop="cluster", shortcuts=16)
    assert cfg.options()["shortcuts"] == 16 and "shortcuts=16" in str(cfg)
    assert LaunchConfig.from_parts(cfg.as_dict(), cfg.options()) == cfg
    assert "shortcuts" not in LaunchConfig().options()
    for bad in (3, -4, True, 64):
        with pytest.raises(ConfigError, match="shortcuts"):
            LaunchConfig(shortcuts=bad)
    with pytest.raises(ConfigError, match="persistent and cluster"):
        LaunchConfig(loop="wide", shortcuts=8)


def test_plan_keeps_the_distance_width():
    cfg = LaunchConfig(shortcuts=8)
    n = 3000
    narrow = _random(n, 9000, 5, high=2**32 // (n + 1) - 1)
    rho, cap, why = shortcut_choice(GraphFacts.of(narrow), cfg, "near-far")
    assert rho == 8 and not why and (n + 1) * cap < kernels.UINT32_INF
    aug = with_shortcuts(narrow, rho, max_weight=cap)
    assert kernels.widths_for(aug.n, aug.max_weight)[0] == 32
    wide = _random(n, 9000, 5, low=10**6, high=3 * 10**9)
    assert shortcut_choice(GraphFacts.of(wide), cfg, "near-far") == (8, None, "")
    assert shortcut_choice(GraphFacts.of(narrow), LaunchConfig(), "near-far") == (0, None, "")
    _, _, why = shortcut_choice(GraphFacts.of(narrow), cfg, "crauser")
    assert "near-far only" in why
    real = sssp.Graph.from_edges(3, [0, 1], [1, 2], np.array([0.5, 1.5]))
    _, _, why = shortcut_choice(GraphFacts.of(real), cfg, "near-far")
    assert "real weights" in why


def test_ctrl_c_stops_the_build(monkeypatch):
    """The searches run in a helper thread that looks at a stop flag before each node: Ctrl-C
    (SIGINT) during a build raises KeyboardInterrupt well before the build would have ended."""
    import sssp.shortcuts as module

    graph = sssp.generate("road", size=200_000, seed=7)
    assert_ctrl_c_stops(monkeypatch, module, lambda: with_shortcuts(graph, 32))
    assert with_shortcuts(graph, 4).m > graph.m  # the next build starts afresh
