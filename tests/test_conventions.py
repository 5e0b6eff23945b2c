"""SciPy/NetworkX conventions of the public API: the error family, float distances with ``inf``,
and sources that must be integers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import sssp
from sssp.errors import (
    GraphFormatError,
    InvalidArgumentError,
    InvalidGraphError,
    InvalidTypeError,
    SSSPError,
    UnknownClassError,
)
from sssp.result import SSSPResult

pytestmark = pytest.mark.timeout(120)


def small_graph() -> sssp.Graph:
    # 0 -> 1 (4), 0 -> 2 (1), 2 -> 1 (2); node 3 unreachable.
    return sssp.Graph([0, 2, 2, 3, 3], [1, 2, 1], [4, 1, 2])


@pytest.mark.parametrize(
    "cls", [GraphFormatError, InvalidGraphError, InvalidArgumentError, UnknownClassError]
)
def test_value_errors_are_value_errors(cls):
    assert issubclass(cls, SSSPError) and issubclass(cls, ValueError)


def test_type_errors_are_type_errors():
    assert issubclass(InvalidTypeError, SSSPError) and issubclass(InvalidTypeError, TypeError)


def test_scipy_style_except_clauses_catch_our_errors():
    g = small_graph()
    with pytest.raises(ValueError, match="out of range"):
        sssp.solve(g, 7, backend="cpu")
    with pytest.raises(ValueError, match="unknown algorithm 'bellman'"):
        sssp.solve(g, 0, algorithm="bellman", backend="cpu")
    with pytest.raises(TypeError, match="expected an sssp.Graph"):
        sssp.solve(np.eye(3), 0, backend="cpu")


@pytest.mark.parametrize("bad", [1.7, 1.0, "3", True, np.float64(2.0), None])
def test_non_integer_source_is_refused(bad):
    g = small_graph()
    with sssp.Solver(g, backend="cpu") as solver:
        with pytest.raises(InvalidTypeError, match="is not an integer node id"):
            solver.solve(bad)
        # solve_many used to cast with int() and quietly solve 1.7 from node 1.
        with pytest.raises(InvalidTypeError, match="is not an integer node id"):
            solver.solve_many([0, bad])
    with pytest.raises(InvalidTypeError):
        sssp.solve(g, bad, backend="cpu")


def test_numpy_integer_sources_are_accepted():
    g = small_graph()
    with sssp.Solver(g, backend="cpu") as solver:
        r = solver.solve_many([np.int64(0), np.int32(2)])
    assert r.sources.tolist() == [0, 2] and r.dist[1, 2] == 0


def test_dist_float_matches_scipy_with_inf():
    g = small_graph()
    r = sssp.solve(g, 0, backend="cpu", algorithm="crauser")
    want = csgraph.dijkstra(g.to_scipy(), indices=0)
    assert r.dist.dtype == np.int64 and r.dist[3] == sssp.UNREACHABLE
    assert r.dist_float.dtype == np.float64
    np.testing.assert_array_equal(r.dist_float, want)
    assert np.isinf(r.dist_float[3]) and not r.reached[3]
    # arithmetic behaves as SciPy users expect: no wrap-around at the sentinel
    assert np.isinf(r.dist_float + 1)[3]
    assert not r.dist_float.flags.writeable


def test_float_distances_are_accepted_by_the_result_type():
    dist = np.array([0.0, 1.5, np.inf])
    pred = np.array([-1, 0, -1], np.int32)
    r = SSSPResult(dist, pred, 0, "dijkstra", "successors", "cpu", 2)
    assert r.is_float and r.dist_float is r.dist
    assert r.reached.tolist() == [True, True, False]
    assert r.path_to(1) == [0, 1] and r.path_to(2) == []


def test_result_rejects_other_dtypes():
    with pytest.raises(InvalidTypeError, match="int64 or float64"):
        SSSPResult(
            np.zeros(2, np.float32), np.zeros(2, np.int32), 0, "dijkstra", "successors", "cpu", 1
        )


def test_tuned_on_cpu_says_it_is_ignored():
    g = small_graph()
    with pytest.warns(sssp.ConfigIgnoredWarning, match="tuned=True is ignored.*cpu"):
        sssp.solve(g, 0, backend="cpu", tuned=True)
