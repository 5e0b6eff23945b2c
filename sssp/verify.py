"""Independent checks of a solver's output (used by tests, benchmarks and the tuner).

They recompute every reached node's distance from its predecessor's instead of trusting the
returned distances, so a wrong tree cannot hide behind right-looking numbers.
"""

from __future__ import annotations

import numpy as np

from .errors import SSSPError
from .graph import Graph
from .result import SSSPResult


class VerificationError(SSSPError):
    """A result disagrees with the reference or its predecessor tree is invalid."""


def min_edge_weight(graph: Graph, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Weight of the lightest edge ``src[i] -> dst[i]`` for each i (int64, or float64 on graphs
    with real weights); -1 where there is none.

    Parallel edges are allowed in a :class:`Graph`, so the tree check must use the lightest one.
    """
    s, d, w = graph.edges()
    key = s.astype(np.int64) * graph.n + d
    order = np.lexsort((w, key))
    key_sorted = key[order]
    first = np.ones(key_sorted.size, dtype=bool)
    first[1:] = key_sorted[1:] != key_sorted[:-1]
    ukeys, uw = key_sorted[first], w[order][first]
    q = np.asarray(src, dtype=np.int64) * graph.n + np.asarray(dst, dtype=np.int64)
    pos = np.searchsorted(ukeys, q)
    pos_c = np.minimum(pos, max(ukeys.size - 1, 0))
    found = (pos < ukeys.size) & (ukeys[pos_c] == q) if ukeys.size else np.zeros(q.size, bool)
    out = np.full(q.size, -1, dtype=np.float64 if graph.is_float else np.int64)
    out[found] = uw[pos_c[found]]
    return out


def check_tree(graph: Graph, result: SSSPResult) -> None:
    """Raise :class:`VerificationError` unless ``result.pred`` is a valid shortest-path tree for
    ``result.dist``: the source has distance 0 and no predecessor, every other reached node's
    predecessor is reached, joined to it by an edge, and ``dist[pred] + w == dist``; unreached
    nodes have no predecessor; following predecessors always ends at the source."""
    dist, pred, s = result.dist, result.pred, result.source
    n = graph.n
    if pred is None:
        raise VerificationError(
            "the result has no predecessor tree to check (solve with pred=True)"
        )
    if dist.shape != (n,) or pred.shape != (n,):
        raise VerificationError(f"result shapes {dist.shape}, {pred.shape} do not match n = {n}")
    if dist[s] != 0 or pred[s] != -1:
        raise VerificationError(
            f"source {s} has dist {dist[s]} and pred {pred[s]}, expected 0 and -1"
        )
    reached = result.reached
    bad = np.flatnonzero(~reached & (pred != -1))
    if bad.size:
        raise VerificationError(f"unreached node {bad[0]} has predecessor {pred[bad[0]]}")
    nodes = np.flatnonzero(reached)
    nodes = nodes[nodes != s]
    p = pred[nodes].astype(np.int64)
    if np.any((p < 0) | (p >= n)):
        v = nodes[np.flatnonzero((p < 0) | (p >= n))[0]]
        raise VerificationError(f"reached node {v} has invalid predecessor {pred[v]}")
    if np.any(~reached[p]):
        v = nodes[np.flatnonzero(~reached[p])[0]]
        raise VerificationError(f"node {v}'s predecessor {pred[v]} is unreached")
    w = min_edge_weight(graph, p, nodes)
    if np.any(w < 0):
        v = nodes[np.flatnonzero(w < 0)[0]]
        raise VerificationError(f"no edge {pred[v]} -> {v} for node {v}'s predecessor")
    recomputed = dist[p] + w
    wrong = np.flatnonzero(recomputed != dist[nodes])
    if wrong.size:
        v = nodes[wrong[0]]
        raise VerificationError(
            f"node {v}: dist {dist[v]} but dist[pred={pred[v]}] + w = {recomputed[wrong[0]]}"
        )
    # Acyclicity: with zero-weight edges equal distances can form a cycle; walk up by doubling.
    anc = pred.astype(np.int64).copy()
    anc[s] = s
    anc[~reached] = s
    for _ in range(int(np.ceil(np.log2(max(n, 2)))) + 1):
        anc = anc[anc]
    if np.any(anc[nodes] != s):
        v = nodes[np.flatnonzero(anc[nodes] != s)[0]]
        raise VerificationError(f"following predecessors from node {v} never reaches the source")


def check_against(reference: np.ndarray, result: SSSPResult) -> None:
    """Raise :class:`VerificationError` unless ``result.dist`` equals ``reference`` exactly
    (same dtype kind too: integer distances are never compared with float ones)."""
    if reference.dtype.kind != result.dist.dtype.kind:
        raise VerificationError(
            f"{result.algorithm}/{result.variant} on {result.backend}: distances of dtype "
            f"{result.dist.dtype}, the reference's are {reference.dtype}"
        )
    diff = np.flatnonzero(reference != result.dist)
    if diff.size:
        v = diff[0]
        raise VerificationError(
            f"{result.algorithm}/{result.variant} on {result.backend}: {diff.size} distances differ "
            f"from the reference; first at node {v}: {result.dist[v]} != {reference[v]}"
        )
