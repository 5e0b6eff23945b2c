"""Near-far (Δ-stepping) single-source shortest paths, sequential CPU version: the reference a
GPU version will be checked against.

Meyer and Sanders' Δ-stepping with the two-pile organisation of Davidson, Baxter, Garland and
Owens (IPDPS 2014): a *near* frontier of nodes below the current threshold, relaxed step after
step (label-correcting: a node may be relaxed several times), and a *far* pile of everything
else, split again each time the threshold rises. Compiled with numba, releasing the GIL (the
many-source path runs one solve per thread).

Semantics (what a GPU version must reproduce, step for step)::

    dist[v] = INF; dist[s] = 0; far = [(s, 0)]; frontier = []; T = 0
    loop:
        if frontier is empty:                                   # a threshold raise ("bucket")
            drop stale far entries (v, d): those with dist[v] != d
            if far is empty: stop
            dmin = min d over far;  T = the smallest multiple k·Δ > dmin   (saturating at INF;
                   real Δ below the float spacing at dmin: T = the next float above dmin)
            frontier = far entries with d < T (removed from far)
        one step: every frontier entry (u, du) pushes du + w along each out-edge (u, v, w):
                  dist[v] = min(dist[v], du + w)
                  du is u's distance when the step began (the entry carries it), so the step's
                  outcome does not depend on the order of the pushes (a GPU version that read
                  dist[u] mid-step could relax with a newer value and count other steps)
        improved = nodes whose dist dropped during the step, each once
        frontier = [(v, dist[v]) for v in improved if dist[v] < T]
        far     += [(v, dist[v]) for v in improved if dist[v] >= T]

Raises jump straight to the bucket of the smallest live far distance, so empty buckets cost
nothing (on a GPU: one min-reduction over the far pile, then one split). ``iterations`` counts
the steps, ``stats["buckets"]`` the raises; a solve has at least one of each (the source's).

Distances are exact. Integer weights: int64 arithmetic (a :class:`~sssp.graph.Graph` keeps
``(n + 1) * max_weight`` below 2**63). Real weights: float64 (float32 weights are widened
exactly before each addition), and every distance equals SciPy's float64 Dijkstra bit for bit:
both give each node the smallest left-to-right float64 sum over the paths from the source, as
float addition of a weight >= 0 is monotone and never lowers a distance, which is all that
either method's correctness needs.

The predecessor tree depends on the distances only, never on Δ or the relaxation order:

* ``pred[v]`` = the smallest in-neighbour ``u != v`` with ``dist[u] + w == dist[v]`` and
  ``dist[u] < dist[v]`` (a *strict* tight edge);
* a reached node with no strict tight edge (entered only through zero-weight edges, or real
  additions that round the weight away, from nodes at its own distance) takes a *flat* tight
  in-neighbour (``dist[u] + w == dist[u] == dist[v]``): with level 0 for the source and the
  nodes of the first kind and level(v) = 1 + the least level over v's flat tight in-neighbours,
  ``pred[v]`` = the smallest flat tight in-neighbour at level(v) - 1.

Every reached node has such a parent (the tight edges reach every reached node from the source),
and following parents lowers the distance or the level, so the tree is acyclic.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from ..graph import Graph
from ..request import check_delta, check_source
from ..result import SSSPResult
from .parallel import INF, _jit, _unreached, run_stoppable

__all__ = ["check_delta", "default_delta", "effective_delta", "near_far", "scaled_delta"]

log = logging.getLogger(__name__)

WARP_WIDTH: int = 32
"""The factor of Davidson et al.'s Δ rule (the GPU's warp width)."""


# -- compiled parts -------------------------------------------------------------------------------
@_jit
def _grow(a):  # pragma: no cover
    out = np.empty(2 * a.size, dtype=a.dtype)
    out[: a.size] = a
    return out


@_jit
def _next_up(x, cell):  # pragma: no cover
    """The next representable value above ``x >= 0``: x + 1 for int64, the next float64 (the
    bit pattern plus one: non-negative floats are ordered as their bits)."""
    cell[0] = x
    bits = cell.view(np.int64)
    bits[0] += 1
    return cell[0]


@_jit
def _next_threshold(dmin, delta, inf, cell):  # pragma: no cover
    """The smallest multiple of Δ above ``dmin``; ``inf`` when that would not fit (integers) or
    Δ is infinite. On real graphs a Δ below the float spacing at ``dmin`` (the quotient
    overflows, or the multiple rounds onto ``dmin``) gives the bucket of ``dmin`` alone."""
    if delta == inf:
        return inf
    q = dmin // delta
    if q == inf:
        return _next_up(dmin, cell)
    base = q * delta
    if base > inf - delta:
        return inf
    t = base + delta
    if t <= dmin:
        t = _next_up(dmin, cell)
    return t


@_jit
def _solve(indptr, indices, weights, source, delta, dist, stop):  # pragma: no cover
    """The near-far loop on ``dist`` (all :data:`INF`, int64, or ``inf``, float64, on entry).
    Returns (steps, buckets, relaxations, updates, max_frontier); ``stop[0]`` set ends it early
    (the caller then discards the result; see :func:`~sssp.cpu.parallel.run_stoppable`)."""
    n = indptr.size - 1
    inf = dist[source]
    dist[source] = 0
    frontier = np.empty(n, dtype=np.int32)
    fdist = np.empty(n, dtype=dist.dtype)  # the distance each frontier node pushes
    improved = np.empty(n, dtype=np.int32)
    stamp = np.zeros(n, dtype=np.int64)  # the last step that lowered dist[v] (steps start at 1)
    far_v = np.empty(max(n, 16), dtype=np.int32)
    far_d = np.empty(max(n, 16), dtype=dist.dtype)
    far_v[0] = source
    far_d[0] = dist[source]
    nfar = 1
    nf = 0
    threshold = dist[source]
    cell = np.empty(1, dtype=dist.dtype)
    steps = buckets = relaxations = updates = max_frontier = 0
    while stop[0] == 0:
        if nf == 0:
            dmin = inf
            live = 0
            for i in range(nfar):  # drop stale entries: the node has improved since
                v = far_v[i]
                d = far_d[i]
                if dist[v] == d:
                    far_v[live] = v
                    far_d[live] = d
                    live += 1
                    if d < dmin:
                        dmin = d
            nfar = live
            if nfar == 0:
                break
            threshold = _next_threshold(dmin, delta, inf, cell)
            buckets += 1
            keep = 0
            for i in range(nfar):
                if far_d[i] < threshold:
                    frontier[nf] = far_v[i]
                    fdist[nf] = far_d[i]
                    nf += 1
                else:
                    far_v[keep] = far_v[i]
                    far_d[keep] = far_d[i]
                    keep += 1
            nfar = keep
        steps += 1
        max_frontier = max(max_frontier, nf)
        count = 0
        for i in range(nf):
            u = frontier[i]
            du = fdist[i]
            relaxations += indptr[u + 1] - indptr[u]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist[v]:
                    dist[v] = nd
                    if stamp[v] != steps:
                        stamp[v] = steps
                        improved[count] = v
                        count += 1
        updates += count
        nf = 0
        for j in range(count):
            v = improved[j]
            d = dist[v]
            if d < threshold:
                frontier[nf] = v
                fdist[nf] = d
                nf += 1
            else:
                if nfar == far_v.size:
                    far_v = _grow(far_v)
                    far_d = _grow(far_d)
                far_v[nfar] = v
                far_d[nfar] = d
                nfar += 1
    return steps, buckets, relaxations, updates, max_frontier


@_jit
def _tight_tree(indptr, indices, weights, dist, source, inf):  # pragma: no cover
    """The predecessor rule of the module docstring."""
    n = dist.size
    pred = np.full(n, -1, dtype=np.int32)
    # Strict tight edges; u in increasing order, so the first hit is the smallest.
    for u in range(n):
        du = dist[u]
        if du == inf:
            continue
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if pred[v] != -1:
                continue
            dv = dist[v]
            # dv != inf: a real sum may overflow to inf on a node that stays unreached
            if du < dv and dv != inf and du + weights[e] == dv:
                pred[v] = np.int32(u)
    level = np.full(n, -1, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    size = 0
    missing = 0
    for v in range(n):
        if dist[v] == inf:
            continue
        if v == source or pred[v] != -1:
            level[v] = 0
            queue[size] = v
            size += 1
        else:
            missing += 1
    if missing == 0:
        return pred
    # Flat tight edges, level by level from level 0; within a level any order gives the same
    # result because a node keeps the smallest parent of the previous level.
    start = 0
    depth = 0
    while start < size and missing > 0:
        end = size
        for i in range(start, end):
            u = queue[i]
            du = dist[u]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if v == u or dist[v] != du or du + weights[e] != du:
                    continue
                if level[v] == -1:
                    level[v] = depth + 1
                    pred[v] = np.int32(u)
                    queue[size] = v
                    size += 1
                    missing -= 1
                elif level[v] == depth + 1 and u < pred[v]:
                    pred[v] = np.int32(u)
        start = end
        depth += 1
    return pred


# -- Python front end -----------------------------------------------------------------------------
_warmed: set[np.dtype] = set()


def _warm(wdtype: np.dtype) -> None:
    """Compile (or load from numba's cache) for this weight dtype on a tiny graph, so that the
    timed call excludes compilation."""
    key = np.dtype(wdtype)
    if key in _warmed:
        return
    tiny = Graph(np.array([0, 1, 1]), np.array([1]), np.array([1], dtype=key), name="warm")
    _run(tiny, 0, default_delta(tiny))
    _warmed.add(key)


def effective_delta(graph: Graph, delta: int | float) -> int | float:
    """Δ as the solver uses it: on integer graphs rounded up to an integer (distances are
    integers, so this keeps every threshold exact) and capped at :data:`INF`; on real graphs a
    float64 (``inf`` for anything beyond float64's range)."""
    return round_delta(delta, graph.is_float)


def round_delta(delta: int | float, is_float: bool) -> int | float:
    """:func:`effective_delta` for a graph with real (``is_float``) or integer weights."""
    if is_float:
        try:
            return float(delta)
        except OverflowError:
            return math.inf
    if delta >= INF:
        return INF
    return max(1, math.ceil(delta))


def scaled_delta(graph: Graph, scale: float) -> int | float:
    """Δ as ``scale`` times :func:`default_delta` (how the tuner stores near-far's Δ, so that a
    class's choice carries over to its other graphs), rounded as :func:`effective_delta`."""
    return effective_delta(graph, default_delta(graph) * scale)


def default_delta(graph: Graph) -> int | float:
    """Davidson et al.'s rule: Δ = 32 · (mean edge weight) / (mean out-degree) = 32·n·Σw / m².

    A bucket then holds about a warp's width of relaxations per node (32 = the warp width
    they tuned for): small on dense graphs (towards Dijkstra), large on sparse ones (towards
    Bellman-Ford). Rounded up to an integer (at least 1) on integer graphs; 1 when no edge has
    a positive weight (all distances are then 0 and every Δ runs the same single bucket).
    """
    return delta_rule(graph.n, graph.m, weight_total(graph), graph.is_float)


def weight_total(graph: Graph) -> float:
    """The weights of ``graph`` summed in float64 (0 without edges)."""
    return float(np.sum(graph.weights, dtype=np.float64)) if graph.m else 0.0


def delta_rule(n: int, m: int, total: float, is_float: bool) -> int | float:
    """:func:`default_delta` from a graph's facts: ``n`` nodes, ``m`` edges, weights summing to
    ``total`` (:func:`weight_total`), real or integer (``is_float``)."""
    raw = WARP_WIDTH * total * n / (m * m) if m else 0.0
    if not raw > 0:  # no positive weight (or an underflow): any Δ gives the same solve
        raw = 1.0
    return round_delta(raw, is_float)


def tight_tree(graph: Graph, dist: np.ndarray, source: int) -> np.ndarray:
    """The predecessor tree of the module docstring for final distances ``dist`` (int64 with
    :data:`~sssp.result.UNREACHABLE`, or float64 with ``inf``), as int32 with -1 for the source
    and unreached nodes. The GPU version computes the strict half on the device and calls this
    only when some reached node has no strict tight in-edge."""
    dist = np.ascontiguousarray(dist)
    inf = dist.dtype.type(np.inf) if graph.is_float else dist.dtype.type(INF)
    _warm(graph.weights.dtype)
    return _tight_tree(graph.indptr, graph.indices, graph.weights, dist, int(source), inf)


def _run(graph: Graph, s: int, delta: int | float) -> tuple[np.ndarray, np.ndarray, tuple]:
    """The compiled solve and tree on fresh distances: (dist, pred, counters), interruptible
    between steps (:func:`~sssp.cpu.parallel.run_stoppable`)."""
    dist = _unreached(graph)
    d = np.float64(delta) if graph.is_float else np.int64(delta)
    inf = dist[s]

    def both(stop: np.ndarray) -> tuple[np.ndarray, tuple]:
        counters = _solve(graph.indptr, graph.indices, graph.weights, s, d, dist, stop)
        if stop[0]:
            return dist, counters
        return _tight_tree(graph.indptr, graph.indices, graph.weights, dist, s, inf), counters

    pred, counters = run_stoppable(both, size=graph.n + graph.m)
    return dist, pred, counters


def near_far(graph: Graph, source: int, *, delta: float | None = None) -> SSSPResult:
    """Near-far / Δ-stepping shortest paths, sequential CPU version (see the module docstring).

    Parameters
    ----------
    graph : Graph
        Parallel edges, self-loops and zero weights are allowed.
    source : int
        In ``[0, graph.n)``.
    delta : float, optional
        The bucket width Δ, > 0; ``inf`` gives a single bucket (Bellman-Ford with a work
        queue), a tiny Δ one bucket per distinct distance (Dijkstra). Default:
        :func:`default_delta`. Rounded up to an integer on integer graphs.

    Returns
    -------
    SSSPResult
        ``dist`` shape (n,) (int64 with :data:`~sssp.result.UNREACHABLE` for unreached nodes;
        float64 with ``inf`` on graphs with real weights), ``pred`` int32 shape (n,),
        ``algorithm="near-far"``, ``variant="successors"``, ``backend="cpu"``, ``iterations`` =
        the steps, ``timings["total"]`` (the compiled solve and the tree; compilation excluded)
        and ``stats``:

        ``"delta"`` : int or float
            The Δ that ran.
        ``"buckets"`` : int
            Threshold raises.
        ``"relaxations"`` : int
            Edges relaxed, summed over steps (the work).
        ``"updates"`` : int
            Nodes whose distance dropped, summed over steps (each counted once per step).
        ``"max_frontier"`` : int
            The largest near frontier.
        ``"reached"`` : int
            Nodes with a finite distance.

    Raises
    ------
    InvalidGraphError
        Source out of range.
    InvalidTypeError, InvalidArgumentError
        ``delta`` is not a number, or not positive.
    """
    s = check_source(graph, source)
    d_eff = default_delta(graph) if delta is None else effective_delta(graph, check_delta(delta))
    _warm(graph.weights.dtype)
    t0 = time.perf_counter()
    dist, pred, (steps, buckets, relaxations, updates, max_frontier) = _run(graph, s, d_eff)
    total = time.perf_counter() - t0
    reached = int(np.count_nonzero(np.isfinite(dist) if graph.is_float else dist != INF))
    stats = {
        "delta": d_eff,
        "buckets": int(buckets),
        "relaxations": int(relaxations),
        "updates": int(updates),
        "max_frontier": int(max_frontier),
        "reached": reached,
    }
    log.debug(
        "near-far on %s from %d, delta %s: %d steps, %d buckets, %.3g s",
        graph.name,
        s,
        d_eff,
        steps,
        buckets,
        total,
    )
    return SSSPResult(
        dist=dist,
        pred=pred,
        source=s,
        algorithm="near-far",
        variant="successors",
        backend="cpu",
        iterations=int(steps),
        timings={"total": total},
        stats=stats,
    )
