"""Many sources at once on the CPU: ``sssp.solve(g, sources)`` and ``Solver.solve_many``.

Every check compares with SciPy's ``dijkstra(indices=...)`` (distances bit for bit) and
validates each predecessor row as a shortest-path tree; bad input is refused before anything is
written (the caller's ``out`` keeps a marker value).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

import sssp
from sssp.cpu.reference import min_weight_csr
from sssp.errors import InvalidArgumentError, InvalidGraphError, InvalidTypeError
from sssp.many import MEMORY_BUDGET, chunk_rows, release_rows, roots
from sssp.result import MultiSourceResult, NearestSourceResult, SSSPResult
from sssp.verify import check_tree

pytestmark = pytest.mark.timeout(300)

try:
    from tests.graph_folder import GRAPHS_DIR, required
except ImportError:  # pragma: no cover
    from graph_folder import GRAPHS_DIR, required

REPO = Path(__file__).resolve().parents[1]

ALGORITHMS = [
    ("dijkstra", "successors"),
    ("near-far", "successors"),
    ("crauser", "successors"),
    ("crauser", "predecessors"),
    ("crauser-in", "successors"),
    ("crauser-inout", "predecessors"),
    ("martin", "successors"),
    ("martin", "predecessors"),
]
MARK = -7  # what an untouched row of `out` holds


def random_graph(n: int = 300, m: int = 1500, seed: int = 0, *, real: bool = False) -> sssp.Graph:
    """A directed graph with zero weights, parallel edges and nodes nothing reaches (the last
    tenth has no in-edges)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, int(n * 0.9), m)
    w = rng.random(m) * 10 if real else rng.integers(0, 20, m)
    return sssp.Graph.from_edges(n, src, dst, w)


def reference(g: sssp.Graph, sources, **kwargs):
    return scipy_dijkstra(min_weight_csr(g), directed=True, indices=np.asarray(sources), **kwargs)


def check_rows(g: sssp.Graph, r: MultiSourceResult) -> None:
    """Every predecessor row is a shortest-path tree of its distance row."""
    assert r.pred is not None and r.pred.dtype == np.int32 and r.pred.shape == r.dist.shape
    fdist = r.dist_float
    for i, s in enumerate(r.sources.tolist()):
        d = fdist[i]
        if not g.is_float:  # back to the solvers' int64 with UNREACHABLE, whatever out's dtype
            d = np.where(np.isfinite(d), np.nan_to_num(d, posinf=0), 0).astype(np.int64)
            d[np.isinf(fdist[i])] = sssp.UNREACHABLE
        row = SSSPResult(
            dist=np.array(d),
            pred=np.array(r.pred[i]),
            source=s,
            algorithm=r.algorithm,
            variant=r.variant,
            backend=r.backend,
            iterations=int(r.iterations[i]),
        )
        check_tree(g, row)


# -- rows, order, dtypes -------------------------------------------------------------------------
@pytest.mark.parametrize(("algorithm", "variant"), ALGORITHMS)
@pytest.mark.parametrize("real", [False, True], ids=["int", "real"])
def test_rows_are_scipys_in_source_order(algorithm, variant, real):
    g = random_graph(real=real)
    sources = [5, 0, 5, g.n - 1, 17]  # a duplicate, and a node nothing else reaches
    r = sssp.solve(
        g, sources, algorithm=algorithm, variant=variant, backend="cpu", return_predecessors=True
    )
    assert isinstance(r, MultiSourceResult)
    assert (r.algorithm, r.variant, r.backend) == (algorithm, variant, "cpu")
    assert r.sources.tolist() == sources and r.sources.dtype == np.int64
    assert r.dist.shape == (5, g.n) and r.dist.dtype == (np.float64 if real else np.int64)
    assert r.iterations.shape == (5,) and r.iterations.dtype == np.int64
    want = reference(g, sources)
    np.testing.assert_array_equal(r.dist_float, want)
    np.testing.assert_array_equal(r.dist[0], r.dist[2])  # duplicates are rows of their own
    unreached = np.isinf(want)
    assert unreached.any()
    assert np.all(r.dist[unreached] == r.unreachable)
    assert r.unreachable == (np.inf if real else sssp.UNREACHABLE)
    check_rows(g, r)
    assert not r.dist.flags.writeable and not r.pred.flags.writeable


def test_one_source_keeps_returning_an_sssp_result():
    g = random_graph()
    one = sssp.solve(g, 3, backend="cpu")
    assert isinstance(one, SSSPResult) and one.source == 3 and one.pred.shape == (g.n,)
    assert isinstance(sssp.solve(g, np.int32(3), backend="cpu"), SSSPResult)
    many = sssp.solve(g, [3], backend="cpu")
    assert isinstance(many, MultiSourceResult) and many.dist.shape == (1, g.n)
    np.testing.assert_array_equal(many.dist[0], one.dist)
    assert many.pred is None  # predecessors only when asked for


@pytest.mark.parametrize(
    "sources",
    [
        range(0, 40, 3),
        (4, 2, 9),
        np.array([7, 1, 7], dtype=np.int32),
        np.array([2, 8], dtype=np.uint16),
    ],
    ids=["range", "tuple", "int32-array", "uint16-array"],
)
def test_every_sequence_kind(sources):
    g = random_graph()
    r = sssp.solve(g, sources, backend="cpu")
    assert r.sources.tolist() == [int(s) for s in sources]
    np.testing.assert_array_equal(r.dist_float, reference(g, list(sources)))


def test_solver_solve_many_reuses_its_workers():
    g = random_graph()
    with sssp.Solver(g, backend="cpu", algorithm="near-far") as solver:
        a = solver.solve_many(range(20))
        b = solver.solve(range(20, 40))
    np.testing.assert_array_equal(np.vstack([a.dist_float, b.dist_float]), reference(g, range(40)))
    assert not solver._rows  # closed with the solver


# -- out= and pred_out= --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.float32])
@pytest.mark.parametrize("algorithm", ["dijkstra", "near-far", "crauser"])
def test_out_takes_every_dtype_that_holds_the_distances(dtype, algorithm):
    g = random_graph()
    sources = list(range(0, g.n, 7))
    out = np.full((len(sources), g.n), MARK, dtype=dtype)
    pred_out = np.full((len(sources), g.n), MARK, dtype=np.int32)
    r = sssp.solve(g, sources, algorithm=algorithm, backend="cpu", out=out, pred_out=pred_out)
    assert np.shares_memory(r.dist, out) and np.shares_memory(r.pred, pred_out)
    assert out.flags.writeable  # the caller's array is left writable; the result's view is not
    want = reference(g, sources)
    sentinel = np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max
    expected = np.full(want.shape, sentinel, dtype=dtype)
    expected[np.isfinite(want)] = want[np.isfinite(want)]
    np.testing.assert_array_equal(expected, out)
    assert r.unreachable == sentinel
    np.testing.assert_array_equal(r.dist_float, want)
    check_rows(g, r)


def test_real_weights_take_float64_out_only():
    g = random_graph(real=True)
    out = np.empty((3, g.n))
    sssp.solve(g, [0, 1, 2], backend="cpu", out=out)
    np.testing.assert_array_equal(out, reference(g, [0, 1, 2]))
    with pytest.raises(InvalidTypeError, match="float64 for a graph with real weights"):
        sssp.solve(g, [0, 1, 2], backend="cpu", out=np.empty((3, g.n), np.float32))


def test_a_narrow_out_is_refused_up_front_unless_limit_bounds_the_distances():
    n = 1000
    g = sssp.Graph.from_edges(n, np.arange(n - 1), np.arange(1, n), np.full(n - 1, 3_000_000))
    out = np.full((2, n), MARK, dtype=np.int32)
    with pytest.raises(
        InvalidArgumentError, match=r"out dtype int32 cannot hold .* 2997000000 > 2147483646"
    ):
        sssp.solve(g, [0, 5], backend="cpu", out=out)
    assert np.all(out == MARK)
    r = sssp.solve(g, [0, 5], backend="cpu", out=out, limit=2_000_000_000)
    want = reference(g, [0, 5], limit=2_000_000_000)
    np.testing.assert_array_equal(r.dist_float, want)
    with pytest.raises(InvalidArgumentError, match="float32 cannot hold"):
        sssp.solve(g, [0], backend="cpu", out=np.empty((1, n), np.float32))


def test_rows_stream_into_a_memmap_in_chunks(tmp_path):
    g = random_graph(n=400, m=2400)
    path = tmp_path / "apsp.i32"
    out = np.memmap(path, dtype=np.int32, mode="w+", shape=(g.n, g.n))
    out[:] = MARK
    # A budget of 20 rows: the table goes through many chunks.
    r = sssp.solve(g, range(g.n), backend="cpu", out=out, memory_budget=20 * g.n * 12)
    assert r.stats["chunks"] > 10 and r.stats["chunk_rows"] * r.stats["chunks"] >= g.n
    del r, out
    table = np.fromfile(path, dtype=np.int32).reshape(g.n, g.n)
    want = reference(g, range(g.n))
    np.testing.assert_array_equal(np.where(np.isinf(want), np.iinfo(np.int32).max, want), table)


def test_release_rows_keeps_the_data_of_a_shared_map(tmp_path):
    out = np.memmap(tmp_path / "t", dtype=np.int64, mode="w+", shape=(64, 1000))
    out[:] = np.arange(64 * 1000).reshape(64, 1000)
    release_rows(out, 3, 40)
    np.testing.assert_array_equal(out, np.arange(64 * 1000).reshape(64, 1000))
    private = np.memmap(tmp_path / "t", dtype=np.int64, mode="c", shape=(64, 1000))
    private[:] = 5
    release_rows(private, 0, 64)  # copy-on-write maps are left alone: their changes live in memory
    assert np.all(private == 5)


def test_chunk_rule():
    assert chunk_rows(1000, 10_000, 1000, 100_000) == 100
    assert chunk_rows(1000, 50, 1000, 100_000) == 50  # never more than k
    assert (
        chunk_rows(10**9, 10, 8 * 10**9, MEMORY_BUDGET) == 1
    )  # one row beyond the budget: still a row
    assert chunk_rows(100, 1000, 60, 100, workers=2) == 2  # grows to the workers when that fits


# -- bad input: one clear error, nothing written ---------------------------------------------------
BAD = [
    ({"sources": []}, InvalidArgumentError, "sources is empty"),
    ({"sources": np.array([], dtype=np.int64)}, InvalidArgumentError, "sources is empty"),
    ({"sources": [0, 300]}, InvalidGraphError, r"source 300 is out of range \[0, 300\)"),
    ({"sources": [-1, 2]}, InvalidGraphError, r"source -1 is out of range"),
    ({"sources": [0, 1.7]}, InvalidTypeError, "source 1.7 is not an integer node id"),
    ({"sources": [0, True]}, InvalidTypeError, "source True is not an integer node id"),
    ({"sources": [0, "3"]}, InvalidTypeError, "source '3' is not an integer node id"),
    ({"sources": np.array([0.0, 1.0])}, InvalidTypeError, "source 0.0 is not an integer node id"),
    ({"sources": {1, 2}}, InvalidTypeError, "ordered sequence"),
    ({"sources": np.zeros((2, 2), dtype=int)}, InvalidArgumentError, "one-dimensional"),
    (
        {"out": np.zeros((2, 300), dtype=np.int64)},
        InvalidArgumentError,
        r"out has shape \(2, 300\), expected \(3, 300\)",
    ),
    (
        {"out": np.zeros((3, 300), dtype=np.uint8)},
        InvalidTypeError,
        "out must be int64, int32, float64 or float32",
    ),
    ({"out": [[0] * 300] * 3}, InvalidTypeError, "out must be a NumPy array"),
    ({"out": "readonly"}, InvalidArgumentError, "out is read-only"),
    ({"pred_out": np.zeros((3, 300), dtype=np.int64)}, InvalidTypeError, "pred_out must be int32"),
    (
        {"pred_out": np.zeros((3, 300), dtype=np.int32), "return_predecessors": False},
        InvalidArgumentError,
        "return_predecessors=False",
    ),
    ({"limit": -1}, InvalidArgumentError, "limit must be a non-negative number, got -1"),
    ({"limit": float("nan")}, InvalidArgumentError, "limit must be a non-negative number, got nan"),
    ({"limit": "5"}, InvalidTypeError, "limit must be a non-negative number, got '5'"),
    ({"limit": True}, InvalidTypeError, "limit must be a non-negative number"),
    ({"min_only": True, "out": "marked"}, InvalidArgumentError, "min_only=True returns one row"),
    (
        {"memory_budget": 0},
        InvalidArgumentError,
        "memory_budget must be a positive number of bytes",
    ),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD, ids=[m for _, _, m in BAD])
def test_bad_input_is_one_clear_error_and_writes_nothing(kwargs, error, message):
    g = random_graph()
    kwargs = dict(kwargs)
    sources = kwargs.pop("sources", [0, 1, 2])
    out = np.full((3, g.n), MARK, dtype=np.int64)
    if isinstance(kwargs.get("out"), str):
        if kwargs["out"] == "readonly":
            out.flags.writeable = False
        kwargs["out"] = out
    kwargs.setdefault("out", out)
    with pytest.raises(error, match=message):
        sssp.solve(g, sources, backend="cpu", **kwargs)
    assert np.all(out == MARK)


def test_out_and_pred_out_must_not_overlap():
    g = random_graph()
    block = np.zeros((3, 2 * g.n), dtype=np.int32)
    with pytest.raises(InvalidArgumentError, match="overlap"):
        sssp.solve(
            g,
            [0, 1, 2],
            backend="cpu",
            out=block[:, : g.n],
            pred_out=block[:, g.n // 2 : g.n // 2 + g.n],
        )


def test_many_only_options_are_refused_for_one_source():
    g = random_graph()
    with pytest.raises(InvalidArgumentError, match="out= applies to a sequence of sources"):
        sssp.solve(g, 0, backend="cpu", out=np.empty((1, g.n), np.int64))


# -- limit ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["dijkstra", "near-far", "crauser", "martin"])
@pytest.mark.parametrize("real", [False, True], ids=["int", "real"])
def test_limit_is_scipys(algorithm, real):
    g = random_graph(real=real, seed=3)
    sources = [0, 4, 9]
    for limit in (0, 7, 7.5, 25, np.inf):
        r = sssp.solve(
            g, sources, algorithm=algorithm, backend="cpu", limit=limit, return_predecessors=True
        )
        np.testing.assert_array_equal(r.dist_float, reference(g, sources, limit=limit))
        check_rows(g, r)
        one = sssp.solve(g, 4, algorithm=algorithm, backend="cpu", limit=limit)
        np.testing.assert_array_equal(one.dist_float, reference(g, [4], limit=limit)[0])
        check_tree(g, one)


# -- min_only --------------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["dijkstra", "near-far", "crauser", "martin"])
@pytest.mark.parametrize("real", [False, True], ids=["int", "real"])
def test_min_only_is_the_nearest_source(algorithm, real):
    g = random_graph(real=real, seed=5)
    sources = [3, 40, 40, 211]
    for limit in (None, 12):
        r = sssp.solve(
            g,
            sources,
            algorithm=algorithm,
            backend="cpu",
            min_only=True,
            return_predecessors=True,
            limit=limit,
        )
        assert isinstance(r, NearestSourceResult) and r.dist.shape == (g.n,)
        want, _, nearest = reference(
            g,
            sources,
            min_only=True,
            return_predecessors=True,
            limit=np.inf if limit is None else limit,
        )
        np.testing.assert_array_equal(r.dist_float, want)
        assert np.all((r.nearest == -1) == np.isinf(want))
        table = reference(g, sorted(set(sources)), limit=np.inf if limit is None else limit)
        rows = {s: i for i, s in enumerate(sorted(set(sources)))}
        for v in np.flatnonzero(r.nearest >= 0):  # the named source is at that distance
            assert table[rows[int(r.nearest[v])], v] == want[v]
            path = r.path_to(int(v))
            assert path[0] == r.nearest[v] and path[-1] == v
        assert all(r.nearest[s] == s for s in sources)
        if algorithm == "dijkstra":  # SciPy's own: the same source on ties too
            np.testing.assert_array_equal(r.nearest, np.where(nearest < 0, -1, nearest))


def test_min_only_takes_a_set_and_leaves_predecessors_out_by_default():
    g = random_graph()
    r = sssp.solve(g, {4, 9}, backend="cpu", min_only=True)
    assert r.pred is None and sorted(r.sources.tolist()) == [4, 9]
    with pytest.raises(InvalidArgumentError, match="return_predecessors=True"):
        r.path_to(4)


def test_roots_follow_long_chains():
    n = 5000
    pred = np.arange(-1, n - 1, dtype=np.int32)  # a path 0 -> 1 -> ... -> n-1
    dist = np.arange(n, dtype=np.int64)
    assert np.all(roots(pred, dist) == 0)


# -- real graphs -----------------------------------------------------------------------------------
def real_graph(name: str) -> sssp.Graph:
    path = GRAPHS_DIR / name
    if not path.is_file():
        # CI names the folder (SSSP_GRAPHS_DIR): there a missing graph fails instead of skipping.
        if required():
            pytest.fail(f"{path} is missing from SSSP_GRAPHS_DIR")
        pytest.skip(f"{path} is missing (the shared real graphs; set SSSP_GRAPHS_DIR)")
    return sssp.load(path)


@pytest.mark.parametrize(
    "name", ["road/rome99.gr.gz", "clustering/polblogs.graph.gz", "walshaw/3elt.graph.gz"]
)
def test_real_graphs_rows_limit_and_min_only(name):
    g = real_graph(name)
    rng = np.random.default_rng(1)
    sources = rng.integers(0, g.n, 24)
    r = sssp.solve(g, sources, backend="cpu", return_predecessors=True)
    np.testing.assert_array_equal(r.dist_float, reference(g, sources))
    check_rows(g, r)
    limit = float(np.median(r.dist_float[np.isfinite(r.dist_float)]))
    lim = sssp.solve(g, sources, backend="cpu", limit=limit)
    np.testing.assert_array_equal(lim.dist_float, reference(g, sources, limit=limit))
    near = sssp.solve(g, sources[:5], backend="cpu", min_only=True)
    np.testing.assert_array_equal(near.dist_float, reference(g, sources[:5], min_only=True))


# -- the progress bar ------------------------------------------------------------------------------
def test_progress_bar_only_when_asked_or_on_a_terminal(capsys):
    g = random_graph()
    sssp.solve(g, range(50), backend="cpu")  # stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
    sssp.solve(g, range(50), backend="cpu", progress=True)
    err = capsys.readouterr().err
    assert "solve" in err and "50/50" in err
    sssp.solve(g, range(50), backend="cpu", progress=False)
    assert capsys.readouterr().err == ""


# -- Ctrl-C: whole rows only -------------------------------------------------------------------------
CHILD = textwrap.dedent("""
    import sys, numpy as np, sssp
    n = int(sys.argv[2])
    g = sssp.generate("grid", size=n, seed=0)
    out = np.memmap(sys.argv[1], dtype=np.int32, mode="r+", shape=(g.n, g.n))
    print(g.n, flush=True)
    sssp.solve(g, range(g.n), algorithm=sys.argv[3], backend="cpu", out=out, memory_budget=4 * 12 * g.n)
""")


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["near-far", "dijkstra"])
def test_ctrl_c_leaves_whole_rows_only(tmp_path, algorithm):
    g = sssp.generate("grid", size=3000, seed=0)
    n = g.n
    path = tmp_path / "table.i32"
    np.full((n, n), MARK, dtype=np.int32).tofile(path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), "3000", algorithm],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert int(child.stdout.readline()) == n
    table = np.memmap(path, dtype=np.int32, mode="r", shape=(n, n))
    deadline = time.monotonic() + 120
    while np.all(table[:, 0] == MARK) and np.all(table[0] == MARK):  # wait for the first rows
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode != 0 and "KeyboardInterrupt" in err
    want = reference(g, range(n))
    want = np.where(np.isinf(want), np.iinfo(np.int32).max, want).astype(np.int32)
    untouched = np.all(table == MARK, axis=1)
    right = np.all(table == want, axis=1)
    assert np.all(untouched | right), (
        f"rows neither untouched nor right: {np.flatnonzero(~(untouched | right))}"
    )
    assert right.any() and untouched.any()  # interrupted in the middle


# -- bounded host memory -----------------------------------------------------------------------------
MEMORY_CHILD = textwrap.dedent("""
    import json, resource, sys, numpy as np, sssp
    g = sssp.generate("grid", size=int(sys.argv[2]), seed=0)
    sssp.solve(g, range(4), backend="cpu")  # imports and compiled code in place first
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = np.memmap(sys.argv[1], dtype=np.int32, mode="w+", shape=(g.n, g.n))
    sssp.solve(g, range(g.n), backend="cpu", out=out, memory_budget=int(sys.argv[3]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"n": g.n, "table": out.nbytes, "base": base, "peak": peak}))
""")


@pytest.mark.slow
def test_all_pairs_into_a_memmap_keeps_the_resident_set_bounded(tmp_path):
    budget = 16 * 2**20
    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_CHILD, str(tmp_path / "t"), "8192", str(budget)],
        capture_output=True,
        text=True,
        timeout=280,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr
    m = json.loads(proc.stdout)
    grown = m["peak"] - m["base"]
    # The table is 8k x 8k x 4 bytes = 256 MiB: without releasing each chunk's pages the
    # resident set would grow by all of it.
    assert m["table"] > 250 * 2**20
    assert grown < 4 * budget + 40 * 2**20, m


# -- the compiled solvers release the GIL (what lets a thread per core run them) -------------------
@pytest.mark.parametrize("algorithm", ["near-far", "crauser"])
def test_compiled_solvers_release_the_gil(algorithm):
    """A pure-Python thread keeps running while a worker solves: numba's nogil code, and not a
    stale cache of code compiled before it (numba keys its cache on source time stamps)."""
    import threading

    from sssp.cpu.many import CPURows

    g = sssp.generate("random", size="24k", degree=20, seed=0)
    engine = CPURows(g, algorithm=algorithm, workers=1)
    rows = np.empty((2, g.n), dtype=np.int64)
    engine.fill(np.array([0], dtype=np.int64), rows[:1], None, None, lambda c: None)  # compiled
    ticks, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        time.sleep(0.2)
        c0, t0 = ticks[0], time.perf_counter()
        time.sleep(0.2)
        alone = (ticks[0] - c0) / (time.perf_counter() - t0)
        sources = np.arange(2 if algorithm == "near-far" else 1, dtype=np.int64)
        c1, t1 = ticks[0], time.perf_counter()
        engine.fill(sources, rows[: sources.size], None, None, lambda c: None)
        during = (ticks[0] - c1) / (time.perf_counter() - t1)
    finally:
        stop.set()
        t.join()
        engine.close()
    # Holding the GIL leaves the counter a few per cent (the interpreter's switch interval).
    assert during > 0.2 * alone, (
        f"the counter ran at {100 * during / alone:.0f} % beside {algorithm}"
    )
