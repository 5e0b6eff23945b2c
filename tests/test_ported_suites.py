"""Small cases in the spirit of SciPy's ``csgraph`` and NetworkX's weighted shortest-path test
suites, written anew for ``sssp.solve(backend="cpu")``: known distances on classic graphs,
unweighted hop counts, explicit zeros, dense input, disconnected parts, real weights, NetworkX
labels, callable and missing weights, multigraphs and negative weights.

Deliberate differences from those libraries (checked here where they show):

- among equal shortest paths the predecessor may differ (each solver's own tie-breaking); the
  tree is checked for validity instead of compared;
- unreachable nodes: predecessor -1 (SciPy: -9999); distance ``inf`` on graphs with real
  weights, :data:`sssp.UNREACHABLE` on integer ones (NetworkX leaves them out of its dicts);
- negative weights are refused when the graph is built, before any solve.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

import sssp
from sssp import Graph, SSSPError
from sssp.verify import check_tree

pytestmark = pytest.mark.timeout(120)

SOLVERS = [
    ("dijkstra", "successors"),
    ("martin", "successors"),
    ("martin", "predecessors"),
    ("crauser", "successors"),
    ("crauser", "predecessors"),
]


def solve_all(g: Graph, source: int) -> list[sssp.SSSPResult]:
    out = []
    for algorithm, variant in SOLVERS:
        r = sssp.solve(g, source, algorithm=algorithm, variant=variant, backend="cpu")
        check_tree(g, r)
        out.append(r)
    return out


def as_float(dist: np.ndarray) -> list[float]:
    return [math.inf if (d == sssp.UNREACHABLE or not np.isfinite(d)) else float(d) for d in dist]


# -- SciPy csgraph style ---------------------------------------------------------------------------
# A small directed graph (dense form, 0 = no edge) and its distances worked out by hand.
DIRECTED = np.array(
    [
        [0, 3, 3, 0, 0],
        [0, 0, 0, 2, 4],
        [0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0],
        [2, 0, 0, 2, 0],
    ]
)
DIRECTED_DIST = [
    [0, 3, 3, 5, 7],
    [3, 0, 6, 2, 4],
    [math.inf, math.inf, 0, math.inf, math.inf],
    [1, 4, 4, 0, 8],
    [2, 5, 5, 2, 0],
]


@pytest.mark.parametrize("source", range(5))
def test_scipy_style_directed_dense(source):
    g = Graph.from_scipy(DIRECTED)
    for r in solve_all(g, source):
        assert as_float(r.dist) == DIRECTED_DIST[source]
    assert (
        as_float(solve_all(g, source)[0].dist) == scipy_dijkstra(DIRECTED, indices=source).tolist()
    )


@pytest.mark.parametrize("source", range(5))
def test_scipy_style_undirected_is_the_symmetric_closure(source):
    a = np.where(DIRECTED > 0, DIRECTED, np.inf)
    sym = np.minimum(a, a.T)  # SciPy's directed=False uses the lighter of the two directions
    g = Graph.from_scipy(sym)
    expected = scipy_dijkstra(DIRECTED, directed=False, indices=source)
    for r in solve_all(g, source):
        assert as_float(r.dist) == expected.tolist()


def test_scipy_style_unweighted_counts_hops():
    g = Graph.from_scipy(sp.csr_array((DIRECTED > 0).astype(np.int8)))
    expected = scipy_dijkstra(DIRECTED > 0, unweighted=True, indices=0)
    for r in solve_all(g, 0):
        assert as_float(r.dist) == expected.tolist() == [0, 1, 1, 2, 2]


def test_scipy_style_explicit_zero_is_an_edge():
    m = sp.csr_array(
        (np.array([0.0, 0.0, 2.0]), np.array([1, 2, 3]), np.array([0, 1, 2, 3, 3])), shape=(4, 4)
    )
    for r in solve_all(Graph.from_scipy(m), 0):
        assert r.dist.tolist() == [0.0, 0.0, 0.0, 2.0]


def test_scipy_style_disconnected_and_predecessors():
    m = sp.csr_array(([1.5, 2.5], ([0, 2], [1, 3])), shape=(4, 4))
    fdist, fpred = scipy_dijkstra(m, indices=0, return_predecessors=True)
    for r in solve_all(Graph.from_scipy(m), 0):
        assert r.dist.tolist() == fdist.tolist() == [0.0, 1.5, math.inf, math.inf]
        assert r.pred.tolist() == [-1, 0, -1, -1]
    assert fpred.tolist() == [-9999, 0, -9999, -9999]  # SciPy's sentinel; ours is -1


def test_scipy_style_random_real_weights_exact():
    rng = np.random.default_rng(11)
    dense = rng.random((30, 30)) * (rng.random((30, 30)) < 0.15)
    g = Graph.from_scipy(dense)
    for s in (0, 7, 29):
        expected = scipy_dijkstra(dense, indices=s)
        for r in solve_all(g, s):
            assert np.array_equal(r.dist, expected)


def test_scipy_style_negative_weight_is_refused():
    with pytest.raises(SSSPError, match="negative weight -1"):
        Graph.from_scipy(np.array([[0, -1], [0, 0]]))


# -- NetworkX style -------------------------------------------------------------------------------
def clrs_digraph() -> nx.DiGraph:
    """The directed example of Cormen et al.'s Dijkstra section."""
    G = nx.DiGraph()
    G.add_weighted_edges_from(
        [
            ("s", "u", 10),
            ("s", "x", 5),
            ("u", "v", 1),
            ("u", "x", 2),
            ("v", "y", 1),
            ("x", "u", 3),
            ("x", "v", 5),
            ("x", "y", 2),
            ("y", "s", 7),
            ("y", "v", 6),
        ]
    )
    return G


def test_networkx_style_clrs_distances_and_path():
    G = clrs_digraph()
    g = Graph.from_networkx(G)
    for r in solve_all(g, g.index_of("s")):
        got = {g.label_of(i): d for i, d in enumerate(r.dist.tolist())}
        assert got == {"s": 0, "u": 8, "v": 9, "x": 5, "y": 7}
        assert got == nx.single_source_dijkstra_path_length(G, "s")
        assert [g.label_of(i) for i in r.path_to(g.index_of("v"))] == ["s", "x", "u", "v"]


def test_networkx_style_undirected_clrs():
    G = clrs_digraph().to_undirected()
    g = Graph.from_networkx(G)
    expected = nx.single_source_dijkstra_path_length(G, "s")
    for r in solve_all(g, g.index_of("s")):
        assert {g.label_of(i): d for i, d in enumerate(r.dist.tolist())} == expected


def test_networkx_style_cycle_and_grid_unweighted():
    g = Graph.from_networkx(nx.cycle_graph(7))
    assert g.labels is None
    for r in solve_all(g, 0):
        assert r.dist.tolist() == [0, 1, 2, 3, 3, 2, 1]
    G = nx.grid_2d_graph(4, 4)
    g = Graph.from_networkx(G)
    assert g.labels[0] == (0, 0)  # tuple labels kept as they are
    for r in solve_all(g, g.index_of((0, 0))):
        assert all(r.dist[i] == sum(g.label_of(i)) for i in range(g.n))


def test_networkx_style_real_weights_and_unreachable():
    G = nx.DiGraph()
    G.add_weighted_edges_from([(1, 2, 0.5), (2, 3, 0.25), (1, 3, 1.0), (4, 1, 1.0)])
    g = Graph.from_networkx(G)
    expected = nx.single_source_dijkstra_path_length(G, 1)
    for r in solve_all(g, g.index_of(1)):
        got = {g.label_of(i): d for i, d in enumerate(r.dist.tolist()) if np.isfinite(d)}
        assert got == expected == {1: 0.0, 2: 0.5, 3: 0.75}
        assert r.dist[g.index_of(4)] == math.inf


def test_networkx_style_callable_missing_and_zero_weights():
    G = nx.Graph()
    G.add_edge("a", "b", w=3)
    G.add_edge("b", "c")  # missing attribute
    G.add_edge("a", "c", w=0)
    for weight in ("w", lambda u, v, d: d.get("w", 1) * 2):
        g = Graph.from_networkx(G, weight=weight)
        expected = nx.single_source_dijkstra_path_length(G, "a", weight=weight)
        for r in solve_all(g, g.index_of("a")):
            assert {g.label_of(i): d for i, d in enumerate(r.dist.tolist())} == expected


def test_networkx_style_multigraph():
    G = nx.MultiGraph()
    G.add_edge(0, 1, weight=5)
    G.add_edge(0, 1, weight=2)
    G.add_edge(1, 2, weight=1)
    g = Graph.from_networkx(G)
    for r in solve_all(g, 0):
        assert r.dist.tolist() == [0, 2, 3] == [nx.dijkstra_path_length(G, 0, t) for t in range(3)]


def test_networkx_style_negative_weight_is_refused():
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=-1)
    with pytest.raises(SSSPError, match="negative weight -1"):
        Graph.from_networkx(G)  # NetworkX's Dijkstra returns -1 here without a word
