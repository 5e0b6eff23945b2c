"""``sssp.csgraph`` against ``scipy.sparse.csgraph`` on random inputs of every kind SciPy reads,
and the differences it declares (SciPy's own suite: tests/test_scipy_csgraph_suite.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as scs

import sssp.csgraph as cs
from sssp.errors import InvalidArgumentError, InvalidGraphError, InvalidTypeError

pytestmark = pytest.mark.timeout(300)


def random_matrix(n=80, density=0.06, seed=0, *, integer=False, zeros=True):
    rng = np.random.default_rng(seed)
    a = sp.random_array((n, n), density=density, rng=rng, format="csr")
    a.data = rng.integers(0, 5, a.data.size).astype(float) if integer else a.data * 10
    if not zeros:
        a.data[a.data == 0] = 1.0
    return a


FORMS = {
    "csr": lambda a: a,
    "csr_matrix": sp.csr_matrix,
    "coo": lambda a: a.tocoo(),
    "lil": lambda a: a.tolil(),
    "dense": lambda a: a.toarray(),
    "int-csr": lambda a: a.astype(np.int64),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("integer", [True, False], ids=["int-values", "real-values"])
def test_dijkstra_is_scipys(form, directed, integer):
    a = random_matrix(integer=integer, zeros=form != "dense")
    m = FORMS[form](a) if form != "int-csr" or integer else FORMS[form](random_matrix(integer=True))
    for kwargs in (
        {},
        {"indices": 3},
        {"indices": [5, -1, 5]},
        {"limit": 4.5},
        {"unweighted": True},
    ):
        got_d, got_p = cs.dijkstra(m, directed=directed, return_predecessors=True, **kwargs)
        want_d, want_p = scs.dijkstra(m, directed=directed, return_predecessors=True, **kwargs)
        assert got_d.dtype == np.float64 and got_p.dtype == np.int32
        np.testing.assert_array_equal(got_d, want_d)
        np.testing.assert_array_equal(got_p, want_p)  # on the CPU: SciPy's trees, tie for tie
        np.testing.assert_array_equal(cs.dijkstra(m, directed=directed, **kwargs), want_d)


@pytest.mark.parametrize("directed", [True, False])
def test_min_only_is_scipys(directed):
    a = random_matrix(seed=4)
    for indices in ([0], [3, 9, 9, 40], np.arange(0, 80, 7)):
        d, p, s = cs.dijkstra(
            a, directed=directed, indices=indices, min_only=True, return_predecessors=True
        )
        wd, wp, ws = scs.dijkstra(
            a, directed=directed, indices=indices, min_only=True, return_predecessors=True
        )
        np.testing.assert_array_equal(d, wd)
        np.testing.assert_array_equal(s, ws)
        np.testing.assert_array_equal(p, wp)
        np.testing.assert_array_equal(
            cs.dijkstra(a, directed=directed, indices=indices, min_only=True), wd
        )


def test_distances_alone_run_the_cpu_default_and_equal_scipys():
    a = random_matrix(n=300, density=0.01, seed=2)  # sparse: near-far is the CPU default
    np.testing.assert_array_equal(cs.dijkstra(a, directed=False), scs.dijkstra(a, directed=False))


def test_results_are_fresh_writable_arrays():
    a = random_matrix()
    d, p = cs.dijkstra(a, indices=[1, 2], return_predecessors=True)
    assert d.flags.writeable and p.flags.writeable and d.flags.c_contiguous


def test_masked_and_infinite_entries_are_no_edges():
    dense = np.array([[0, 2, np.inf], [0, 0, 3], [1, 0, 0]], dtype=float)
    masked = np.ma.masked_array(dense, mask=~np.isfinite(dense) | (dense == 0))
    np.testing.assert_array_equal(cs.dijkstra(masked), scs.dijkstra(masked))
    s = sp.csr_array(np.array([[0, 2, 0], [0, 0, 3], [1, 0, 0]], dtype=float))
    s.data[0] = np.inf  # a stored inf: an edge no finite path takes
    np.testing.assert_array_equal(cs.dijkstra(s), scs.dijkstra(s))


def test_empty_indices_return_empty_tables_as_scipy_does():
    a = random_matrix()
    assert cs.dijkstra(a, indices=[]).shape == scs.dijkstra(a, indices=[]).shape == (0, 80)
    d, p, s = cs.dijkstra(a, indices=[], min_only=True, return_predecessors=True)
    assert np.all(np.isinf(d)) and np.all(p == -9999) and np.all(s == -9999)


def test_shortest_path_methods():
    a = random_matrix(seed=7)
    for method in ("auto", "D", "FW", "BF", "J"):
        np.testing.assert_array_equal(
            cs.shortest_path(a, method=method, indices=None if method == "FW" else [1, 2]),
            scs.shortest_path(a, method=method, indices=None if method == "FW" else [1, 2]),
        )
    neg = np.array([[0, 3, 0], [0, 0, -1], [0, 0, 0]], dtype=float)
    np.testing.assert_allclose(
        cs.shortest_path(neg), scs.shortest_path(neg)
    )  # "auto": SciPy's Johnson
    with pytest.raises(InvalidArgumentError, match="unrecognized method 'X'"):
        cs.shortest_path(a, method="X")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: cs.dijkstra(np.array([[0, -1], [0, 0]])),
            InvalidGraphError,
            "negative weight -1 on edge 0 -> 1",
        ),
        (
            lambda: cs.shortest_path(np.array([[0, -1.0], [0, 0]]), method="D"),
            InvalidGraphError,
            "negative weight",
        ),
        (
            lambda: cs.dijkstra(np.eye(3), indices=[0.5]),
            InvalidTypeError,
            "source 0.5 is not an integer node id",
        ),
        (
            lambda: cs.dijkstra(np.eye(3), indices=[3]),
            InvalidGraphError,
            r"source 3 is out of range \[0, 3\)",
        ),
        (
            lambda: cs.dijkstra(np.eye(3), limit=-1),
            InvalidArgumentError,
            "limit must be a non-negative number",
        ),
        (
            lambda: cs.dijkstra(np.eye(3), limit=np.nan),
            InvalidArgumentError,
            "limit must be a non-negative number",
        ),
        (
            lambda: cs.dijkstra(np.ones((2, 3))),
            InvalidGraphError,
            r"\(n, n\) matrix, got shape \(2, 3\)",
        ),
        (
            lambda: cs.dijkstra(sp.csr_array(np.array([[0, np.nan], [1.0, 0]]))),
            InvalidGraphError,
            "weight nan",
        ),
    ],
    ids=[
        "negative",
        "negative-D",
        "float-index",
        "index-range",
        "limit",
        "limit-nan",
        "shape",
        "nan",
    ],
)
def test_what_scipy_answers_and_sssp_refuses(call, error, message):
    with pytest.raises(error, match=message):
        call()
    assert issubclass(error, ValueError | TypeError)  # SciPy users' except clauses still catch it


def test_whole_number_weights_run_as_integers_with_the_same_floats():
    from sssp.csgraph import as_csgraph

    a = random_matrix(integer=True)
    assert not as_csgraph(a).is_float
    half = a.copy()
    half.data = half.data + 0.5
    assert as_csgraph(half).is_float
    np.testing.assert_array_equal(cs.dijkstra(a), scs.dijkstra(a))


@pytest.mark.gpu
def test_on_the_gpu_distances_are_scipys_and_trees_valid():
    from sssp.gpu import is_available

    if not is_available():
        pytest.skip("no usable CUDA device (pycuda missing or no GPU)")
    for seed in range(4):
        a = random_matrix(n=500, density=0.01, seed=seed, integer=seed % 2 == 0)
        for directed in (True, False):
            d, p = cs.dijkstra(
                a, directed=directed, indices=[0, 7, 7], return_predecessors=True, backend="gpu"
            )
            np.testing.assert_array_equal(d, scs.dijkstra(a, directed=directed, indices=[0, 7, 7]))
            # every predecessor is a tight edge (SciPy's may name another among equal paths)
            w = scs.dijkstra(a, directed=directed, indices=None)
            for row, s in zip(range(3), (0, 7, 7), strict=True):
                v = np.flatnonzero(p[row] >= 0)
                assert np.allclose(d[row, p[row, v]] + w[p[row, v], v], d[row, v])
                assert p[row, s] == -9999
