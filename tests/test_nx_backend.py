"""The NetworkX backend ``"sssp"``: installed, equal to NetworkX on random graphs of every kind,
refusing what it cannot solve so that NetworkX runs it, and NetworkX's own shortest-path test
suite run against it (``NETWORKX_TEST_BACKEND=sssp``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

nx = pytest.importorskip("networkx")

import sssp  # noqa: E402
from sssp.nxbackend import FUNCTIONS  # noqa: E402
from sssp.nxbackend.interface import EXPECTED_FAILURES, BackendInterface, can_run  # noqa: E402

pytestmark = pytest.mark.timeout(600)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _quiet_cache_note():
    # NetworkX notes once per call that it reuses a cached conversion; the tests reuse graphs.
    added = "cache" not in nx.config.warnings_to_ignore
    nx.config.warnings_to_ignore.add("cache")
    yield
    if added:
        nx.config.warnings_to_ignore.discard("cache")


def test_entry_points_are_installed():
    backends = {ep.name: ep.value for ep in entry_points(group="networkx.backends")}
    infos = {ep.name: ep.value for ep in entry_points(group="networkx.backend_info")}
    assert backends.get("sssp") == "sssp.nxbackend.interface:BackendInterface"
    assert infos.get("sssp") == "sssp.nxbackend:get_info"
    info = nx.utils.backends.backend_info["sssp"]
    assert set(info["functions"]) == set(FUNCTIONS)
    assert nx.config.backends.sssp.backend == "auto"
    for name in FUNCTIONS:  # NetworkX documents the backend on each function
        assert "sssp" in getattr(nx, name).backends


def test_import_networkx_does_not_pull_in_the_solvers():
    # NetworkX reads get_info() while it is imported: that imports the sssp package (NumPy),
    # but neither SciPy, numba nor pycuda.
    code = "import sys, networkx; print(sorted(m for m in ('numba', 'scipy', 'pycuda') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def graphs():
    rng = np.random.default_rng(0)
    out = []
    for kind in (nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph):
        G = kind()
        G.add_nodes_from(f"n{i}" for i in range(60))
        for _ in range(240):
            u, v = (f"n{i}" for i in rng.integers(0, 60, 2))
            G.add_edge(u, v, weight=int(rng.integers(0, 6)), length=float(rng.random() * 3))
        G.add_node("lonely")
        out.append(G)
    return out


GRAPHS = graphs()
IDS = ["Graph", "DiGraph", "MultiGraph", "MultiDiGraph"]


def same_lengths(a: dict, b: dict) -> None:
    """Equal, in NetworkX's order (the order its Dijkstra settles the nodes, ties included)."""
    assert list(a.items()) == list(b.items())
    assert all(type(a[k]) is type(b[k]) or isinstance(a[k], float) for k in a)


def check_paths(G, paths: dict, lengths: dict, weight="weight") -> None:
    """Every path ends at its node, walks edges of G and weighs the node's distance."""
    for v, path in paths.items():
        assert path[-1] == v
        if weight is None:
            assert nx.is_path(G, path) and len(path) - 1 == lengths[v]
        else:
            assert nx.path_weight(G, path, weight) == pytest.approx(lengths[v])


@pytest.mark.parametrize("G", GRAPHS, ids=IDS)
@pytest.mark.parametrize("weight", ["weight", "length", None])
@pytest.mark.parametrize("cutoff", [None, 3])
def test_single_and_multi_source_functions_equal_networkx(G, weight, cutoff):
    s = "n0"
    want = nx.single_source_dijkstra_path_length(G, s, cutoff=cutoff, weight=weight)
    got = nx.single_source_dijkstra_path_length(G, s, cutoff=cutoff, weight=weight, backend="sssp")
    same_lengths(got, want)
    assert list(got.values()) == sorted(got.values())  # nearest first, as NetworkX settles them
    d, p = nx.single_source_dijkstra(G, s, cutoff=cutoff, weight=weight, backend="sssp")
    same_lengths(d, want)
    check_paths(G, p, d, weight)
    assert p == nx.single_source_dijkstra(G, s, cutoff=cutoff, weight=weight)[1]  # NetworkX's paths
    paths = nx.single_source_dijkstra_path(G, s, cutoff=cutoff, weight=weight, backend="sssp")
    assert list(paths.items()) == list(p.items())
    sources = {"n0", "n7", "n33"}
    want = nx.multi_source_dijkstra_path_length(G, sources, cutoff=cutoff, weight=weight)
    same_lengths(
        nx.multi_source_dijkstra_path_length(
            G, sources, cutoff=cutoff, weight=weight, backend="sssp"
        ),
        want,
    )
    d, p = nx.multi_source_dijkstra(G, sources, cutoff=cutoff, weight=weight, backend="sssp")
    same_lengths(d, want)
    for v, path in p.items():
        assert path[0] in sources and path[-1] == v
    assert p == nx.multi_source_dijkstra(G, sources, cutoff=cutoff, weight=weight)[1]
    assert list(
        nx.multi_source_dijkstra_path(G, sources, cutoff=cutoff, weight=weight, backend="sssp")
    ) == list(want)


@pytest.mark.parametrize("G", GRAPHS, ids=IDS)
def test_targets_and_no_paths(G):
    reach = nx.single_source_dijkstra_path_length(G, "n1")
    t = next(v for v in reach if v != "n1")
    length, path = nx.single_source_dijkstra(G, "n1", target=t, backend="sssp")
    assert length == reach[t] and nx.path_weight(G, path, "weight") == length
    assert (length, path) == nx.single_source_dijkstra(G, "n1", target=t)
    assert nx.dijkstra_path_length(G, "n1", t, backend="sssp") == reach[t]
    assert nx.dijkstra_path(G, "n1", t, backend="sssp") == nx.dijkstra_path(G, "n1", t)
    for v in reach:
        if v != "n1":
            assert nx.bidirectional_dijkstra(G, "n1", v, backend="sssp") == (
                nx.bidirectional_dijkstra(G, "n1", v)
            )
    assert nx.single_source_dijkstra(G, "n1", target="n1", backend="sssp") == (0, ["n1"])
    for call, match in (
        (lambda: nx.dijkstra_path(G, "n1", "lonely", backend="sssp"), "No path to lonely"),
        (lambda: nx.dijkstra_path_length(G, "n1", "lonely", backend="sssp"), "not reachable"),
        (lambda: nx.bidirectional_dijkstra(G, "n1", "lonely", backend="sssp"), "No path between"),
    ):
        with pytest.raises(nx.NetworkXNoPath, match=match):
            call()
    for name in ("dijkstra_path", "dijkstra_path_length", "bidirectional_dijkstra"):
        with pytest.raises(nx.NodeNotFound):
            getattr(nx, name)(G, "nope", "n1", backend="sssp")
    with pytest.raises(ValueError, match="sources must not be empty"):
        nx.multi_source_dijkstra(G, [], backend="sssp")


@pytest.mark.parametrize("G", GRAPHS, ids=IDS)
def test_predecessor_lists_hold_every_shortest_path(G):
    for cutoff in (None, 2):
        got_p, got_d = nx.dijkstra_predecessor_and_distance(G, "n2", cutoff=cutoff, backend="sssp")
        want_p, want_d = nx.dijkstra_predecessor_and_distance(G, "n2", cutoff=cutoff)
        same_lengths(got_d, want_d)
        assert list(got_p.items()) == list(want_p.items())  # each list in NetworkX's order


@pytest.mark.parametrize("G", GRAPHS[:2], ids=IDS[:2])
def test_all_pairs_generators(G):
    got = nx.all_pairs_dijkstra_path_length(G, cutoff=4, backend="sssp")
    assert iter(got) is got  # a generator, as NetworkX's
    got = dict(got)
    assert list(got) == list(G) and got == dict(nx.all_pairs_dijkstra_path_length(G, cutoff=4))
    paths = dict(nx.all_pairs_dijkstra_path(G, backend="sssp"))
    both = dict(nx.all_pairs_dijkstra(G, backend="sssp"))
    lengths = dict(nx.all_pairs_dijkstra_path_length(G))
    for s in G:
        same_lengths(both[s][0], lengths[s])
        check_paths(G, paths[s], lengths[s])
        assert all(p[0] == s for p in paths[s].values())
        assert paths[s] == both[s][1] == nx.single_source_dijkstra_path(G, s)


def test_callable_weights_are_called_per_direction():
    G = nx.cycle_graph(7)

    def weight(u, v, _):  # not symmetric: u -> v and v -> u cost differently
        return 1 + v**2

    for s in G:
        want = nx.single_source_dijkstra_path_length(G, s, weight=weight)
        assert nx.single_source_dijkstra_path_length(G, s, weight=weight, backend="sssp") == want
    hidden = nx.single_source_dijkstra_path_length(
        G, 0, weight=lambda u, v, d: None if v == 3 else 1, backend="sssp"
    )
    assert 3 not in hidden and hidden[4] == 3


def tied_graphs():
    """Small graphs where most distances tie (weights 0-2, unit, tenths whose sums round, a
    callable that weighs the two directions differently), of every kind, nodes not in id order."""
    rng = np.random.default_rng(7)
    out = []
    for trial in range(24):
        kind = (nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph)[trial % 4]
        G = kind()
        n = int(rng.integers(2, 40))
        G.add_nodes_from(rng.permutation(n).tolist())
        for _ in range(int(rng.integers(n, 4 * n))):
            u, v = rng.integers(0, n, 2).tolist()
            G.add_edge(u, v, w=int(rng.integers(0, 3)), f=float(rng.choice([0.1, 0.2, 0.3, 0.0])))
        out.append((G, ["w", "f", None, lambda u, v, d: 1 + (v % 3)][trial % 4]))
    return out


@pytest.mark.parametrize(("G", "weight"), tied_graphs())
def test_ties_come_out_as_networkx(G, weight):
    """Among equal shortest paths the backend returns NetworkX's: the same dict order, the same
    paths, the same predecessor lists, the same two-way path, from one source or several and
    with a cutoff (the backend rebuilds NetworkX's settling order from the distances)."""
    nodes = list(G)
    for s in nodes[:4]:
        for cutoff in (None, 1):
            want = nx.single_source_dijkstra(G, s, cutoff=cutoff, weight=weight)
            got = nx.single_source_dijkstra(G, s, cutoff=cutoff, weight=weight, backend="sssp")
            same_lengths(got[0], want[0])
            assert list(got[1].items()) == list(want[1].items())
            got_p = nx.dijkstra_predecessor_and_distance(
                G, s, cutoff=cutoff, weight=weight, backend="sssp"
            )
            assert got_p == nx.dijkstra_predecessor_and_distance(G, s, cutoff=cutoff, weight=weight)
            assert list(got_p[0].items()) == list(
                nx.dijkstra_predecessor_and_distance(G, s, cutoff=cutoff, weight=weight)[0].items()
            )
        for t in nodes[-3:]:
            try:
                want_two = nx.bidirectional_dijkstra(G, s, t, weight=weight)
            except nx.NetworkXNoPath:
                with pytest.raises(nx.NetworkXNoPath):
                    nx.bidirectional_dijkstra(G, s, t, weight=weight, backend="sssp")
                continue
            assert nx.bidirectional_dijkstra(G, s, t, weight=weight, backend="sssp") == want_two
    sources = nodes[1:4]
    want = nx.multi_source_dijkstra(G, sources, weight=weight)
    got = nx.multi_source_dijkstra(G, sources, weight=weight, backend="sssp")
    same_lengths(got[0], want[0])
    assert list(got[1].items()) == list(want[1].items())


def test_two_way_search_on_searches_past_the_first_heap_size():
    """The compiled two-way search starts with heaps of 1024 entries and doubles them: corner to
    corner on an 80 x 80 unit grid (thousands of pushes, ties everywhere) and across a random
    directed graph, the answer is NetworkX's."""
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(80, 80))
    for s, t in [(0, 6399), (0, 79), (40, 6000)]:
        assert nx.bidirectional_dijkstra(G, s, t, backend="sssp") == nx.bidirectional_dijkstra(
            G, s, t
        )
    D = nx.gnm_random_graph(5000, 40000, seed=3, directed=True)
    rng = np.random.default_rng(4)
    for (u, v), w in zip(D.edges(), rng.integers(1, 4, D.number_of_edges()).tolist(), strict=True):
        D[u][v]["weight"] = w
    for s, t in [(0, 4999), (10, 20), (7, 3000)]:
        assert nx.bidirectional_dijkstra(D, s, t, backend="sssp") == nx.bidirectional_dijkstra(
            D, s, t
        )


def test_two_way_search_order_needs_the_networkx_graph():
    """The backward search walks the NetworkX graph's predecessor order while that graph lives
    with the edges it was converted with; after an edge is added, the converted graph's own
    reverse (the answer is still a shortest path of the converted graph)."""
    from sssp.nxbackend.graph import BackendGraph, _same_arcs

    G = nx.DiGraph()
    G.add_nodes_from(range(4))
    G.add_edges_from([(3, 2), (1, 2), (0, 1), (0, 3)], weight=1)
    B = BackendGraph.from_networkx(G, {"weight": 1})
    back = B.backward_for("weight")
    assert back.indices[back.indptr[2] : back.indptr[3]].tolist() == [3, 1]  # 3 -> 2 came first
    plain = B.graph_for("weight").reverse()
    assert plain.indices[plain.indptr[2] : plain.indptr[3]].tolist() == [1, 3]
    assert B.backward_for("weight") is back  # kept
    assert _same_arcs(back, B.graph_for("weight").reverse())
    G.add_edge(2, 0, weight=1)
    fresh = BackendGraph.from_networkx(G, {"weight": 1})
    G.add_edge(1, 3)
    stale = fresh.backward_for("weight")
    assert _same_arcs(stale, fresh.graph_for("weight").reverse())
    assert stale.m == 5  # the converted graph's edges, not the grown one's
    assert nx.bidirectional_dijkstra(fresh, 0, 2, backend="sssp")[0] == 2


def test_from_networkx_calls_a_callable_per_direction():
    G = nx.path_graph(3)
    g = sssp.Graph.from_networkx(G, weight=lambda u, v, d: 10 * u + v)
    src, dst, w = g.edges()
    assert sorted(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True)) == [
        (0, 1, 1),
        (1, 0, 10),
        (1, 2, 12),
        (2, 1, 21),
    ]


# -- what the backend refuses, NetworkX runs -----------------------------------------------------------
def negative_graph():
    G = nx.DiGraph()
    G.add_weighted_edges_from([(0, 1, 2), (1, 2, -1), (0, 2, 4)])
    return G


@pytest.mark.parametrize(
    ("args", "kwargs", "reason"),
    [
        ((negative_graph(), 0), {}, "is negative"),
        ((nx.DiGraph([(0, 1, {"weight": "heavy"})]), 0), {}, "is not a number"),
        ((nx.DiGraph([(0, 1, {"weight": float("inf")})]), 0), {}, "not finite"),
        ((nx.path_graph(3), 0), {"cutoff": -1}, "cutoff -1"),
        ((nx.path_graph(3), 0), {"cutoff": float("nan")}, "cutoff nan"),
    ],
)
def test_can_run_says_why_not(args, kwargs, reason):
    verdict = can_run("single_source_dijkstra_path_length", args, kwargs)
    assert isinstance(verdict, str) and reason in verdict
    assert can_run("single_source_dijkstra_path_length", (nx.path_graph(3), 0), {}) is True
    assert (
        can_run("single_source_dijkstra", (nx.path_graph(3), 0), {"weight": lambda u, v, d: 1})
        is True
    )
    assert "does not implement" in can_run("astar_path", (nx.path_graph(3), 0, 2), {})


def test_networkx_runs_what_the_backend_refuses():
    G = negative_graph()
    before = list(nx.config.backend_priority.algos)
    nx.config.backend_priority.algos = ["sssp"]
    try:
        # NetworkX's own answer (its Dijkstra on negative weights), not an sssp error:
        assert nx.single_source_dijkstra_path_length(G, 0) == nx.single_source_dijkstra_path_length(
            G, 0, backend="networkx"
        )
        bad = nx.cycle_graph(4)

        def raising(u, v, d):
            raise KeyError("colour")

        with pytest.raises(
            KeyError, match="colour"
        ):  # the user's own exception, from NetworkX's call
            nx.single_source_dijkstra_path_length(bad, 0, weight=raising)
    finally:
        nx.config.backend_priority.algos = before
    with pytest.raises(NotImplementedError):  # asked for by name: NetworkX does not fall back
        nx.single_source_dijkstra_path_length(G, 0, backend="sssp")


def test_backend_graphs_convert_both_ways():
    G = GRAPHS[1]
    B = BackendInterface.convert_from_nx(G, edge_attrs={"weight": 1})
    assert B.__networkx_backend__ == "sssp" and len(B) == len(G) and "n3" in B and "nope" not in B
    assert sssp.as_graph(B) is B.graph_for("weight")
    back = BackendInterface.convert_to_nx(B)
    assert set(back.edges()) == set(G.edges())
    assert nx.single_source_dijkstra_path_length(B, "n0") == nx.single_source_dijkstra_path_length(
        G, "n0"
    )
    with pytest.raises(NotImplementedError, match="converted without"):
        B.graph_for("length")


# -- NetworkX's own tests ------------------------------------------------------------------------------
def run_networkx_suite(tmp_path: Path, target: str) -> dict:
    probe = tmp_path / "probe.json"
    env = {
        **os.environ,
        "NETWORKX_TEST_BACKEND": "sssp",
        "NETWORKX_FALLBACK_TO_NX": "True",
        "SSSP_NX_PROBE": str(probe),
        "PYTHONPATH": os.pathsep.join([str(REPO / "tests"), str(REPO)]),
    }
    env.pop("NETWORKX_BACKEND_PRIORITY", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "nx_backend_probe",
            "-p",
            "no:cacheprovider",
            "-q",
            "--pyargs",
            *target.split(),
            "-o",
            "addopts=",
            "--rootdir",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=560,
    )
    assert probe.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(probe.read_text())
    result["log"] = proc.stdout[-3000:]
    result["returncode"] = proc.returncode
    return result


def test_networkx_shortest_path_suite_passes_against_the_backend(tmp_path):
    r = run_networkx_suite(tmp_path, "networkx.algorithms.shortest_paths")
    failed = sorted(k for k, v in r["outcomes"].items() if v == "failed")
    assert not failed, r["log"]
    assert r["returncode"] == 0, r["log"]
    xfailed = {
        k.split("::", 1)[1].replace("::", ".") for k, v in r["outcomes"].items() if v == "xfailed"
    }
    assert xfailed <= {name for _, name in EXPECTED_FAILURES}, xfailed
    # The suite really ran on the backend: every function was called, many times over.
    assert set(r["calls"]) >= {
        "single_source_dijkstra",
        "dijkstra_predecessor_and_distance",
        "multi_source_dijkstra",
        "all_pairs_dijkstra_path_length",
        "dijkstra_path",
    }
    assert sum(r["calls"].values()) > 100, r["calls"]
    assert r["refused"], "the negative-weight tests should have been handed back to NetworkX"


CALLER_SUITES = [
    "networkx.algorithms.tests.test_cycles",
    "networkx.algorithms.tests.test_voronoi",
    "networkx.algorithms.tests.test_distance_measures",
    "networkx.algorithms.centrality.tests.test_closeness_centrality",
    "networkx.algorithms.approximation.tests.test_steinertree",
    "networkx.algorithms.approximation.tests.test_traveling_salesman",
    "networkx.algorithms.tests.test_simple_paths",
]


@pytest.mark.slow
def test_networkx_algorithms_built_on_dijkstra_pass_against_the_backend(tmp_path):
    """NetworkX's tests of the algorithms that call the Dijkstra functions (cycle bases,
    Voronoi cells, eccentricity, closeness, Steiner trees, TSP, simple paths): no failure but
    the ones the backend declares."""
    r = run_networkx_suite(tmp_path, " ".join(CALLER_SUITES))
    failed = sorted(k for k, v in r["outcomes"].items() if v == "failed")
    assert not failed, r["log"]
    xfailed = {
        k.split("::", 1)[1].replace("::", ".") for k, v in r["outcomes"].items() if v == "xfailed"
    }
    assert xfailed == {name for file, name in EXPECTED_FAILURES}, xfailed
    assert sum(r["calls"].values()) > 500, r["calls"]
