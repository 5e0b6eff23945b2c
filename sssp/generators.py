"""The paper's synthetic inputs: G(n, p) random graphs, Martín's graphs and Graph500 Kronecker graphs.

Three generators, each seeded (``numpy.random.default_rng``), deterministic per seed and
vectorised (work is done in a bounded number of chunks, never in a Python loop per node or edge):

``random`` — :func:`random_graph`
    The paper's synthetic graphs: directed Erdős–Rényi G(n, p) without self-loops, drawn by
    geometric skips over the linearised n × (n − 1) adjacency matrix (Nobari et al., "Fast random
    graph generation", EDBT 2011). ``p = degree / (n − 1)``, so the expected mean out-degree is
    exactly ``degree``. Weights uniform integers 1…100. Edges come out sorted by (row, column),
    so the CSR is written directly, chunk by chunk, without a sort; peak memory stays close to
    the final CSR's size.

``martin`` — :func:`martin_graph`
    Martín et al.'s graphs (ICCS 2009): every node gets ``in_degree`` (7) random predecessors,
    uniform over the other nodes (never itself); weights uniform integers 1…10; stored as
    successors (CSR by source). Predecessors are drawn with replacement, so a node may (rarely,
    with probability about ``in_degree² / 2n``) get the same predecessor twice, i.e. a parallel
    edge; ``distinct=True`` redraws such nodes until their predecessors are distinct. Either way
    every node has in-degree exactly ``in_degree``.

``kronecker`` — :func:`kronecker_graph`
    Graph500 R-MAT/Kronecker graphs (the DIMACS10 ``kron_g500-logn*`` family): ``n = 2**scale``,
    ``edge_factor · n`` generated edges, initiator probabilities (A, B, C, D) =
    (0.57, 0.19, 0.19, 0.05), one quadrant draw per level for all edges at once, then a random
    vertex permutation. By default the graph is undirected (``undirected=True``: every generated
    edge is stored in both directions with the same weight, as Graph500 and DIMACS10 graphs are
    undirected); self-loops and parallel edges are kept by default, as the raw Graph500 generator
    produces them (``self_loops=False`` / ``multi_edges=False`` drop them; merged parallel edges
    keep their minimum weight). Weights uniform integers 1…100.

:func:`generate` dispatches on the kind name and accepts paper size labels (``"24k"``, ``"1M"``).
It also builds the high-diameter kinds of :mod:`sssp.spatial`, ``grid``, ``geometric`` and
``road`` (stand-ins for road networks and meshes).

Every graph's ``name`` is descriptive (``random-49k-deg200-s0``, ``martin-1M-in7-s0``,
``kronecker-logn16-ef16-s0``) and its ``meta`` records the kind, every parameter and the seed.
Structure and weights are drawn from two independent streams spawned from the seed, so changing
``weight_range`` does not change the edges.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from .classes import SIZE_LABELS, parse_size
from .errors import InvalidGraphError
from .graph import INT32_MAX, Graph, check_seed

log = logging.getLogger(__name__)

__all__ = [
    "KINDS",
    "generate",
    "kronecker_graph",
    "martin_graph",
    "random_graph",
]

KINDS = ("random", "martin", "kronecker", "grid", "geometric", "road")

CHUNK = 1 << 20
"""Edges handled per vectorised step; bounds the temporaries (a few int64 arrays of this size)."""
KRON_CHUNK = 1 << 16
"""Edges per step of the Kronecker level loop (``scale`` passes each), small to stay in cache."""

_INT64_BITS = 62  # bits of a packed sort key; int64 max is kept free as a sentinel
_SENTINEL = np.iinfo(np.int64).max
_LABEL_OF = {v: k for k, v in SIZE_LABELS.items()}


# -- validation helpers ---------------------------------------------------------------------------
def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def _check_n(n: Any, *, what: str = "n") -> int:
    if not _is_int(n) or n < 1:
        raise InvalidGraphError(f"{what} must be a positive integer, got {n!r}")
    if n > INT32_MAX:
        raise InvalidGraphError(f"{what} = {n} nodes exceeds the int32 node-id range")
    return int(n)


def memory_bytes() -> int | None:
    """Physical memory of this machine in bytes, or None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def _check_room(n: int, m: float, what: str) -> None:
    """Refuse, before allocating, a graph whose arrays (8 bytes per edge for indices and
    weights, plus the generator's 8-byte key per edge while it sorts, 8 per node) cannot fit
    in this machine's memory."""
    need = 16.0 * m + 8.0 * n
    have = memory_bytes()
    if have is not None and need > have:
        raise InvalidGraphError(
            f"{what} has about {m:.3g} edges and needs about {need / 2**30:.3g} GiB, more than "
            f"this machine's {have / 2**30:.3g} GiB of memory; ask for a smaller size or degree"
        )


def _check_weight_range(weight_range: Any) -> tuple[int, int]:
    try:
        lo, hi = weight_range
    except (TypeError, ValueError):
        raise InvalidGraphError(
            f"weight_range must be a pair (low, high), got {weight_range!r}"
        ) from None
    if not (_is_int(lo) and _is_int(hi)) or not 0 <= lo <= hi <= INT32_MAX:
        raise InvalidGraphError(
            f"weight_range must be integers 0 <= low <= high <= {INT32_MAX}, got {weight_range!r}"
        )
    return int(lo), int(hi)


def _rngs(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent (structure, weights) generators for ``seed``."""
    s_struct, s_weights = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(s_struct), np.random.default_rng(s_weights)


def _size_text(n: int) -> str:
    if n in _LABEL_OF:
        return _LABEL_OF[n]
    if n % 2**20 == 0:
        return f"{n >> 20}M"
    return str(n)


def _draw_weights(rng: np.random.Generator, m: int, lo: int, hi: int) -> np.ndarray:
    """``m`` uniform integers in ``[lo, hi]``, int32, drawn chunk by chunk (no int64 temporary
    of size ``m``).

    Returns
    -------
    ndarray, int32, shape (m,)
    """
    out = np.empty(m, dtype=np.int32)
    for start in range(0, m, CHUNK):
        stop = min(start + CHUNK, m)
        out[start:stop] = rng.integers(lo, hi, size=stop - start, dtype=np.int32, endpoint=True)
    return out


def _indptr_from_counts(counts: np.ndarray) -> np.ndarray:
    """CSR row pointers, int64 shape (n + 1,), from per-row edge counts of shape (n,)."""
    indptr = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr


def _trim(a: np.ndarray, size: int) -> np.ndarray:
    """Shrink an owned 1-D buffer to ``size`` entries in place (realloc, no copy when possible)."""
    if a.size == size:
        return a
    try:
        a.resize(size, refcheck=False)
        return a
    except ValueError:  # not owning its data: fall back to a contiguous prefix view
        return a[:size]


# -- random: G(n, p) by geometric skips ---------------------------------------------------------
def random_graph(
    n: int,
    degree: float,
    *,
    seed: int = 0,
    weight_range: tuple[int, int] = (1, 100),
) -> Graph:
    """A directed G(n, p) graph without self-loops, by geometric skips (Nobari et al. 2011).

    Every one of the ``n (n − 1)`` ordered pairs ``(u, v)``, ``u != v``, is an edge independently
    with probability ``p = degree / (n − 1)``; the number of edges is Binomial(n (n − 1), p) with
    mean ``n · degree``. Positions in the linearised adjacency matrix (row-major, the diagonal
    left out) are the cumulative sums of Geometric(p) skips; position ``q`` is the edge
    ``row = q // (n − 1)``, ``col = c + (c >= row)`` with ``c = q % (n − 1)``. The positions are
    increasing, so the edges arrive sorted by (row, col) and are written straight into the CSR.

    Parameters
    ----------
    n : int
        Node count, ``1 <= n <= 2**31 - 1``.
    degree : float
        Expected mean out-degree, ``0 <= degree <= n - 1`` (``n − 1`` gives the complete graph).
    seed : int
        Seed of ``numpy.random.default_rng`` (structure and weights use independent streams).
    weight_range : (int, int)
        Inclusive range of the uniform integer weights; the paper's is 1…100.

    Returns
    -------
    Graph
        ``indptr`` int64 (n + 1,), ``indices`` int32 (m,), ``weights`` int32 (m,); no self-loops,
        no parallel edges; columns sorted within each row.

    Raises
    ------
    InvalidGraphError
        For a bad ``n``, ``degree``, ``seed`` or ``weight_range``.

    Notes
    -----
    Memory: the column buffer is allocated once at mean + 10 σ of the edge count and trimmed in
    place at the end; besides it and the weights, only a few ``CHUNK``-sized int64 temporaries
    live at a time, so the peak stays near the final CSR's size (``8 m + 8 (n + 1)`` bytes).
    """
    n = _check_n(n)
    seed = check_seed(seed)
    lo, hi = _check_weight_range(weight_range)
    if isinstance(degree, bool) or not isinstance(degree, int | float | np.integer | np.floating):
        raise InvalidGraphError(f"degree must be a number, got {degree!r}")
    if not math.isfinite(degree) or degree < 0 or degree > n - 1:
        raise InvalidGraphError(
            f"degree must be between 0 and n - 1 = {n - 1} for n = {n} nodes, got {degree!r}"
        )
    t0 = time.perf_counter()
    total = n * (n - 1)  # positions in the linearised matrix; < 2**62, fits int64
    p = float(degree) / (n - 1) if n > 1 else 0.0
    if 0.0 < p < 1e-12:
        raise InvalidGraphError(
            f"degree {degree!r} is too small for n = {n} (edge probability {p:.3g} < 1e-12)"
        )
    _check_room(n, p * n * (n - 1), f"a random graph with n = {n} and mean degree {degree:g}")
    rng, wrng = _rngs(seed)
    counts = np.zeros(n, dtype=np.int64)
    if p == 0.0:
        indices = np.empty(0, dtype=np.int32)
        m = 0
    else:
        mean = total * p
        sd = math.sqrt(mean * (1.0 - p))
        capacity = min(total, math.ceil(mean + 10.0 * sd) + 16)
        indices = np.empty(capacity, dtype=np.int32)
        chunk = min(CHUNK, capacity)
        last = -1  # position of the previous edge
        m = 0
        while True:
            q = rng.geometric(p, size=chunk)  # int64 skips >= 1
            np.cumsum(q, out=q)
            q += last
            k = int(np.searchsorted(q, total))  # positions < total are edges
            q = q[:k]
            if k:
                last = int(q[-1])
                row, col = np.divmod(q, n - 1)
                del q
                col += col >= row  # skip the diagonal
                if m + k > indices.size:  # beyond mean + 10 sigma: practically never
                    log.warning("random_graph: edge buffer grown beyond mean + 10 sigma")
                    indices.resize(max(m + k, int(indices.size * 1.05)), refcheck=False)
                indices[m : m + k] = col
                r0 = int(row[0])  # rows are sorted: count only the rows this chunk spans
                row -= r0
                spans = np.bincount(row)
                counts[r0 : r0 + spans.size] += spans
                m += k
                del row, col
            if k < chunk:
                break
        indices = _trim(indices, m)
    weights = _draw_weights(wrng, m, lo, hi)
    g = Graph(
        _indptr_from_counts(counts),
        indices,
        weights,
        name=f"random-{_size_text(n)}-deg{degree:g}-s{seed}",
        meta={
            "source": "generator",
            "kind": "random",
            "method": "G(n,p) by geometric skips (Nobari et al., EDBT 2011)",
            "n": n,
            "degree": degree,
            "p": p,
            "seed": seed,
            "weight_range": (lo, hi),
            "directed": True,
            "self_loops": False,
            "multi_edges": False,
        },
    )
    log.info("generated %s: n=%d m=%d in %.2f s", g.name, n, m, time.perf_counter() - t0)
    return g


# -- shared: CSR from sorted (src, dst[, weight]) keys --------------------------------------------
def _csr_from_sorted_keys(
    keys: np.ndarray,
    n: int,
    dbits: int,
    wbits: int,
    *,
    dedup: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Split sorted packed keys ``(src << dbits | dst) << wbits | w`` into CSR arrays.

    Parameters
    ----------
    keys : ndarray, int64, shape (k,)
        Sorted ascending; consumed (it is overwritten when ``dedup``).
    n : int
        Node count.
    dbits, wbits : int
        Bit widths of the target and weight fields (``wbits == 0``: no packed weight).
    dedup : bool
        Keep only the first key of each (src, dst) group — the smallest weight.

    Returns
    -------
    indptr : ndarray, int64, shape (n + 1,)
    indices : ndarray, int32, shape (m,)
    wfield : ndarray, int32, shape (m,), or None when ``wbits == 0``
        The packed weight field (weight minus the range's low end).
    """
    k = keys.size
    if dedup and k:
        # forward in-place compaction, chunk by chunk; the kept prefix never overtakes the reader
        write = 0
        prev = None
        for start in range(0, k, CHUNK):
            block = keys[start : start + CHUNK] >> wbits  # (src, dst) part; a copy
            keep = np.empty(block.size, dtype=bool)
            keep[1:] = block[1:] != block[:-1]
            keep[0] = prev is None or block[0] != prev
            prev = int(block[-1])
            kept = keys[start : start + CHUNK][keep]  # a copy
            keys[write : write + kept.size] = kept
            write += kept.size
        keys = _trim(keys, write)
    m = keys.size
    counts = np.zeros(n, dtype=np.int64)
    indices = np.empty(m, dtype=np.int32)
    wfield = np.empty(m, dtype=np.int32) if wbits else None
    dmask = (1 << dbits) - 1
    wmask = (1 << wbits) - 1
    for start in range(0, m, CHUNK):
        block = keys[start : start + CHUNK]
        stop = start + block.size
        if wfield is not None:
            wfield[start:stop] = block & wmask
        rest = block >> wbits
        indices[start:stop] = rest & dmask
        rest >>= dbits
        counts += np.bincount(rest, minlength=n)
    return _indptr_from_counts(counts), indices, wfield


# -- martin ---------------------------------------------------------------------------------------
def martin_graph(
    n: int,
    *,
    seed: int = 0,
    in_degree: int = 7,
    weight_range: tuple[int, int] = (1, 10),
    distinct: bool = False,
) -> Graph:
    """Martín et al.'s graph: every node gets ``in_degree`` random predecessors.

    Each node ``v`` draws ``in_degree`` predecessors uniformly from the other ``n − 1`` nodes
    (never itself), with replacement unless ``distinct``; the edges ``pred -> v`` are stored as
    successors (CSR by source, targets ascending within a row).

    Parameters
    ----------
    n : int
        Node count (the paper uses k · 2**20, k = 1…11); ``n >= 2``.
    seed : int
        Seed of ``numpy.random.default_rng``.
    in_degree : int
        Predecessors per node (the paper's 7); ``1 <= in_degree <= n - 1`` (and any value when
        drawing with replacement is fine as long as ``n >= 2``).
    weight_range : (int, int)
        Inclusive range of the uniform integer weights; the paper's is 1…10.
    distinct : bool
        Redraw nodes that got the same predecessor twice, so there are no parallel edges.

    Returns
    -------
    Graph
        ``m = n · in_degree``; every node's in-degree is exactly ``in_degree``; out-degrees are
        Binomial-distributed with mean ``in_degree``. No self-loops.

    Raises
    ------
    InvalidGraphError
        For a bad ``n``, ``in_degree``, ``seed`` or ``weight_range``.
    """
    n = _check_n(n)
    seed = check_seed(seed)
    lo, hi = _check_weight_range(weight_range)
    if n < 2:
        raise InvalidGraphError(f"a Martín graph needs n >= 2 nodes (no self-loops), got n = {n}")
    if not _is_int(in_degree) or in_degree < 1:
        raise InvalidGraphError(f"in_degree must be a positive integer, got {in_degree!r}")
    in_degree = int(in_degree)
    if distinct and in_degree > n - 1:
        raise InvalidGraphError(
            f"in_degree = {in_degree} distinct predecessors need n - 1 >= {in_degree}, got n = {n}"
        )
    m = n * in_degree
    if m > np.iinfo(np.int64).max // 2 or m >= 2**40:
        raise InvalidGraphError(f"n * in_degree = {m} edges is too large")
    _check_room(n, m, f"a Martín graph with n = {n} and in-degree {in_degree}")
    t0 = time.perf_counter()
    rng, wrng = _rngs(seed)
    dbits = max(1, (n - 1).bit_length())
    # draw predecessors node-chunk by node-chunk; pack (pred << dbits | node) sort keys
    keys = np.empty(m, dtype=np.int64)
    nodes_per_chunk = max(1, CHUNK // in_degree)
    redrawn = 0
    for v0 in range(0, n, nodes_per_chunk):
        v1 = min(n, v0 + nodes_per_chunk)
        node = np.arange(v0, v1, dtype=np.int64)[:, None]
        pred = rng.integers(0, n - 1, size=(v1 - v0, in_degree), dtype=np.int64)
        pred += pred >= node  # uniform over the other nodes
        if distinct and in_degree > 1:
            while True:  # rounds of redraws; each round has ~in_degree^2/2n of the rows
                pred.sort(axis=1)
                bad = np.flatnonzero((pred[:, 1:] == pred[:, :-1]).any(axis=1))
                if bad.size == 0:
                    break
                redrawn += bad.size
                fresh = rng.integers(0, n - 1, size=(bad.size, in_degree), dtype=np.int64)
                fresh += fresh >= node[bad]
                pred[bad] = fresh
        pred <<= dbits
        pred |= node
        keys[v0 * in_degree : v1 * in_degree] = pred.ravel()
        del pred, node
    if redrawn:
        log.debug("martin_graph: redrew %d nodes with repeated predecessors", redrawn)
    keys.sort()
    indptr, indices, _ = _csr_from_sorted_keys(keys, n, dbits, 0, dedup=False)
    del keys
    weights = _draw_weights(wrng, m, lo, hi)
    g = Graph(
        indptr,
        indices,
        weights,
        name=f"martin-{_size_text(n)}-in{in_degree}-s{seed}",
        meta={
            "source": "generator",
            "kind": "martin",
            "method": "random predecessors per node (Martín et al., ICCS 2009)",
            "n": n,
            "in_degree": in_degree,
            "distinct": bool(distinct),
            "seed": seed,
            "weight_range": (lo, hi),
            "directed": True,
            "self_loops": False,
            "multi_edges": not distinct,
        },
    )
    log.info("generated %s: n=%d m=%d in %.2f s", g.name, n, m, time.perf_counter() - t0)
    return g


# -- kronecker ------------------------------------------------------------------------------------
def kronecker_graph(
    scale: int,
    *,
    edge_factor: int = 16,
    seed: int = 0,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    weight_range: tuple[int, int] = (1, 100),
    undirected: bool = True,
    self_loops: bool = True,
    multi_edges: bool = True,
) -> Graph:
    """A Graph500 Kronecker (R-MAT) graph with ``2**scale`` nodes.

    ``edge_factor · 2**scale`` edges are generated; for each of the ``scale`` bit levels one
    uniform draw per edge picks the quadrant (top-left with probability ``a``, top-right ``b``,
    bottom-left ``c``, bottom-right ``d = 1 − a − b − c``), setting one bit of the source and one
    of the target. The node ids are then relabelled by a random permutation (as Graph500 does).

    Parameters
    ----------
    scale : int
        log2 of the node count, ``1 <= scale <= 30``.
    edge_factor : int
        Generated edges per node: 16 in Graph500, 48 in DIMACS10's ``kron_g500-logn*``.
    seed : int
        Seed of ``numpy.random.default_rng``.
    a, b, c : float
        Initiator probabilities; ``d = 1 − a − b − c`` must be ``>= 0``.
    weight_range : (int, int)
        Inclusive range of the uniform integer weights.
    undirected : bool
        Store every generated edge in both directions, with the same weight (default; Graph500
        and DIMACS10 graphs are undirected). A self-loop is stored once.
    self_loops : bool
        Keep self-loops (default, as generated); ``False`` drops them.
    multi_edges : bool
        Keep parallel edges (default, as generated); ``False`` merges them, keeping the minimum
        weight (symmetric in the undirected case).

    Returns
    -------
    Graph
        ``indptr`` int64 (2**scale + 1,), ``indices`` int32, ``weights`` int32, targets sorted
        within each row. With the defaults ``m = 2 · edge_factor · 2**scale − (self-loops)``.

    Raises
    ------
    InvalidGraphError
        For a bad ``scale``, ``edge_factor``, probability, ``seed`` or ``weight_range``.
    """
    if not _is_int(scale) or not 1 <= scale <= 30:
        raise InvalidGraphError(f"scale must be an integer in [1, 30], got {scale!r}")
    if not _is_int(edge_factor) or edge_factor < 1:
        raise InvalidGraphError(f"edge_factor must be a positive integer, got {edge_factor!r}")
    for label, val in (("a", a), ("b", b), ("c", c)):
        if isinstance(val, bool) or not isinstance(val, int | float) or not 0.0 <= val <= 1.0:
            raise InvalidGraphError(f"initiator probability {label} must be in [0, 1], got {val!r}")
    d = 1.0 - a - b - c
    if d < -1e-12:
        raise InvalidGraphError(
            f"initiator probabilities must sum to <= 1, got a + b + c = {a + b + c!r}"
        )
    seed = check_seed(seed)
    lo, hi = _check_weight_range(weight_range)
    scale, edge_factor = int(scale), int(edge_factor)
    n = 1 << scale
    m0 = edge_factor * n
    t0 = time.perf_counter()
    rng, wrng = _rngs(seed)
    wbits = (hi - lo).bit_length() if undirected else 0
    if 2 * scale + wbits > _INT64_BITS:
        raise InvalidGraphError(
            f"scale {scale} with weight_range {(lo, hi)} is too wide for the packed 62-bit sort key "
            f"(needs 2 * scale + bits(high - low) <= 62)"
        )
    _check_room(
        n,
        m0 * (2 if undirected else 1),
        f"a Kronecker graph of scale {scale} and edge factor {edge_factor}",
    )
    cum = np.array([a, a + b, a + b + c], dtype=np.float64)
    perm = rng.permutation(n).astype(np.int64)
    # packed keys; both directions when undirected, unused slots get a sentinel that sorts last
    cap = 2 * m0 if undirected else m0
    keys = np.empty(cap, dtype=np.int64)
    used = 0
    # scratch for the level loop, sized to stay in cache
    u = np.empty(KRON_CHUNK, dtype=np.float64)
    ibit = np.empty(KRON_CHUNK, dtype=bool)
    jbit = np.empty(KRON_CHUNK, dtype=bool)
    tmp = np.empty(KRON_CHUNK, dtype=bool)
    shifted = np.empty(KRON_CHUNK, dtype=np.int64)
    for e0 in range(0, m0, KRON_CHUNK):
        k = min(KRON_CHUNK, m0 - e0)
        src = np.zeros(k, dtype=np.int64)
        dst = np.zeros(k, dtype=np.int64)
        uk, ik, jk, tk, sk = u[:k], ibit[:k], jbit[:k], tmp[:k], shifted[:k]
        for level in range(scale):
            # one uniform per edge and level picks the quadrant: the source bit is set in the
            # bottom half (u >= a + b), the target bit in the right half (b or d quadrants)
            rng.random(out=uk)
            np.greater_equal(uk, cum[1], out=ik)
            np.greater_equal(uk, cum[0], out=jk)
            np.logical_xor(jk, ik, out=jk)
            np.greater_equal(uk, cum[2], out=tk)
            np.logical_xor(jk, tk, out=jk)
            np.left_shift(ik, level, out=sk, dtype=np.int64)
            src |= sk
            np.left_shift(jk, level, out=sk, dtype=np.int64)
            dst |= sk
        src = perm[src]
        dst = perm[dst]
        if not self_loops:
            keep = src != dst
            src, dst = src[keep], dst[keep]
        if undirected:
            w = wrng.integers(0, hi - lo, size=src.size, dtype=np.int64, endpoint=True)
            loop = src == dst
            fwd = ((src << scale) | dst) << wbits | w
            rev = ((dst << scale) | src) << wbits | w
            rev[loop] = _SENTINEL  # a self-loop is stored once
            keys[used : used + fwd.size] = fwd
            used += fwd.size
            keys[used : used + rev.size] = rev
            used += rev.size
            del w, loop, fwd, rev
        else:
            fwd = (src << scale) | dst
            keys[used : used + fwd.size] = fwd
            used += fwd.size
            del fwd
        del src, dst
    keys = _trim(keys, used)
    keys.sort()
    valid = int(np.searchsorted(keys, _SENTINEL))
    keys = _trim(keys, valid)
    indptr, indices, wfield = _csr_from_sorted_keys(keys, n, scale, wbits, dedup=not multi_edges)
    del keys
    m = indices.size
    if wfield is not None:
        weights = wfield
        if lo:
            weights += np.int32(lo)
    else:
        weights = _draw_weights(wrng, m, lo, hi)
    g = Graph(
        indptr,
        indices,
        weights,
        name=f"kronecker-logn{scale}-ef{edge_factor}-s{seed}" + ("" if undirected else "-directed"),
        meta={
            "source": "generator",
            "kind": "kronecker",
            "method": "Graph500 R-MAT, bit-by-bit quadrant draws, random vertex permutation",
            "n": n,
            "scale": scale,
            "edge_factor": edge_factor,
            "a": a,
            "b": b,
            "c": c,
            "d": round(max(d, 0.0), 12),
            "seed": seed,
            "weight_range": (lo, hi),
            "directed": not undirected,
            "undirected": bool(undirected),
            "self_loops": bool(self_loops),
            "multi_edges": bool(multi_edges),
        },
    )
    log.info("generated %s: n=%d m=%d in %.2f s", g.name, n, m, time.perf_counter() - t0)
    return g


# -- dispatcher -----------------------------------------------------------------------------------
_OPTIONS: Mapping[str, frozenset[str]] = {
    "random": frozenset({"weight_range"}),
    "martin": frozenset({"in_degree", "weight_range", "distinct"}),
    "kronecker": frozenset(
        {
            "scale",
            "edge_factor",
            "a",
            "b",
            "c",
            "weight_range",
            "undirected",
            "self_loops",
            "multi_edges",
        }
    ),
    "grid": frozenset({"weight_range"}),
    "geometric": frozenset({"weight_range"}),
    "road": frozenset({"weight_range"}),
}


def generate(
    kind: str,
    *,
    size: str | int | None = None,
    degree: float | None = None,
    seed: int = 0,
    **options: Any,
) -> Graph:
    """Generate one of the paper's synthetic graphs.

    Parameters
    ----------
    kind : {"random", "martin", "kronecker", "grid", "geometric", "road"}
        Which generator (see the module docstring and :mod:`sssp.spatial`).
    size : str or int
        Node count, anything :func:`sssp.classes.parse_size` accepts: a ladder label (``"24k"``
        = 24 576, ``"49k"``, ``"98k"``, ...), ``"<k>M"`` (k · 2**20, Martín's sizes) or a positive
        integer. For ``"kronecker"`` it must be a power of two (or give ``scale=`` instead).
    degree : float, optional
        ``random``: the mean out-degree (required). ``martin``: the in-degree (default 7).
        ``kronecker``: the edge factor (default 16). ``geometric``: the mean degree (default 8).
        ``road``: the mean out-degree, 2 to 5 (default 2.6).
        ``grid``: none (a grid's side is the integer nearest to √size).
    seed : int
        Seed; the same seed gives identical arrays.
    **options
        Keyword arguments of the individual generator: ``weight_range`` (all); ``in_degree``,
        ``distinct`` (martin); ``scale``, ``edge_factor``, ``a``, ``b``, ``c``, ``undirected``,
        ``self_loops``, ``multi_edges`` (kronecker).

    Returns
    -------
    Graph

    Raises
    ------
    InvalidGraphError
        Unknown kind or option, missing or inconsistent parameters, values out of range.
    UnknownClassError
        A size that :func:`~sssp.classes.parse_size` does not accept.
    """
    if not isinstance(kind, str) or kind.strip().lower() not in KINDS:
        raise InvalidGraphError(
            f"unknown generator kind {kind!r}: expected one of {', '.join(KINDS)}"
        )
    kind = kind.strip().lower()
    unknown = sorted(set(options) - _OPTIONS[kind])
    if unknown:
        raise InvalidGraphError(
            f"unknown option(s) {', '.join(map(repr, unknown))} for kind {kind!r}: "
            f"expected {', '.join(sorted(_OPTIONS[kind]))}"
        )
    n = None if size is None else parse_size(size)
    if kind == "random":
        if n is None:
            raise InvalidGraphError("kind 'random' needs size= (e.g. '49k')")
        if degree is None:
            raise InvalidGraphError("kind 'random' needs degree= (the mean out-degree, e.g. 200)")
        return random_graph(n, degree, seed=seed, **options)
    if kind in ("grid", "geometric", "road"):
        from .spatial import ROAD_DEGREE, geometric_graph, grid_graph, road_graph

        if n is None:
            raise InvalidGraphError(f"kind {kind!r} needs size= (e.g. '98k')")
        if kind == "grid":
            if degree is not None:
                raise InvalidGraphError(
                    "kind 'grid' takes no degree= (every inner node has 4 neighbours)"
                )
            return grid_graph(max(2, round(math.sqrt(n))), seed=seed, **options)
        if kind == "road":
            return road_graph(n, ROAD_DEGREE if degree is None else degree, seed=seed, **options)
        return geometric_graph(n, 8.0 if degree is None else degree, seed=seed, **options)
    if kind == "martin":
        if n is None:
            raise InvalidGraphError("kind 'martin' needs size= (e.g. '1M')")
        if degree is not None:
            if "in_degree" in options and options["in_degree"] != degree:
                raise InvalidGraphError(
                    f"degree={degree!r} and in_degree={options['in_degree']!r} disagree"
                )
            options["in_degree"] = degree
        return martin_graph(n, seed=seed, **options)
    # kronecker
    scale = options.pop("scale", None)
    if n is not None:
        if n & (n - 1):
            raise InvalidGraphError(
                f"kronecker size must be a power of two (2**scale nodes), got {size!r} = {n}"
            )
        from_size = n.bit_length() - 1
        if scale is not None and scale != from_size:
            raise InvalidGraphError(
                f"size {size!r} = 2**{from_size} disagrees with scale={scale!r}"
            )
        scale = from_size
    if scale is None:
        raise InvalidGraphError("kind 'kronecker' needs size= (a power of two) or scale=")
    if degree is not None:
        if "edge_factor" in options and options["edge_factor"] != degree:
            raise InvalidGraphError(
                f"degree={degree!r} and edge_factor={options['edge_factor']!r} disagree"
            )
        options["edge_factor"] = degree
    return kronecker_graph(scale, seed=seed, **options)
