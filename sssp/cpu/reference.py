"""The reference solver: SciPy's Dijkstra, made exact for :class:`~sssp.graph.Graph` inputs.

Three things separate a :class:`Graph` from what ``scipy.sparse.csgraph`` expects:

* **Parallel edges.** A CSR matrix built from a graph with parallel edges would *sum* them (or
  SciPy may do so while canonicalising); we first keep only the lightest edge of each
  ``(u, v)`` pair.
* **Zero weights.** SciPy 1.17's ``csgraph`` routines treat an *explicitly stored* zero of a
  sparse matrix as an edge of weight 0 (only dense inputs read zeros as "no edge"). We pass a
  sparse matrix whose zeros are explicitly stored, never a dense one, and the tests check
  zero-weight edges and zero-weight cycles against an independent solver.
* **Integer distances.** SciPy computes in float64, which is exact for integers up to 2**53
  (graphs with real weights get SciPy's float64 distances as they are, ``inf`` when unreached).
  Every tentative distance SciPy forms is at most ``max_weight * n``; when that bound exceeds
  2**53 we refuse the graph (:class:`~sssp.errors.InvalidGraphError`) instead of returning
  rounded distances. Use :func:`sssp.cpu.parallel.martin` (exact int64 arithmetic) for such
  graphs.

Self-loops are kept; they never shorten a path.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import dijkstra as _scipy_dijkstra

from ..errors import InvalidGraphError
from ..graph import Graph
from ..request import check_source
from ..result import SSSPResult, native_distances

log = logging.getLogger(__name__)

FLOAT_EXACT_LIMIT: int = 2**53
"""Largest integer bound below which float64 arithmetic on distances is exact."""


def min_weight_csr(graph: Graph) -> csr_array:
    """The graph as a float64 ``csr_array`` with one entry per ``(u, v)`` pair: the lightest of
    its parallel edges. Zero weights are stored explicitly (they are edges).

    Returns
    -------
    scipy.sparse.csr_array, float64, shape (n, n)
        Canonical (sorted indices, no duplicates).
    """
    n = graph.n
    indptr, indices = graph.indptr, graph.indices
    # Already canonical (every row's targets strictly increasing: no parallel edges): use the
    # arrays as they are. A linear check; sorting costs far more on graphs of 10^8 edges.
    step = np.diff(indices.astype(np.int64))
    starts = indptr[1:-1]
    step[starts[(starts > 0) & (starts < graph.m)] - 1] = 1  # row boundaries may step down
    if bool(np.all(step > 0)):
        mat = csr_array((graph.weights.astype(np.float64), indices, indptr), shape=(n, n))
        mat.has_sorted_indices = True
        return mat
    src, dst, w = graph.edges()
    key = src.astype(np.int64) * n + dst
    # One int64 key needs integer weights; real weights take the two-key sort.
    if n == 0 or (not graph.is_float and (n * n) * (graph.max_weight + 1) < 2**63):
        order = np.argsort(key * (graph.max_weight + 1) + w)  # one int64 key: (u, v), then weight
    else:
        order = np.lexsort((w, key))  # by key, then lightest weight first
    key_sorted = key[order]
    first = np.ones(key_sorted.size, dtype=bool)
    first[1:] = key_sorted[1:] != key_sorted[:-1]
    keep = order[first]
    u = src[keep]
    counts = np.bincount(u, minlength=n) if u.size else np.zeros(n, dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    data = w[keep].astype(np.float64)
    mat = csr_array((data, dst[keep].astype(np.int32), indptr), shape=(n, n))
    mat.has_sorted_indices = True  # keys are sorted by (u, v)
    return mat


def dijkstra(graph: Graph, source: int) -> SSSPResult:
    """Exact single-source shortest paths by SciPy's Dijkstra.

    Parameters
    ----------
    graph : Graph
        Parallel edges, self-loops and zero weights are allowed.
    source : int
        In ``[0, graph.n)``.

    Returns
    -------
    SSSPResult
        ``dist`` shape (n,): int64 (:data:`~sssp.result.UNREACHABLE` for unreached nodes), or
        float64 (``inf``) on graphs with real weights,
        ``pred`` int32 shape (n,) (-1 for the source and unreached nodes), ``algorithm="dijkstra"``,
        ``variant="successors"``, ``backend="cpu"``, ``iterations`` = number of reached nodes,
        ``timings={"total": seconds}`` (the SciPy call and conversions, not the edge reduction).

    Raises
    ------
    InvalidGraphError
        If ``source`` is out of range, or an integer graph has ``max_weight * n > 2**53``
        (float64 would not be exact).
    """
    s = check_source(graph, source)
    n = graph.n
    bound = graph.max_weight * n
    if not graph.is_float and bound > FLOAT_EXACT_LIMIT:
        raise InvalidGraphError(
            f"max_weight * n = {graph.max_weight} * {n} = {bound} exceeds 2**53: SciPy's float64 "
            "Dijkstra would not be exact; use the martin/crauser CPU solvers instead"
        )
    mat = min_weight_csr(graph)
    t0 = time.perf_counter()
    fdist, fpred = _scipy_dijkstra(mat, directed=True, indices=s, return_predecessors=True)
    reached = np.isfinite(fdist)
    dist = native_distances(fdist, graph.is_float)
    pred = np.where(fpred < 0, -1, fpred).astype(np.int32)
    total = time.perf_counter() - t0
    iterations = int(reached.sum())
    log.debug("scipy dijkstra on %s from %d: %d reached, %.3g s", graph.name, s, iterations, total)
    return SSSPResult(
        dist=dist,
        pred=pred,
        source=s,
        algorithm="dijkstra",
        variant="successors",
        backend="cpu",
        iterations=iterations,
        timings={"total": total},
    )
