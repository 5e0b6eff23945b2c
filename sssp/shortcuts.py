"""Shortcut edges: fewer dependent steps on graphs of high diameter.

A frontier method (near-far, Crauser) needs at least as many steps as the shortest paths from
the source have edges: on a road network or a mesh, thousands, whatever Δ is. An edge ``(u, v)``
whose weight is the exact distance ``d(u, v)`` changes no distance, and a path that used the
nodes between ``u`` and ``v`` now takes one step for them. :func:`with_shortcuts` gives every
node such an edge to each of the ``rho`` nodes nearest to it: Blelloch, Gu, Sun and
Tangwongsan's (k, ρ)-graphs ("Parallel shortest paths using radius stepping", SPAA 2016). On a
2-D network the hops of a shortest path fall by about sqrt(rho) while the edges grow by about
rho / degree (``benchmarks/shortcut_steps.py``).

The distances are unchanged; the predecessor tree is not, as a shortcut is no edge of the
graph. A solver that relaxes the augmented graph builds the tree on the original one (the tree
depends on the distances only: :mod:`sssp.cpu.nearfar`).

Integer weights only. A real shortcut weight would be a float64 sum taken in another order than
the path's own left-to-right sum, so distances through it could differ from SciPy's in the last
bit.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from .cpu.heap import pop as _pop
from .cpu.heap import push as _push
from .cpu.parallel import run_stoppable
from .errors import InvalidArgumentError, InvalidGraphError
from .graph import Graph

__all__ = ["with_shortcuts"]


HUB_DEGREE = 256
"""The searches of :func:`with_shortcuts` pass through no node of more out-edges than this."""


def with_shortcuts(
    graph: Graph, rho: int, *, max_weight: int | None = None, hub_degree: int = HUB_DEGREE
) -> Graph:
    """``graph`` with an edge from every node to each of the ``rho`` nodes nearest to it.

    Parameters
    ----------
    graph : Graph
        Integer weights.
    rho : int
        Nearest nodes per node, ``>= 1`` (1 adds nothing: the nearest node is a neighbour).
        Nearness is by distance, the node itself not counted; among nodes at the last distance
        the search's order decides (the same for the same graph). A node with fewer reachable
        nodes gets edges to all of them.
    max_weight : int, optional
        No shortcut heavier than this (the searches stop there). Default: no bound beyond the
        graph's own (``(n + 1) * weight < 2**63``).
    hub_degree : int
        A search from ``u`` passes through no other node of more out-edges than this: it may
        end at such a hub, not walk its edges. So the build reads at most about
        ``n * rho * hub_degree`` edges plus each row once, even on graphs with hubs of millions
        of edges, and a shortcut that would run through a hub is weighted by the shortest path
        that does not (a longer path's length: no distance changes, the shortcut is only less
        useful). Roads and meshes have no such nodes.

    Returns
    -------
    Graph
        Row ``u`` holds ``u``'s own edges, in their order, then its shortcuts by distance: an
        edge to each nearest node ``v`` that ``u`` has no edge to of weight ``d(u, v)`` already.
        ``meta["shortcuts"]`` holds ``rho``, the shortcut count and the build's seconds.

    Raises
    ------
    InvalidGraphError
        Real weights.
    InvalidArgumentError
        ``rho < 1``, a negative ``max_weight`` or ``hub_degree``.
    """
    if graph.is_float:
        raise InvalidGraphError(
            f"shortcuts need integer weights; {graph.name} has real ones (a shortcut's sum "
            "would round differently from the path's)"
        )
    if isinstance(rho, bool) or not isinstance(rho, (int, np.integer)) or rho < 1:
        raise InvalidArgumentError(f"rho must be an integer >= 1, got {rho!r}")
    limit = (2**63 - 1) // (graph.n + 1)
    cap = limit if max_weight is None else min(int(max_weight), limit)
    if cap < 0:
        raise InvalidArgumentError(f"max_weight must be >= 0, got {max_weight!r}")
    if (
        isinstance(hub_degree, bool)
        or not isinstance(hub_degree, (int, np.integer))
        or hub_degree < 0
    ):
        raise InvalidArgumentError(f"hub_degree must be an integer >= 0, got {hub_degree!r}")
    t0 = time.perf_counter()
    w64 = graph.weights.astype(np.int64)
    counts, near_v, near_w = run_stoppable(  # Ctrl-C stops the searches within a node's
        _nearest,
        graph.indptr,
        graph.indices,
        w64,
        int(rho),
        np.int64(cap),
        int(hub_degree),
        numba.get_num_threads(),
        size=graph.n + graph.m,
    )
    indptr, indices, weights = _merge(graph.indptr, graph.indices, w64, counts, near_v, near_w)
    added = int(counts.sum())
    meta = dict(graph.meta)
    meta["shortcuts"] = {
        "rho": int(rho),
        "edges": added,
        "max_weight": int(cap),
        "hub_degree": int(hub_degree),
        "seconds": time.perf_counter() - t0,
    }
    return Graph(indptr, indices, weights, name=f"{graph.name}+shortcuts{rho}", meta=meta)


# -- compiled parts -------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _search(
    indptr, indices, weights, u, rho, cap, hub, dist, direct, touched, hk, hv, out_v, out_w
):  # pragma: no cover - compiled
    """Dijkstra from ``u`` until ``rho`` other nodes are settled (or none is left within
    ``cap``), walking no edge of a node other than ``u`` with more than ``hub`` of them; writes
    them to ``out_v``/``out_w`` in settling order and returns their count (nodes ``u`` has an
    edge to at their distance excluded). A node is pushed only when its distance falls, so the
    one entry at its final distance settles it and later ones are stale. ``dist``/``direct``
    are all -1 on entry and on return; ``hk``/``hv`` a heap that may grow (returned)."""
    for e in range(indptr[u], indptr[u + 1]):  # u's lightest edge to each neighbour
        v = indices[e]
        if direct[v] < 0 or weights[e] < direct[v]:
            direct[v] = weights[e]
    dist[u] = 0
    touched[0] = u
    nt = 1
    hk, hv, hs = _push(hk, hv, 0, 0, u)
    found = 0
    settled = 0
    while hs > 0:
        d, x, hs = _pop(hk, hv, hs)
        if d != dist[x]:
            continue  # stale: x was lowered after this entry
        settled += 1
        if x != u and direct[x] != d:
            out_v[found] = x
            out_w[found] = d
            found += 1
        if settled > rho:
            break
        if x != u and indptr[x + 1] - indptr[x] > hub:
            continue
        for e in range(indptr[x], indptr[x + 1]):
            v = indices[e]
            nd = d + weights[e]
            if nd > cap or (dist[v] >= 0 and nd >= dist[v]):
                continue  # a settled node's distance is <= d <= nd
            if dist[v] < 0:
                touched[nt] = v
                nt += 1
            dist[v] = nd
            hk, hv, hs = _push(hk, hv, hs, nd, v)
    for i in range(nt):
        dist[touched[i]] = -1
    for e in range(indptr[u], indptr[u + 1]):
        direct[indices[e]] = -1
    return found, hk, hv


@numba.njit(cache=True, nogil=True, parallel=True)
def _nearest(indptr, indices, weights, rho, cap, hub, threads, stop):  # pragma: no cover
    """Per node, its shortcuts: (count, targets, weights), at ``u * rho`` in the flat arrays;
    each search first looks at ``stop[0]`` (nonzero: the rest are skipped)."""
    n = indptr.size - 1
    counts = np.zeros(n, np.int64)
    near_v = np.empty(n * rho, np.int32)
    near_w = np.empty(n * rho, np.int64)
    chunks = min(n, 4 * threads)
    for c in numba.prange(chunks):
        dist = np.full(n, -1, np.int64)
        direct = np.full(n, -1, np.int64)
        touched = np.empty(n, np.int64)
        hk = np.empty(64, np.int64)
        hv = np.empty(64, np.int64)
        out_v = np.empty(rho, np.int32)
        out_w = np.empty(rho, np.int64)
        for u in range(c * n // chunks, (c + 1) * n // chunks):
            if stop[0]:
                break
            found, hk, hv = _search(
                indptr, indices, weights, u, rho, cap, hub, dist, direct, touched, hk, hv, out_v,
                out_w,
            )  # fmt: skip
            counts[u] = found
            near_v[u * rho : u * rho + found] = out_v[:found]
            near_w[u * rho : u * rho + found] = out_w[:found]
    return counts, near_v, near_w


@numba.njit(cache=True, nogil=True)
def _merge(indptr, indices, weights, counts, near_v, near_w):  # pragma: no cover - compiled
    """The augmented CSR: each row's own edges, then its shortcuts."""
    n = indptr.size - 1
    rho = near_v.size // n if n else 0
    out_ptr = np.empty(n + 1, np.int64)
    out_ptr[0] = 0
    for u in range(n):
        out_ptr[u + 1] = out_ptr[u] + (indptr[u + 1] - indptr[u]) + counts[u]
    out_idx = np.empty(out_ptr[n], np.int32)
    out_w = np.empty(out_ptr[n], np.int64)
    for u in range(n):
        k = out_ptr[u]
        for e in range(indptr[u], indptr[u + 1]):
            out_idx[k] = indices[e]
            out_w[k] = weights[e]
            k += 1
        for j in range(counts[u]):
            out_idx[k] = near_v[u * rho + j]
            out_w[k] = near_w[u * rho + j]
            k += 1
    return out_ptr, out_idx, out_w
