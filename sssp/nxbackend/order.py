"""NetworkX's Dijkstra order, reproduced from final distances.

NetworkX's ``_dijkstra_multisource`` settles nodes from a heap of ``(distance, push count,
node)``: among nodes at equal distance the one pushed first comes first, and a node's path runs
through the first settled node that reached it at its final distance (a later equal one does not
replace it). The push count of a node's final entry is fixed when that first predecessor is
settled and walks its adjacency (``G._adj``, insertion order), so the whole order follows from
the distances, the sources' order and the adjacency order (:meth:`sssp.Graph.from_networkx` keeps
every row in it). Every push of a node at its final distance happens before that distance's
first pop or during its pops (zero weights), so the heap's order among equal distances is the
order of those pushes: one first-in, first-out queue per distinct distance, taken in increasing
order, gives NetworkX's settling order in one pass over the reached nodes' edges.

Given the distances any solver computed, :func:`settle` returns that order and those parents, so
the backend's dicts list the nodes in NetworkX's order and its paths are NetworkX's paths, ties
included. It reads each reached node's out-edges once (no relaxation: the distances are final).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from ..cpu.parallel import _jit
from ..graph import Graph
from ..result import unreachable_value


@_jit
def _enqueue(head, tail, after, level, v):  # pragma: no cover - compiled
    """Append node ``v`` to the queue of distance rank ``level`` (linked through ``after``)."""
    if tail[level] < 0:
        head[level] = v
    else:
        after[tail[level]] = v
    tail[level] = v


@_jit
def _settle(
    indptr, indices, weights, dist, rank, levels, sources, target, limit
):  # pragma: no cover
    n = indptr.size - 1
    order = np.empty(n, np.int64)
    parent = np.full(n, -1, np.int64)
    found = np.empty(n, np.int64)  # the nodes in the order they are first pushed
    pushed = np.zeros(n, np.bool_)  # pushed with the final distance
    seen = np.zeros(n, np.bool_)  # pushed at all
    # One queue per distinct distance (rank), in push order: the heap's order among equals.
    head = np.full(levels, -1, np.int64)
    tail = np.full(levels, -1, np.int64)
    after = np.full(n, -1, np.int64)
    nfound = 0
    for s in sources:
        if not pushed[s]:
            pushed[s] = seen[s] = True
            found[nfound] = s
            nfound += 1
            _enqueue(head, tail, after, rank[s], s)
    k = 0
    for level in range(levels):
        v = head[level]
        while v >= 0:
            order[k] = v
            k += 1
            if v == target:
                return order[:k], parent, found[:nfound]
            dv = dist[v]
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if pushed[u] or rank[u] < 0:
                    continue
                length = dv + weights[e]
                if length == dist[u]:  # its last push: its path runs through v
                    pushed[u] = True
                    parent[u] = v
                    _enqueue(head, tail, after, rank[u], u)
                elif not length <= limit:  # past the cutoff: no push
                    continue
                if not seen[u]:  # its first push (a later, shorter one may follow)
                    seen[u] = True
                    found[nfound] = u
                    nfound += 1
            v = after[v]
    return order[:k], parent, found[:nfound]


def reached(dist: np.ndarray) -> np.ndarray:
    """The reached nodes of a distance row (int64 with its sentinel, or float64 with inf)."""
    return dist != unreachable_value(dist.dtype)


def settle(
    graph: Graph, dist: np.ndarray, sources: list[int], target: int = -1, cutoff: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NetworkX's settling order and path parents for final distances ``dist`` from
    ``sources`` (node indices, in the order NetworkX iterates them) within ``cutoff``, on
    ``graph`` with its rows in NetworkX's adjacency order.

    Returns
    -------
    order : int64 array
        The reached nodes as NetworkX's Dijkstra settles them (up to ``target`` when given).
    parent : int64 array, shape (n,)
        Each node's predecessor on NetworkX's path (-1 for the sources, the unreached and the
        nodes past ``target``).
    found : int64 array
        The nodes in the order NetworkX first pushes them (the order of its predecessor dict).
    """
    dist = np.ascontiguousarray(dist)
    weights = graph.weights.astype(dist.dtype, copy=False)
    src = np.asarray(sources, dtype=np.int64)
    limit = unreachable_value(dist.dtype)
    if cutoff is not None:  # an integer sum is at most the cutoff when at most its floor
        limit = cutoff if dist.dtype.kind == "f" else min(limit, math.floor(cutoff))
    limit = dist.dtype.type(limit)
    hit = reached(dist)
    rank = np.full(dist.size, -1, np.int64)
    levels, rank[hit] = np.unique(dist[hit], return_inverse=True)
    return _settle(
        graph.indptr, graph.indices, weights, dist, rank, levels.size, src, int(target), limit
    )


@_jit
def _entry_before(hd, hc, i, j):  # pragma: no cover - compiled
    return hd[i] < hd[j] or (hd[i] == hd[j] and hc[i] < hc[j])


@_jit
def _entry_swap(hd, hc, hv, i, j):  # pragma: no cover - compiled
    hd[i], hd[j] = hd[j], hd[i]
    hc[i], hc[j] = hc[j], hc[i]
    hv[i], hv[j] = hv[j], hv[i]


@_jit
def _entry_push(hd, hc, hv, size, d, c, v):  # pragma: no cover - compiled
    i = size
    hd[i], hc[i], hv[i] = d, c, v
    while i > 0:
        up = (i - 1) >> 1
        if not _entry_before(hd, hc, i, up):
            break
        _entry_swap(hd, hc, hv, i, up)
        i = up
    return size + 1


@_jit
def _entry_pop(hd, hc, hv, size):  # pragma: no cover - compiled
    d, v = hd[0], hv[0]
    size -= 1
    hd[0], hc[0], hv[0] = hd[size], hc[size], hv[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and _entry_before(hd, hc, left + 1, left):
            child = left + 1
        if not _entry_before(hd, hc, child, i):
            break
        _entry_swap(hd, hc, hv, i, child)
        i = child
    return d, v, size


@_jit
def _two_way(
    fptr, fidx, fw, bptr, bidx, bw, source, target, state, tent, pred, touched
):  # pragma: no cover - compiled
    # state[direction, v]: 1 seen, 2 settled; tent: the distance seen; pred: the node it came
    # from. Kept between queries: only the entries this query touched are reset at its end.
    n = fptr.size - 1
    zero = fw[:0].sum()  # 0 in the weights' type
    cap = 1024  # heap entries per direction, doubled when one fills (a query settles few nodes)
    hd = np.empty((2, cap), fw.dtype)
    hc = np.empty((2, cap), np.int64)
    hv = np.empty((2, cap), np.int64)
    size = np.zeros(2, np.int64)
    state[0, source] = state[1, target] = 1
    tent[0, source] = tent[1, target] = zero
    touched[0], touched[1] = source, n + target
    ntouched = 2
    size[0] = _entry_push(hd[0], hc[0], hv[0], 0, zero, 0, source)
    size[1] = _entry_push(hd[1], hc[1], hv[1], 0, zero, 1, target)
    count = 2
    best, meet = zero, -1
    found = False
    direction = 1
    while size[0] and size[1]:
        direction = 1 - direction
        dist, v, left = _entry_pop(hd[direction], hc[direction], hv[direction], size[direction])
        size[direction] = left
        if state[direction, v] == 2:
            continue
        state[direction, v] = 2
        if state[1 - direction, v] == 2:
            found = True
            break
        ptr, idx, wt = (fptr, fidx, fw) if direction == 0 else (bptr, bidx, bw)
        for e in range(ptr[v], ptr[v + 1]):
            w = idx[e]
            length = dist + wt[e]
            if state[direction, w] == 2:
                continue
            if state[direction, w] == 0 or length < tent[direction, w]:
                if state[direction, w] == 0:
                    state[direction, w] = 1
                    touched[ntouched] = direction * n + w
                    ntouched += 1
                tent[direction, w] = length
                if size[direction] == cap:
                    hd, hc, hv = _grown(hd, cap), _grown(hc, cap), _grown(hv, cap)
                    cap *= 2
                size[direction] = _entry_push(
                    hd[direction], hc[direction], hv[direction], size[direction], length, count, w
                )
                count += 1
                pred[direction, w] = v
                if state[1 - direction, w] != 0:
                    total = length + tent[1 - direction, w]
                    if meet < 0 or best > total:
                        best, meet = total, w
    # The path: the meeting node's forward chain reversed, then its backward chain.
    ahead = behind = 0
    if found:
        u = meet
        while u >= 0:
            ahead += 1
            u = pred[0, u]
        u = pred[1, meet]
        while u >= 0:
            behind += 1
            u = pred[1, u]
    path = np.empty(ahead + behind, np.int64)
    if found:
        i, u = ahead - 1, meet
        while u >= 0:
            path[i] = u
            i -= 1
            u = pred[0, u]
        i, u = ahead, pred[1, meet]
        while u >= 0:
            path[i] = u
            i += 1
            u = pred[1, u]
    for k in range(ntouched):
        d, v = touched[k] // n, touched[k] % n
        state[d, v] = 0
        pred[d, v] = -1
    return found, best, path


@_jit
def _grown(heap, cap):  # pragma: no cover - compiled
    out = np.empty((2, 2 * cap), heap.dtype)
    out[:, :cap] = heap
    return out


class TwoWay:
    """NetworkX's ``bidirectional_dijkstra`` on one graph, compiled: the two searches alternate,
    each settles from its own heap of (distance, push count) with one count shared by both, and
    the path runs through the node where the sum of the two searches' distances was last
    improved, once a node is settled from both sides. ``graph``'s rows in NetworkX's adjacency
    order, ``backward``'s in its predecessor order (the same graph for an undirected one). The
    per-node state is allocated once and reset where a query touched it, so a query costs what
    it settles, not the graph's size; queries on one instance run one at a time."""

    def __init__(self, graph: Graph, backward: Graph) -> None:
        n = graph.n
        self._arrays = (
            graph.indptr, graph.indices, _wide(graph.weights),
            backward.indptr, backward.indices, _wide(backward.weights),
        )  # fmt: skip
        self._state = np.zeros((2, n), np.uint8)
        self._tent = np.zeros((2, n), self._arrays[2].dtype)
        self._pred = np.full((2, n), -1, np.int64)
        self._touched = np.empty(2 * n, np.int64)
        self._lock = threading.Lock()

    def path(self, source: int, target: int) -> tuple[Any, list[int]] | None:
        """(distance, path of node indices) from ``source`` to ``target`` (not equal), or None
        when no path exists."""
        with self._lock:
            found, best, path = _two_way(
                *self._arrays, int(source), int(target),
                self._state, self._tent, self._pred, self._touched,
            )  # fmt: skip
        return (best, path.tolist()) if found else None


def _wide(weights: np.ndarray) -> np.ndarray:
    """Weights in the type NetworkX's sums take: int64, or float64."""
    return weights.astype(np.float64 if weights.dtype.kind == "f" else np.int64, copy=False)
