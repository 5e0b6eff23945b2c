"""The graph model: real weights, node labels, weight checks before any cast, and the
constructors' shared conventions (duplicate edges, dense input, NetworkX weights)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import sssp
from sssp import Graph, InvalidGraphError

pytestmark = pytest.mark.timeout(120)


def triples(g: Graph) -> list[tuple]:
    src, dst, w = g.edges()
    return sorted(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True))


# -- weights ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype, stored", [(np.float64, np.float64), (np.float32, np.float32), (np.float16, np.float64)]
)
def test_real_weights_are_kept_as_floats(dtype, stored):
    g = Graph.from_edges(3, [0, 1], [1, 2], np.array([0.5, 2.25], dtype=dtype))
    assert g.is_float and g.weights.dtype == stored
    assert g.weights.tolist() == [0.5, 2.25]
    assert g.max_weight == 2.25 and isinstance(g.max_weight, float)
    assert g.omega().tolist() == [0.5, 2.25, -1.0]


def test_integer_weights_stay_exact():
    g = Graph.from_edges(3, [0, 1], [1, 2], np.array([3, 2**40], dtype=np.int64))
    assert not g.is_float and g.weights.dtype == np.int64 and g.weights.tolist() == [3, 2**40]
    assert Graph.from_edges(2, [0], [1], [7]).weights.dtype == np.int32


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -0.5])
def test_non_finite_or_negative_real_weights_are_refused_by_value(bad):
    with pytest.raises(InvalidGraphError, match=rf"weight {bad!r} on edge 0 -> 1"):
        Graph.from_edges(2, [0], [1], np.array([bad]))
    with pytest.raises(InvalidGraphError, match="not a finite non-negative number"):
        Graph(np.array([0, 1, 1]), np.array([1]), np.array([bad]))


def test_huge_real_weights_are_never_cast_to_int():
    """1e300 used to become INT64_MIN (negative distances); it stays a float now."""
    g = Graph(np.array([0, 1, 1]), np.array([1]), np.array([1e300]))
    r = sssp.solve(g, 0, backend="cpu")
    assert r.dist.dtype == np.float64 and r.dist.tolist() == [0.0, 1e300]


def test_real_weights_whose_sums_overflow_are_refused():
    with pytest.raises(InvalidGraphError, match="overflows float64"):
        Graph.from_edges(3, [0, 1], [1, 2], [1e308, 1e308])


def test_integer_distances_that_cannot_fit_int64_are_refused():
    with pytest.raises(
        InvalidGraphError, match=r"\(n \+ 1\) \* max_weight = 3 \* 4611686018427387904"
    ):
        Graph.from_edges(2, [0], [1], np.array([2**62], dtype=np.int64))
    with pytest.raises(InvalidGraphError, match="exceeds the int64 range"):
        Graph.from_edges(2, [0], [1], np.array([2**63], dtype=np.uint64))


def test_weights_that_are_not_numbers():
    with pytest.raises(InvalidGraphError, match="must be numbers"):
        Graph.from_edges(2, [0], [1], np.array(["1"]))


# -- labels -------------------------------------------------------------------------------------
def test_labels_map_both_ways_and_identity_is_none():
    g = Graph.from_edges(3, [0, 1], [1, 2], [1, 1], labels=[10, 20, 5])
    assert g.labels.tolist() == [10, 20, 5] and g.labels.dtype == np.int64
    assert [g.index_of(x) for x in (10, 20, 5)] == [0, 1, 2]
    assert [g.label_of(i) for i in range(3)] == [10, 20, 5]
    with pytest.raises(InvalidGraphError, match="node id 7 is not in the graph"):
        g.index_of(7)
    with pytest.raises(InvalidGraphError, match="not an integer"):
        g.index_of(1.5)
    assert Graph.from_edges(3, [0], [1], [1], labels=[0, 1, 2]).labels is None
    plain = Graph.from_edges(3, [0], [1], [1])
    assert plain.index_of(2) == 2 and plain.label_of(2) == 2
    with pytest.raises(InvalidGraphError, match="not in the graph"):
        plain.index_of(3)
    with pytest.raises(InvalidGraphError, match="distinct"):
        Graph.from_edges(2, [0], [1], [1], labels=[4, 4])
    with pytest.raises(InvalidGraphError, match="length n = 2"):
        Graph.from_edges(2, [0], [1], [1], labels=[4])


def test_labels_survive_reverse_and_npz(tmp_path):
    g = Graph.from_edges(3, [0, 1], [1, 2], [0.5, 1.0], labels=[3, 9, 27])
    assert g.reverse().labels.tolist() == [3, 9, 27]
    sssp.save(g, tmp_path / "g.npz")
    back = sssp.load(tmp_path / "g.npz")
    assert back == g and back.labels.tolist() == [3, 9, 27] and back.weights.dtype == np.float64
    assert back != Graph.from_edges(3, [0, 1], [1, 2], [0.5, 1.0])  # same arrays, other ids


# -- constructors --------------------------------------------------------------------------------
def test_duplicate_entries_stay_parallel_edges_in_every_constructor():
    coo = sp.coo_array((np.array([4, 1]), (np.array([0, 0]), np.array([1, 1]))), shape=(2, 2))
    expected = [(0, 1, 4), (0, 1, 1)]
    for g in (
        Graph.from_scipy(coo),
        Graph.from_scipy(
            sp.csr_matrix((np.array([4, 1]), np.array([1, 1]), np.array([0, 2, 2])), shape=(2, 2))
        ),
        Graph.from_edges(2, [0, 0], [1, 1], [4, 1]),
    ):
        src, dst, w = g.edges()
        assert list(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True)) == expected
        assert sssp.solve(g, 0, backend="cpu").dist.tolist() == [0, 1]


def test_from_scipy_dense_follows_csgraph():
    dense = np.array([[0, 2.5, np.inf], [0, 0, 1], [np.nan, 0, 0]])
    g = Graph.from_scipy(dense)
    assert triples(g) == [(0, 1, 2.5), (1, 2, 1.0)]
    from scipy.sparse.csgraph import dijkstra

    assert sssp.solve(g, 0, backend="cpu").dist.tolist() == dijkstra(dense, indices=0).tolist()
    assert triples(Graph.from_scipy([[0, 3], [0, 0]])) == [(0, 1, 3)]
    with pytest.raises(InvalidGraphError, match="square"):
        Graph.from_scipy(np.zeros((2, 3)))
    with pytest.raises(InvalidGraphError, match="2-D"):
        Graph.from_scipy(np.zeros(3))


def test_from_scipy_keeps_explicit_zeros():
    m = sp.csr_array((np.array([0.0, 2.0]), np.array([1, 2]), np.array([0, 1, 2, 2])), shape=(3, 3))
    assert triples(Graph.from_scipy(m)) == [(0, 1, 0.0), (1, 2, 2.0)]


def test_from_networkx_keeps_labels_and_reads_weights_like_networkx():
    G = nx.Graph()
    G.add_edge("a", "b", weight=1.5)
    G.add_edge("b", "c")  # no weight: 1, as in NetworkX
    G.add_edge("a", "c", weight=4)
    G.add_node("z")
    g = Graph.from_networkx(G)
    assert g.labels.tolist() == ["a", "b", "c", "z"] and g.is_float
    r = sssp.solve(g, g.index_of("a"), backend="cpu")
    expected = nx.single_source_dijkstra_path_length(G, "a")
    assert {g.label_of(i): d for i, d in enumerate(r.dist.tolist()) if np.isfinite(d)} == expected


def test_from_networkx_callable_weight_and_hidden_edges():
    G = nx.DiGraph()
    G.add_edge(0, 1, cost=5)
    G.add_edge(1, 2, cost=7)
    G.add_edge(0, 2, cost=100)

    def weight(u, v, d):
        return None if (u, v) == (0, 2) else d["cost"] * 2

    g = Graph.from_networkx(G, weight=weight)
    assert triples(g) == [(0, 1, 10), (1, 2, 14)]  # the callable is honoured, (0, 2) hidden
    assert sssp.solve(g, 0, backend="cpu").dist.tolist() == [
        nx.dijkstra_path_length(G, 0, t, weight=weight) for t in (0, 1, 2)
    ]
    with pytest.raises(InvalidGraphError, match="is not a number"):
        Graph.from_networkx(G, weight=lambda u, v, d: "heavy")


def test_from_networkx_multigraph_uses_the_lightest_parallel_edge():
    M = nx.MultiDiGraph()
    M.add_edge(0, 1, weight=4)
    M.add_edge(0, 1, weight=1.5)
    M.add_edge(1, 2)
    g = Graph.from_networkx(M)
    assert sssp.solve(g, 0, backend="cpu").dist.tolist() == [0.0, 1.5, 2.5]
    assert g.labels is None  # nodes 0, 1, 2 in order


def arcs(g: Graph) -> list[tuple]:
    """(source, target, weight) of every arc in CSR order (rows in their stored order)."""
    src, dst, w = g.edges()
    return list(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True))


def test_from_networkx_rows_follow_the_adjacency_order_of_graphs_and_views():
    """Each row lists the neighbours in the order NetworkX's Dijkstra walks them (G.adj, an
    undirected edge from both ends), read from the graph's own dicts or, for a view whose
    adjacency is not a dict, through the view; ``reverse=True`` follows G.pred, each arc weighed
    as the edge it reverses."""
    G = nx.DiGraph()
    G.add_nodes_from(range(4))
    G.add_weighted_edges_from([(0, 3, 1), (0, 1, 2), (2, 1, 3), (0, 2, 4), (3, 1, 5)])
    assert arcs(Graph.from_networkx(G)) == [(0, 3, 1), (0, 1, 2), (0, 2, 4), (2, 1, 3), (3, 1, 5)]
    back = Graph.from_networkx(G, reverse=True)  # into 1: from 0, then 2, then 3
    assert arcs(back) == [(1, 0, 2), (1, 2, 3), (1, 3, 5), (2, 0, 4), (3, 0, 1)]
    view = nx.subgraph_view(G, filter_edge=lambda u, v: (u, v) != (0, 1))
    assert not isinstance(view._adj, dict)
    assert arcs(Graph.from_networkx(view)) == [(0, 3, 1), (0, 2, 4), (2, 1, 3), (3, 1, 5)]
    U = nx.Graph()
    U.add_weighted_edges_from([(2, 0, 1), (1, 2, 2), (0, 1, 3)])  # nodes 2, 0, 1: ids 0, 1, 2
    assert arcs(Graph.from_networkx(U)) == [
        (0, 1, 1), (0, 2, 2), (1, 0, 1), (1, 2, 3), (2, 0, 2), (2, 1, 3)
    ]  # fmt: skip


def test_from_networkx_integer_labels_out_of_order():
    G = nx.DiGraph()
    G.add_edge(7, 3, weight=2)
    g = Graph.from_networkx(G)
    assert g.labels.tolist() == [7, 3] and g.labels.dtype == np.int64
    assert g.index_of(3) == 1


def test_string_labels_round_trip_and_other_labels_are_refused(tmp_path):
    G = nx.path_graph(["x", "y", "z"])
    g = Graph.from_networkx(G)
    sssp.save(g, tmp_path / "s.npz")
    back = sssp.load(tmp_path / "s.npz")
    assert back.labels.tolist() == ["x", "y", "z"] and back.index_of("z") == 2 and back == g
    grid = Graph.from_networkx(nx.grid_2d_graph(2, 2))
    with pytest.raises(sssp.SSSPError, match="labels other than integers and strings"):
        sssp.save(grid, tmp_path / "t.npz")
    assert not (tmp_path / "t.npz").exists()


# -- the diameter class (sssp.classes.diameter_class) ------------------------------------------


def _grid(side: int) -> Graph:
    """A 4-neighbour side x side grid, edges both ways (hop diameter 2 * (side - 1))."""
    idx = np.arange(side * side).reshape(side, side)
    src = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    dst = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    return Graph.from_edges(
        side * side, np.r_[src, dst], np.r_[dst, src], np.ones(2 * src.size, np.int64)
    )


def test_diameter_class_of_a_grid_and_a_random_graph():
    from sssp.classes import diameter_class

    grid = diameter_class(_grid(60))
    assert (grid.hops, grid.reached, grid.label) == (118, 3600, "highdiam")
    rnd = diameter_class(sssp.generate("random", size=4096, degree=4, seed=1))
    assert rnd.label == "lowdiam" and rnd.ratio < 2


def test_diameter_class_edge_cases():
    from sssp.classes import diameter_class

    one = Graph.from_edges(1, [], [], [])
    assert (diameter_class(one).hops, diameter_class(one).label) == (0, "lowdiam")
    # a directed path is measured as undirected: the sweep finds both ends
    path = Graph.from_edges(50, np.arange(49), np.arange(1, 50), np.ones(49, np.int64))
    est = diameter_class(path)
    assert (est.hops, est.reached, est.label) == (49, 50, "highdiam")
    # two components: the one holding the node of largest degree is measured
    star_and_path = Graph.from_edges(
        30,
        np.r_[np.zeros(5, int), np.arange(10, 29)],
        np.r_[np.arange(1, 6), np.arange(11, 30)],
        np.ones(24, np.int64),
    )
    est = diameter_class(star_and_path)
    assert (est.hops, est.reached) == (2, 6)
