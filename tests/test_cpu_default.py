"""The CPU default algorithm (:func:`sssp.cpu.default_algorithm`): the rule, one rule for
``solve()``, ``Solver`` and ``sssp solve --backend cpu``, and the graphs ``solve`` accepts."""

from __future__ import annotations

import inspect
import json

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import sssp
from sssp.cli import main
from sssp.cpu import NEAR_FAR_BATCH_WORKERS, NEAR_FAR_MAX_DEGREE, default_algorithm
from sssp.cpu.many import available_cores
from sssp.errors import ConfigIgnoredWarning, InvalidTypeError

pytestmark = pytest.mark.timeout(300)


def random_graph(
    n: int, degree: float, *, unit: bool = False, max_weight: int = 100, seed: int = 0
) -> sssp.Graph:
    rng = np.random.default_rng(seed)
    m = int(n * degree)
    w = np.ones(m, dtype=np.int64) if unit else rng.integers(1, max_weight + 1, m)
    return sssp.Graph.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), w)


@pytest.mark.parametrize(
    ("graph", "want"),
    [
        (random_graph(2000, 20), "dijkstra"),  # varied weights, denser: SciPy's Dijkstra
        (random_graph(2000, 20, unit=True), "near-far"),  # unit weights
        (random_graph(2000, 2), "near-far"),  # sparse
        (random_graph(2000, NEAR_FAR_MAX_DEGREE + 0.5), "dijkstra"),
        (
            random_graph(2000, 20, max_weight=2**50),
            "near-far",
        ),  # beyond SciPy's exact float64 range
        (sssp.Graph([0, 0, 0], [], []), "near-far"),  # no edges
    ],
    ids=["dense", "unit", "sparse", "above-threshold", "huge-weights", "no-edges"],
)
def test_the_rule(graph, want):
    assert default_algorithm(graph) == want
    assert (
        default_algorithm(graph, "predecessors") == "crauser"
    )  # the variant exists for Crauser only
    # Batches on many cores: SciPy's Dijkstra would use one of them.
    assert default_algorithm(graph, workers=NEAR_FAR_BATCH_WORKERS - 1) == want
    assert default_algorithm(graph, workers=NEAR_FAR_BATCH_WORKERS) == "near-far"


def test_solve_is_solver_with_one_parameter_list_and_defaults():
    solver = inspect.signature(sssp.Solver.__init__).parameters
    front = inspect.signature(sssp.solve).parameters
    for name, p in solver.items():
        if name in ("self", "graph") or p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        assert name in front, f"solve() lacks Solver's {name}"
        assert front[name].default == p.default, (
            f"solve()'s {name} defaults to {front[name].default!r}"
        )


@pytest.mark.parametrize(
    "graph",
    [random_graph(1500, 20), random_graph(1500, 2), random_graph(1500, 20, unit=True)],
    ids=["dense", "sparse", "unit"],
)
def test_solve_solver_and_many_sources_take_the_same_default(graph):
    want = default_algorithm(graph)
    with sssp.Solver(graph, backend="cpu") as solver:
        assert solver.algorithm == want
    assert sssp.solve(graph, 0, backend="cpu").algorithm == want
    batch = default_algorithm(graph, workers=min(8, available_cores()))
    assert sssp.solve(graph, range(8), backend="cpu").algorithm == batch
    assert sssp.solve(graph, [0, 1], backend="cpu", min_only=True).algorithm == want  # one solve
    with pytest.warns(ConfigIgnoredWarning, match="tuned=True is ignored"):  # for the GPU
        assert sssp.solve(graph, 0, backend="cpu", tuned=True).algorithm == want
    with pytest.warns(ConfigIgnoredWarning, match="tuned=True is ignored"):
        assert sssp.Solver(graph, backend="cpu", tuned=True).algorithm == want
    assert sssp.solve(graph, 0, backend="cpu", algorithm="auto").algorithm == want
    assert (
        sssp.solve(graph, 0, backend="cpu", algorithm="crauser").algorithm == "crauser"
    )  # still there
    assert (
        sssp.solve(graph, 0, backend="cpu", delta=8).algorithm == "near-far"
    )  # a Δ names near-far
    assert sssp.solve(graph, 0, backend="cpu", variant="predecessors").algorithm == "crauser"


@pytest.mark.parametrize(("degree", "unit"), [(20, False), (2, False)], ids=["dense", "sparse"])
def test_cli_solve_on_the_cpu_runs_the_rule(tmp_path, capsys, degree, unit):
    g = random_graph(1500, degree, unit=unit)
    path = tmp_path / "g.npz"
    sssp.save(g, path)
    assert main(["solve", str(path), "--backend", "cpu", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["algorithm"] == default_algorithm(g)
    assert main(["solve", str(path), "--backend", "cpu", "--algorithm", "crauser", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["algorithm"] == "crauser"


# -- the graphs solve() accepts ------------------------------------------------------------------------
def test_solve_accepts_scipy_and_networkx_graphs():
    g = random_graph(300, 4)
    want = sssp.solve(g, [0, 5], backend="cpu").dist
    for matrix in (g.to_scipy(), sp.csr_array(g.to_scipy()), sp.coo_matrix(g.to_scipy())):
        np.testing.assert_array_equal(sssp.solve(matrix, [0, 5], backend="cpu").dist, want)
    G = nx.DiGraph()
    G.add_nodes_from(range(g.n))
    src, dst, w = g.edges()
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist(), strict=True):
        if not G.has_edge(u, v) or G[u][v]["weight"] > x:
            G.add_edge(u, v, weight=x)
    np.testing.assert_array_equal(sssp.solve(G, [0, 5], backend="cpu").dist, want)
    assert sssp.as_graph(g) is g
    labelled = nx.relabel_nodes(G, {i: f"v{i}" for i in G})
    r = sssp.solve(labelled, 0, backend="cpu")  # node indices, in the order of G.nodes
    assert r.dist[5] == want[0, 5]


@pytest.mark.parametrize(
    "value", [np.eye(3), [[0, 1], [1, 0]], "g.npz", None], ids=["dense", "list", "str", "None"]
)
def test_other_inputs_are_refused_with_a_hint(value):
    with pytest.raises(
        InvalidTypeError, match="expected an sssp.Graph, a SciPy sparse matrix or a NetworkX graph"
    ):
        sssp.solve(value, 0, backend="cpu")
    if isinstance(value, np.ndarray | list):
        with pytest.raises(InvalidTypeError, match="Graph.from_scipy"):
            sssp.as_graph(value)
