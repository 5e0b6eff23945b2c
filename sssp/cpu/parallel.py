"""The paper's sequential CPU versions of Martín's and Crauser's parallel Dijkstra.

Compiled with numba; each iteration is three O(n) scans (relax, min, update), exactly as the
GPU kernels do it one thread per node, so the cost the benchmarks measure is the paper's.

Interrupts: compiled code never returns to the interpreter, so a signal (Ctrl-C) would wait for
the whole solve. The solves run in a helper thread without the GIL (:func:`run_stoppable`)
while the calling thread waits where Python delivers signals; an interrupt there sets a flag
that the compiled loop reads between phases, and the solve ends within one phase.

Semantics (shared with the GPU kernels, whose iteration counts the tests compare)::

    UNSETTLED = int32 max; INF = int64 max (UNREACHABLE)
    settled_at[v] = UNSETTLED; dist[v] = INF; dist[s] = 0; settled_at[s] = 0
    omega[v] = min outgoing weight of v, INF if v has no out-edges
    for i = 1, 2, ...:
        relax  (successors):   every u with settled_at[u] == i-1, each edge (u, v, w):
                               if settled_at[v] == UNSETTLED: dist[v] = min(dist[v], dist[u] + w)
        relax  (predecessors): every v with settled_at[v] == UNSETTLED, each incoming (u, v, w)
                               with settled_at[u] == i-1: dist[v] = min(dist[v], dist[u] + w)
        min    over unsettled v with dist[v] != INF:
                   crauser: Δ = min(dist[v] + omega[v]) (INF where omega[v] == INF)
                   martin:  Δ = min(dist[v])            (Δ = INF if there is no such v)
        if Δ == INF: stop; iterations = i - 1
        update every unsettled v with (crauser: dist[v] <= Δ; martin: dist[v] == Δ):
               settled_at[v] = i
    pred[v] (v != s, dist[v] != INF) = the smallest u with an edge (u, v, w), dist[u] != INF,
        dist[u] + w == dist[v] and settled_at[u] < settled_at[v]; -1 for s and unreached nodes.

At the end some nodes with a finite distance may remain unsettled (Crauser: sinks, whose ω is
infinite); their distances are final. The predecessor rule yields an acyclic tree even with
zero-weight edges, because a node's predecessor was settled strictly earlier.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numba import njit

from ..errors import InvalidArgumentError
from ..graph import Graph
from ..request import check_source, check_variant
from ..result import UNREACHABLE, SSSPResult

log = logging.getLogger(__name__)

UNSETTLED: int = int(np.iinfo(np.int32).max)
"""``settled_at`` value of a node that has not been settled."""
INF: int = UNREACHABLE

CRITERIA = ("martin", "crauser", "crauser-in", "crauser-inout")
Criterion = Literal["martin", "crauser", "crauser-in", "crauser-inout"]
Variant = Literal["successors", "predecessors"]

_CODES = {"martin": 0, "crauser": 1, "crauser-in": 2, "crauser-inout": 3}


def _jit(fn):
    """``numba.njit`` (without the GIL: see :func:`run_stoppable`) with the on-disk cache when
    numba can place one, else without it.

    Compiled code releases the GIL (``nogil``): the many-source CPU path runs one solve per
    thread (:mod:`sssp.cpu.many`), and these kernels touch no Python object. numba's cache
    does not key on these options, only on the source file's time stamp: a change here must
    come with a change to every module that uses ``_jit``, or caches compiled before it are
    loaded as they are.

    numba refuses to decorate a ``cache=True`` function when it finds no writable cache
    location (a read-only install with an unwritable HOME and NUMBA_CACHE_DIR); the solvers then
    compile at each process start instead of failing to import.
    """
    try:
        return njit(cache=True, nogil=True)(fn)
    except (RuntimeError, OSError) as err:
        log.debug("numba cache unavailable for %s (%s): compiling without it", fn.__name__, err)
        return njit(nogil=True)(fn)


def new_stop_flag() -> np.ndarray:
    """The flag a compiled solve reads between phases (uint8, shape (1,); nonzero: stop)."""
    return np.zeros(1, dtype=np.uint8)


INLINE_SIZE = 1 << 14
"""Graphs with at most this many nodes plus edges are solved in the calling thread: a solve of
one costs at most n (n + m) steps, a fraction of a second, while a helper thread would add a
good part of a small solve's time."""


def run_stoppable(solve: Callable[..., Any], *args: Any, size: int | None = None) -> Any:
    """``solve(*args, stop)`` in a helper thread, the calling thread waiting where signals are
    delivered. When the wait is interrupted (``KeyboardInterrupt``, or any exception a signal
    handler raises), the flag asks the compiled loop to stop; once it has, the exception goes on.

    The compiled functions hold no GIL (:func:`_jit`), so the waiting thread runs the signal
    handler at once. ``size`` (nodes plus edges) at most :data:`INLINE_SIZE`: run in the
    calling thread.
    """
    stop = new_stop_flag()
    if size is not None and size <= INLINE_SIZE:
        return solve(*args, stop)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = solve(*args, stop)
        except BaseException as err:  # handed to the caller below
            box["error"] = err

    thread = threading.Thread(target=target, name="sssp-cpu-solve", daemon=True)
    thread.start()
    try:
        thread.join()
    except BaseException:
        stop[0] = 1
        thread.join()  # within one phase; a second signal here is only noted by the CLI
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- the three per-iteration scans ----------------------------------------------------------------
@_jit
def _relax_successors(indptr, indices, weights, dist, settled_at, frontier):  # pragma: no cover
    """Frontier nodes (``settled_at == frontier``) push along their out-edges."""
    unsettled = np.int32(UNSETTLED)
    for u in range(dist.size):
        if settled_at[u] != frontier:
            continue
        du = dist[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if settled_at[v] == unsettled:
                nd = du + weights[e]
                if nd < dist[v]:
                    dist[v] = nd


@_jit
def _relax_predecessors(
    rindptr, rindices, rweights, dist, settled_at, frontier
):  # pragma: no cover
    """Unsettled nodes pull from their frontier in-neighbours (reverse CSR)."""
    unsettled = np.int32(UNSETTLED)
    for v in range(dist.size):
        if settled_at[v] != unsettled:
            continue
        best = dist[v]
        for e in range(rindptr[v], rindptr[v + 1]):
            u = rindices[e]
            if settled_at[u] == frontier:
                nd = dist[u] + rweights[e]
                if nd < best:
                    best = nd
        dist[v] = best


@_jit
def _min_threshold(dist, settled_at, omega, criterion, inf):  # pragma: no cover
    """(Δ_out, Δ_min) over unsettled nodes with finite distance: min(dist + ω) (``inf`` where ω
    is infinite) and min(dist); ``inf`` when there is no such node."""
    unsettled = np.int32(UNSETTLED)
    delta_out = inf
    delta_min = inf
    for v in range(dist.size):
        if settled_at[v] != unsettled:
            continue
        d = dist[v]
        if d == inf:
            continue
        if d < delta_min:
            delta_min = d
        if criterion == 1 or criterion == 3:
            o = omega[v]
            if o != inf and d + o < delta_out:
                delta_out = d + o
    return delta_out, delta_min


@_jit
def _update(
    dist, settled_at, delta_out, delta_min, iota, criterion, iteration, inf
):  # pragma: no cover
    """Settle unsettled nodes that meet the criterion; returns how many were settled.

    OUT (1): dist <= Δ_out; IN (2): dist - ι <= Δ_min; IN+OUT (3): either; Martín (0):
    dist == Δ_min."""
    unsettled = np.int32(UNSETTLED)
    count = 0
    for v in range(dist.size):
        if settled_at[v] != unsettled:
            continue
        d = dist[v]
        if d == inf:
            continue
        ok = False
        if criterion == 0:
            ok = d == delta_min
        if (criterion == 1 or criterion == 3) and delta_out != inf and d <= delta_out:
            ok = True
        if (criterion == 2 or criterion == 3) and (iota[v] == inf or d <= delta_min + iota[v]):
            ok = True
        if ok:
            settled_at[v] = iteration
            count += 1
    return count


@_jit
def _predecessors(indptr, indices, weights, dist, settled_at, source, inf):  # pragma: no cover
    """The smallest qualifying in-neighbour of every reached node (scanning u in increasing
    order, the first hit is the smallest)."""
    n = dist.size
    pred = np.full(n, -1, dtype=np.int32)
    for u in range(n):
        du = dist[u]
        if du == inf:
            continue
        su = settled_at[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if v == source or pred[v] != -1:
                continue
            if du + weights[e] == dist[v] and su < settled_at[v]:
                pred[v] = np.int32(u)
    return pred


@_jit
def _solve(
    indptr,
    indices,
    weights,
    rindptr,
    rindices,
    rweights,
    omega,
    iota,
    source,
    criterion,
    pull,
    dist,
    stop,
):  # pragma: no cover
    """The whole outer loop on ``dist`` (all :data:`INF`, int64, or ``inf``, float64, on entry).
    Returns (pred, settled_at, iterations, settled_counts); ``stop[0]`` set ends it early (the
    caller then discards the result)."""
    n = indptr.size - 1
    inf = dist[source]
    settled_at = np.full(n, np.int32(UNSETTLED), dtype=np.int32)
    counts = np.zeros(n + 1, dtype=np.int64)  # counts[i]: nodes settled at iteration i
    dist[source] = 0
    settled_at[source] = 0
    counts[0] = 1
    i = 1
    while stop[0] == 0:
        frontier = np.int32(i - 1)
        if pull:
            _relax_predecessors(rindptr, rindices, rweights, dist, settled_at, frontier)
        else:
            _relax_successors(indptr, indices, weights, dist, settled_at, frontier)
        delta_out, delta_min = _min_threshold(dist, settled_at, omega, criterion, inf)
        # The first phase that can settle nothing ends the solve (OUT: Δ_out infinite, only
        # sinks left; the others: nothing reached is unsettled).
        bound = delta_out if criterion == 1 else delta_min
        if bound == inf:
            break
        counts[i] = _update(
            dist, settled_at, delta_out, delta_min, iota, criterion, np.int32(i), inf
        )
        i += 1
    pred = _predecessors(indptr, indices, weights, dist, settled_at, source, inf)
    return pred, settled_at, i - 1, counts[:i]


# -- Python front end -----------------------------------------------------------------------------
_warmed: set[tuple[np.dtype, np.dtype]] = set()


def _warm(wdtype: np.dtype, rwdtype: np.dtype) -> None:
    """Compile (or load from numba's cache) the kernels for these weight dtypes on a tiny graph,
    so that the timed call excludes compilation."""
    key = (np.dtype(wdtype), np.dtype(rwdtype))
    if key in _warmed:
        return
    tiny = Graph(np.array([0, 1, 1]), np.array([1]), np.array([1], dtype=key[0]), name="warm")
    rtiny = Graph(np.array([0, 0, 1]), np.array([0]), np.array([1], dtype=key[1]), name="warm^T")
    om = _omega_inf(tiny)
    io = _omega_inf(rtiny)
    for criterion in _CODES.values():
        for pull in (False, True):
            _solve(
                tiny.indptr, tiny.indices, tiny.weights,
                rtiny.indptr, rtiny.indices, rtiny.weights,
                om, io, 0, criterion, pull, _unreached(tiny), new_stop_flag(),
            )  # fmt: skip
    _warmed.add(key)


def _unreached(graph: Graph) -> np.ndarray:
    """Fresh distances: :data:`INF` int64 on integer graphs, ``inf`` float64 on real ones.

    Integer graphs satisfy ``(n + 1) * max_weight < 2**63`` (checked by :class:`Graph`), so
    every ``dist[u] + w`` and Crauser term ``dist[v] + omega[v]`` stays below :data:`INF`.
    """
    if graph.is_float:
        return np.full(graph.n, np.inf, dtype=np.float64)
    return np.full(graph.n, INF, dtype=np.int64)


def _omega_inf(graph: Graph) -> np.ndarray:
    """ω with the infinite sentinel (not -1) for nodes without out-edges; shape (n,), of the
    distances' dtype (int64, or float64 for real weights)."""
    om = graph.omega()
    om[om < 0] = np.inf if graph.is_float else INF
    return om


def parallel_dijkstra(
    graph: Graph,
    source: int,
    *,
    criterion: Criterion = "crauser",
    variant: Variant = "successors",
) -> SSSPResult:
    """Martín's or Crauser's outer-parallel Dijkstra, sequential CPU version.

    Parameters
    ----------
    graph : Graph
        Parallel edges, self-loops and zero weights are allowed.
    source : int
        In ``[0, graph.n)``.
    criterion : {"crauser", "crauser-in", "crauser-inout", "martin"}
        Crauser's OUT criterion (settle ``dist <= min(dist + ω)``), Crauser's IN criterion
        (settle ``dist - ι <= min(dist)``, ι the smallest incoming weight), both, or Martín's
        (settle ``dist == min(dist)``).
    variant : {"successors", "predecessors"}
        Push along out-edges from the frontier, or pull along in-edges (``graph.reverse()``,
        built and cached before timing starts) into unsettled nodes. Both give identical
        results and iteration counts.

    Returns
    -------
    SSSPResult
        ``dist`` shape (n,) (int64 with :data:`INF` for unreached nodes; float64 with ``inf`` on
        graphs with real weights), ``pred`` int32 shape (n,), ``algorithm=criterion``,
        ``backend="cpu"``, ``iterations`` as in the module docstring, ``timings["total"]``
        (seconds of the compiled call: the loop and the predecessor pass; compilation and the
        reverse graph excluded), and ``stats``:

        ``"settled"`` : int
            Nodes settled (source included); reached sinks may stay unsettled under Crauser.
        ``"reached"`` : int
            Nodes with a finite distance.
        ``"mean_frontier_share"`` : float
            Mean over iterations i = 1..iterations of |{v : settled_at[v] == i}| / n (0.0 when
            there were no iterations).
        ``"max_frontier"`` : int
            The largest such set.

    Raises
    ------
    InvalidTypeError
        ``source`` is not an integer node id (a ``TypeError``).
    InvalidGraphError
        Source out of range.
    InvalidArgumentError
        Unknown ``criterion`` or ``variant`` (a ``ValueError``).
    """
    if criterion not in CRITERIA:
        raise InvalidArgumentError(
            f"unknown criterion {criterion!r}: expected one of {', '.join(CRITERIA)}"
        )
    variant = check_variant(variant)  # type: ignore[assignment]
    s = check_source(graph, source)
    pull = variant == "predecessors"
    rev = graph.reverse() if pull else graph
    _warm(graph.weights.dtype, rev.weights.dtype)
    omega = _omega_inf(graph)
    crit = _CODES[criterion]
    iota = _omega_inf(graph.reverse())  # ι: the smallest incoming weight
    dist = _unreached(graph)

    def timed(*args: Any) -> tuple[Any, float]:
        t0 = time.perf_counter()
        out = _solve(*args)
        return out, time.perf_counter() - t0

    (pred, settled_at, iterations, counts), total = run_stoppable(
        timed,
        graph.indptr, graph.indices, graph.weights,
        rev.indptr, rev.indices, rev.weights,
        omega, iota, s, crit, pull, dist, size=graph.n + graph.m,
    )  # fmt: skip
    iterations = int(iterations)
    n = graph.n
    per_iter = counts[1:]
    stats = {
        "settled": int(counts.sum()),
        "reached": int(
            np.count_nonzero(dist != dist.dtype.type(np.inf if graph.is_float else INF))
        ),
        "mean_frontier_share": float(per_iter.mean() / n) if iterations else 0.0,
        "max_frontier": int(per_iter.max()) if iterations else 0,
    }
    log.debug(
        "%s/%s on %s from %d: %d iterations, %.3g s",
        criterion,
        variant,
        graph.name,
        s,
        iterations,
        total,
    )
    return SSSPResult(
        dist=dist,
        pred=pred,
        source=s,
        algorithm=criterion,
        variant=variant,
        backend="cpu",
        iterations=iterations,
        timings={"total": total},
        stats=stats,
    )


def crauser(graph: Graph, source: int, *, variant: Variant = "successors") -> SSSPResult:
    """Crauser's criterion; see :func:`parallel_dijkstra`."""
    return parallel_dijkstra(graph, source, criterion="crauser", variant=variant)


def martin(graph: Graph, source: int, *, variant: Variant = "successors") -> SSSPResult:
    """Martín's criterion; see :func:`parallel_dijkstra`."""
    return parallel_dijkstra(graph, source, criterion="martin", variant=variant)
