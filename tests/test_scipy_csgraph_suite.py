"""SciPy's own ``scipy/sparse/csgraph/tests/test_shortest_path.py``, its Dijkstra cases run
against :mod:`sssp.csgraph`.

The test functions are SciPy's, imported from the installed SciPy; an autouse fixture points
the names they call (``dijkstra``, ``shortest_path``) at sssp's and narrows the module's
method list to the Dijkstra ones ("auto" and "D"). SciPy's Floyd-Warshall, Bellman-Ford,
Johnson and Yen cases test SciPy's other algorithms and are not collected; the parametrised
``test_buffer`` is rerun here for the Dijkstra methods only.
"""

from __future__ import annotations

import pytest

import sssp.csgraph

sp_tests = pytest.importorskip("scipy.sparse.csgraph.tests.test_shortest_path")

pytestmark = pytest.mark.timeout(300)

DIJKSTRA_METHODS = ["auto", "D"]


@pytest.fixture(autouse=True)
def _sssp_in_scipys_tests(monkeypatch):
    monkeypatch.setattr(sp_tests, "dijkstra", sssp.csgraph.dijkstra)
    monkeypatch.setattr(sp_tests, "shortest_path", sssp.csgraph.shortest_path)
    monkeypatch.setattr(sp_tests, "methods", DIJKSTRA_METHODS)


# SciPy's test functions, collected here with their own parametrisations.
test_dijkstra_limit = sp_tests.test_dijkstra_limit
test_directed = sp_tests.test_directed
test_undirected = sp_tests.test_undirected
test_directed_sparse_zero = sp_tests.test_directed_sparse_zero
test_undirected_sparse_zero = sp_tests.test_undirected_sparse_zero
test_dijkstra_indices_min_only = sp_tests.test_dijkstra_indices_min_only
test_dijkstra_min_only_random = sp_tests.test_dijkstra_min_only_random
test_dijkstra_random = sp_tests.test_dijkstra_random
test_gh_17782_segfault = sp_tests.test_gh_17782_segfault
test_shortest_path_indices = sp_tests.test_shortest_path_indices
test_predecessors = sp_tests.test_predecessors
test_construct_shortest_path = sp_tests.test_construct_shortest_path
test_construct_dist_matrix_predecessors_error = (
    sp_tests.test_construct_dist_matrix_predecessors_error
)
test_unweighted_path = sp_tests.test_unweighted_path
test_masked_input = sp_tests.test_masked_input
test_overwrite = sp_tests.test_overwrite
test_NaN_warnings = sp_tests.test_NaN_warnings
test_sparse_matrices = sp_tests.test_sparse_matrices
test_20904 = sp_tests.test_20904


@pytest.mark.parametrize("method", DIJKSTRA_METHODS)
def test_buffer(method):
    sp_tests.test_buffer(method)


def test_the_suite_really_calls_sssp(monkeypatch):
    """The patched names are what SciPy's functions call: a counting wrapper sees them."""
    calls = []

    def counting(*args, **kwargs):
        calls.append(kwargs.get("indices"))
        return sssp.csgraph.dijkstra(*args, **kwargs)

    monkeypatch.setattr(sp_tests, "dijkstra", counting)
    sp_tests.test_dijkstra_limit()
    assert len(calls) == 3
