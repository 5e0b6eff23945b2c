"""``scipy.sparse.csgraph``'s Dijkstra calls with SciPy's signatures and return conventions,
solved by sssp (on the GPU when there is one)::

    from sssp.csgraph import dijkstra, shortest_path    # for scipy.sparse.csgraph's

    dist = dijkstra(matrix, indices=[0, 5])             # float64 (2, n), inf where unreachable
    dist, pred = dijkstra(matrix, directed=False, indices=0, return_predecessors=True)

What SciPy users rely on holds: the input is read as SciPy reads it (a sparse matrix's stored
entries are edges, explicit zeros included, and a dense array's 0, ``inf`` and NaN entries are
not; ``directed=False`` walks each edge both ways; ``unweighted=True`` counts edges), distances
come back as float64 with ``inf``, predecessors as int32 with -9999, ``indices`` of any shape
give that shape plus ``(n,)``, negative indices count from the end, and ``min_only=True`` with
``return_predecessors=True`` also returns the nearest source of each node.

Deliberate differences (each is a clear error where SciPy would answer):

- Negative weights raise :class:`sssp.InvalidGraphError` (a ``ValueError``): SciPy's Dijkstra
  warns and may return wrong distances. ``shortest_path(method="auto")`` hands graphs with
  negative weights to SciPy's own Johnson, as SciPy's ``"auto"`` does.
- ``indices`` must hold integers: SciPy truncates ``1.7`` to node 1.
- A NaN stored in a sparse matrix is refused (SciPy's result is undefined); a stored ``inf``
  is an edge that no finite path uses, so it is dropped.
- Predecessors. On the CPU, ``return_predecessors=True`` runs SciPy's Dijkstra on the same
  graph, so the trees are SciPy's, tie for tie (distances alone run the faster CPU default,
  :func:`sssp.cpu.default_algorithm`). On the GPU, among equal shortest paths a predecessor
  may differ from SciPy's; every tree is a valid shortest-path tree and the distances are the
  same.

Integer-valued weights (integer matrices, or float matrices whose entries are all integers with
``max_weight * n <= 2**53``) are solved in exact integer arithmetic, which the GPU engine runs
with narrower keys; the float64 results are the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import InvalidArgumentError, InvalidGraphError
from .graph import Graph
from .request import check_backend, not_a_node_id

NULL_INDEX = -9999
"""SciPy's predecessor (and ``min_only`` source) of nodes without one."""

METHODS = ("auto", "FW", "D", "BF", "J")
_EXACT = 2**53


def _edges(csgraph: Any) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """(n, rows, cols, weights) of a graph as SciPy's ``validate_graph`` reads it."""
    import scipy.sparse as sp

    if sp.issparse(csgraph):
        if csgraph.ndim != 2 or csgraph.shape[0] != csgraph.shape[1]:
            raise InvalidGraphError(
                f"the graph must be an (n, n) matrix, got shape {csgraph.shape}"
            )
        # As SciPy does: a CSR copy (duplicate COO entries are summed, a CSR's own kept).
        coo = sp.csr_array(csgraph).tocoo()
        rows, cols, data = coo.row, coo.col, np.asarray(coo.data)
        n = csgraph.shape[0]
    else:
        if np.ma.isMaskedArray(csgraph):
            a = np.ma.asarray(csgraph)
            present = ~np.ma.getmaskarray(a)
            values = np.asarray(a.data)
        else:
            values = np.asarray(csgraph)
            present = None
        if values.ndim != 2 or values.shape[0] != values.shape[1]:
            raise InvalidGraphError(f"the graph must be an (n, n) matrix, got shape {values.shape}")
        if values.dtype.kind not in "biuf":
            raise InvalidGraphError(f"the graph must hold numbers, got dtype {values.dtype}")
        if present is None:  # dense: 0, inf and NaN are "no edge"
            present = values != 0
            if values.dtype.kind == "f":
                present &= np.isfinite(values)
        rows, cols = np.nonzero(present)
        data = values[rows, cols]
        n = values.shape[0]
    if data.dtype.kind not in "biuf":
        raise InvalidGraphError(f"the graph must hold numbers, got dtype {data.dtype}")
    if data.dtype.kind == "b":
        data = data.astype(np.int64)
    if data.dtype.kind == "f":
        nan = np.isnan(data)
        if nan.any():
            e = int(np.argmax(nan))
            raise InvalidGraphError(
                f"weight nan on edge {int(rows[e])} -> {int(cols[e])}: weights must be numbers"
            )
        finite = np.isfinite(data)  # an infinite weight is an edge no finite path takes
        if not finite.all():
            rows, cols, data = rows[finite], cols[finite], data[finite]
    return int(n), rows.astype(np.int64), cols.astype(np.int64), data


def _negative(data: np.ndarray) -> bool:
    return bool(data.size) and data.dtype.kind in "if" and bool((data < 0).any())


def as_csgraph(csgraph: Any, *, directed: bool = True, unweighted: bool = False) -> Graph:
    """The :class:`Graph` SciPy's Dijkstra would walk for these arguments.

    Raises
    ------
    InvalidGraphError
        Not a square matrix, a NaN weight, or a negative weight.
    """
    n, rows, cols, data = _edges(csgraph)
    if _negative(data):
        e = int(np.argmax(data < 0))
        raise InvalidGraphError(
            f"negative weight {data[e].item()!r} on edge {int(rows[e])} -> {int(cols[e])}: Dijkstra "
            "needs non-negative weights (scipy.sparse.csgraph.johnson and bellman_ford take "
            "negative ones)"
        )
    if unweighted:
        data = np.ones(data.size, dtype=np.int64)
    elif data.dtype.kind == "f" and data.size:
        top = float(data.max())
        # Whole numbers solve exactly as integers (and with narrower keys on the GPU).
        if top * max(n, 1) <= _EXACT and bool(np.all(data == np.floor(data))):
            data = data.astype(np.int64)
    if not directed:
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
        data = np.concatenate([data, data])
    return Graph.from_edges(n, rows, cols, data, name="csgraph")


def _indices(indices: Any, n: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """Flat sources and the shape they came in (SciPy: negative indices count from the end)."""
    if indices is None:
        return np.arange(n, dtype=np.int64), (n,)
    arr = np.asarray(indices)
    if arr.dtype.kind in "iu":
        flat = arr.reshape(-1).astype(np.int64)
        flat = np.where(flat < 0, flat + n, flat)
        return flat, arr.shape
    for value in arr.reshape(-1).tolist():
        if isinstance(value, bool) or not isinstance(value, int):
            raise not_a_node_id(value)
    return _indices(np.asarray(arr.tolist(), dtype=np.int64), n)  # an object array of ints


def _options(backend: str) -> dict[str, Any]:
    """Solve on the GPU (with the tuned configuration of the graph's class) when there is
    one, else on the CPU with its default algorithm."""
    if check_backend(backend) == "auto":
        from .gpu import is_available

        backend = "gpu" if is_available() else "cpu"
    return {"backend": backend, "tuned": backend == "gpu"}


def dijkstra(
    csgraph: Any,
    directed: bool = True,
    indices: Any = None,
    return_predecessors: bool = False,
    unweighted: bool = False,
    limit: float = np.inf,
    min_only: bool = False,
    *,
    backend: str = "auto",
) -> Any:
    """Shortest paths from ``indices``, as ``scipy.sparse.csgraph.dijkstra``.

    Parameters
    ----------
    csgraph : array_like or sparse matrix, shape (n, n)
        Non-negative weights: a sparse matrix's stored entries (explicit zeros are
        zero-weight edges), or a dense array's entries other than 0, ``inf`` and NaN (a
        masked array's unmasked ones).
    directed : bool
        False: each edge can be walked both ways (the lighter direction counts).
    indices : int or array_like of int, optional
        Sources (all nodes by default); negative ones count from the end.
    return_predecessors : bool
        Also return the predecessor matrix (int32, -9999 where there is none).
    unweighted : bool
        Count edges instead of summing weights.
    limit : float
        Nodes farther than this are unreachable (``inf``); must be >= 0.
    min_only : bool
        Distances from the nearest of ``indices`` (shape (n,)); with
        ``return_predecessors`` also the nearest source of each node (-9999 where none).
    backend : {"auto", "cpu", "gpu"}
        Keyword only, sssp's own: ``"auto"`` solves on the GPU when there is one.

    Returns
    -------
    dist : ndarray, float64, shape ``indices.shape + (n,)`` (``(n,)`` with ``min_only``)
    predecessors : ndarray, int32, same shape
        Only with ``return_predecessors``.
    sources : ndarray, int32, shape (n,)
        Only with ``min_only`` and ``return_predecessors``.
    """
    from .solve import solve

    graph = as_csgraph(csgraph, directed=directed, unweighted=unweighted)
    n = graph.n
    src, shape = _indices(indices, n)
    options = _options(backend)
    if (
        options["backend"] == "cpu"
        and return_predecessors
        and (graph.is_float or graph.max_weight * n <= _EXACT)
    ):
        options["algorithm"] = "dijkstra"  # SciPy's trees, tie for tie
    if min_only:
        if src.size == 0:  # SciPy: nothing is reached
            dist: np.ndarray = np.full(n, np.inf)
            none = np.full(n, NULL_INDEX, dtype=np.int32)
            return (dist, none, none.copy()) if return_predecessors else dist
        r = solve(
            graph,
            src,
            min_only=True,
            return_predecessors=return_predecessors,
            limit=limit,
            **options,
        )
        dist = np.array(r.dist_float)
        if not return_predecessors:
            return dist
        return dist, _null(np.array(r.pred)), _null(np.array(r.nearest))
    k = src.size
    if k == 0:
        empty = np.empty(shape + (n,))
        return (empty, np.empty(shape + (n,), dtype=np.int32)) if return_predecessors else empty
    # Solve straight into the arrays handed back: writable, and no second copy of k x n.
    exact = graph.is_float or graph.max_weight * max(n - 1, 0) <= _EXACT
    out = np.empty((k, n), dtype=np.float64) if exact else None
    pred_out = np.empty((k, n), dtype=np.int32) if return_predecessors else None
    r = solve(
        graph,
        src,
        out=out,
        pred_out=pred_out,
        return_predecessors=return_predecessors,
        limit=limit,
        **options,
    )
    dist = out if out is not None else np.array(r.dist_float)
    dist = dist.reshape(shape + (n,))
    if pred_out is None:  # return_predecessors=False
        return dist
    return dist, _null(pred_out).reshape(shape + (n,))


def _null(a: np.ndarray) -> np.ndarray:
    a[a < 0] = NULL_INDEX
    return a


def shortest_path(
    csgraph: Any,
    method: str = "auto",
    directed: bool = True,
    return_predecessors: bool = False,
    unweighted: bool = False,
    overwrite: bool = False,
    indices: Any = None,
    *,
    backend: str = "auto",
) -> Any:
    """``scipy.sparse.csgraph.shortest_path``: ``method="D"`` (and ``"auto"`` on graphs
    without negative weights) is :func:`dijkstra`; ``"FW"``, ``"BF"``, ``"J"`` and ``"auto"``
    with negative weights run SciPy's own.

    Parameters
    ----------
    csgraph, directed, return_predecessors, unweighted, indices, backend
        As in :func:`dijkstra`.
    method : {"auto", "FW", "D", "BF", "J"}
    overwrite : bool
        SciPy's Floyd-Warshall may overwrite a dense float64 input; ignored by Dijkstra.
    """
    if method not in METHODS:
        raise InvalidArgumentError(
            f"unrecognized method {method!r}: expected one of {', '.join(METHODS)}"
        )
    if method == "auto":
        _, _, _, data = _edges(csgraph)
        method = "J" if _negative(data) and not unweighted else "D"
        if method == "J":
            from scipy.sparse.csgraph import shortest_path as scipy_shortest_path

            return scipy_shortest_path(
                csgraph, "auto", directed, return_predecessors, unweighted, overwrite, indices
            )
    if method == "D":
        return dijkstra(
            csgraph, directed, indices, return_predecessors, unweighted, backend=backend
        )
    from scipy.sparse.csgraph import shortest_path as scipy_shortest_path

    return scipy_shortest_path(
        csgraph, method, directed, return_predecessors, unweighted, overwrite, indices
    )
