"""Contraction hierarchies and PHAST: a shortest-path tree in a few dozen dependent steps.

A frontier method (near-far, Crauser) needs at least as many dependent steps as the shortest
paths from the source have edges: thousands on a road network or a mesh, whatever Δ is, and
each step waits for the whole device. Delling, Goldberg, Nowatzyk and Werneck's PHAST
("PHAST: Hardware-accelerated shortest path trees", IPDPS 2011; J. Parallel Distrib. Comput.
73, 2013) moves that depth into a preprocessing done once per graph:

1. **Contraction** (:mod:`sssp.contraction`): nodes are removed least important first, each
   removal adding the shortcuts that keep the remaining graph's distances. Every distance of the
   graph is then the length of an *up-down* path: edges to nodes removed later, then edges to
   nodes removed earlier.
2. **Levels.** A node's level is one more than the highest level among the neighbours removed
   before it (0 if none). Every edge of the hierarchy joins two levels, never one level to
   itself.
3. **A solve** (PHAST): a search from the source over the upward edges only (a few hundred
   nodes on a road network), then one sweep down the levels, top first: each node takes the
   minimum over its downward in-edges of the tail's distance plus the weight. The nodes of one
   level are independent, so a sweep is as many dependent steps as there are levels (tens on
   the record's roads and meshes, against 10-20x as many near-far steps), each step a pull with
   no atomics over a contiguous slice of nodes.
4. **A core table** (:func:`core_table`, optional): the distances between every two nodes of the
   top levels, the hierarchy's *core* (its densest part: on the 3-D meshes a third of the
   levels hold a thousand nodes). Every up-down path between two core nodes stays in the core
   (a node above a core node is a core node), so these are the graph's distances, computed
   once per graph by a PHAST solve from each core node. A solve then stops its upward search
   at the core, takes the core's distances from the table (the least over the core nodes it
   reached of their distance plus the table's row) and sweeps only the levels below the core.

The distances are exact (the hierarchy's edges are paths of the graph); the predecessor tree is
computed on the graph's own edges from the distances (:func:`sssp.cpu.nearfar.tight_tree`: the
tree depends on the distances only), so it is the same tree as every other algorithm's.

Integer weights only, as :mod:`sssp.shortcuts`: a real shortcut weight is a float64 sum taken in
another order than a path's own left-to-right sum, so a distance through it could differ from
SciPy's in the last bit.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import os
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba
import numpy as np
import platformdirs

from .config import CORE_NODES_MAX
from .contraction import HOP_LIMIT, LEVEL_WEIGHT, SETTLE_LIMIT, SIM_HOPS, SIM_SETTLE, contract
from .cpu.parallel import INF, _jit, run_stoppable
from .errors import InvalidArgumentError, InvalidGraphError
from .formats.npz import save_arrays
from .graph import Graph
from .request import check_source
from .result import SSSPResult

__all__ = [
    "ARRAYS",
    "CACHE_ENV",
    "CORE_NODES_MAX",
    "CoreTable",
    "Hierarchy",
    "LABEL_ITEMS_MAX",
    "UpwardLabels",
    "UpwardScratch",
    "BackgroundBuild",
    "build_hierarchy",
    "cache_dir",
    "cache_path",
    "core_table",
    "hierarchy_for",
    "read_cached",
    "phast",
    "upward_labels",
]

CACHE_ENV = "SSSP_HIERARCHY_CACHE"
"""Environment variable: the folder of cached hierarchies (:func:`hierarchy_for`); ``off`` (or
``0``) keeps none."""
_LAYOUT = 2
"""The cached files' layout and contraction rules: a change of either bumps it (2: the level
weighs :data:`~sssp.contraction.LEVEL_WEIGHT` in a node's priority)."""

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, eq=False)
class Hierarchy:
    """A contraction hierarchy of a graph, laid out for PHAST sweeps (:func:`build_hierarchy`).

    Attributes
    ----------
    n : int
        Nodes of the graph.
    level : ndarray of int32, shape (n,)
        Each node's level (module docstring, 2).
    order : ndarray of int32, shape (n,)
        The sweep's order of the nodes: by level, the top level first (ties by removal order,
        last removed first). ``order[p]`` is the node at *position* ``p``.
    position : ndarray of int32, shape (n,)
        The inverse of ``order``: the position of each node. The edges below name their ends
        by position, so a sweep (and an upward search, which stays in the top levels) reads
        the front of the arrays, not the whole graph.
    level_ptr : ndarray of int64, shape (levels + 1,)
        Positions ``level_ptr[i]:level_ptr[i + 1]`` are the nodes of the ``i``-th level swept
        (level ``levels - 1 - i``).
    down_ptr, down_src, down_w : ndarray
        The downward edges, pulled by their head: position ``p`` has an edge from position
        ``down_src[j]`` (a node of a higher level) of weight ``down_w[j]`` for ``j`` in
        ``down_ptr[p]:down_ptr[p + 1]``. int64, int32, int64.
    up_ptr, up_dst, up_w : ndarray
        The upward edges by tail, positions too: ``p -> up_dst[j]`` of weight ``up_w[j]`` for
        ``j`` in ``up_ptr[p]:up_ptr[p + 1]``. int64, int32, int64.
    seconds : float
        The build's wall time.
    """

    n: int
    level: np.ndarray
    order: np.ndarray
    position: np.ndarray
    level_ptr: np.ndarray
    down_ptr: np.ndarray
    down_src: np.ndarray
    down_w: np.ndarray
    up_ptr: np.ndarray
    up_dst: np.ndarray
    up_w: np.ndarray
    seconds: float

    @functools.cached_property
    def sweep_level(self) -> np.ndarray:
        """int32 by position: the sweep's index of each position's level (0 the top one; a
        higher level has a lower index)."""
        return np.repeat(np.arange(self.levels, dtype=np.int32), np.diff(self.level_ptr))

    @functools.cached_property
    def search_arrays(self) -> tuple[np.ndarray, ...]:
        """What the compiled search and sweep read, in their order: the upward edges
        (``up_ptr``, ``up_dst``, ``up_w``), the downward ones (``down_ptr``, ``down_src``,
        ``down_w``) and :attr:`sweep_level`."""
        return (
            self.up_ptr,
            self.up_dst,
            self.up_w,
            self.down_ptr,
            self.down_src,
            self.down_w,
            self.sweep_level,
        )

    def scratch(self, core: CoreTable | None = None) -> UpwardScratch:
        """Fresh work arrays of an upward search (:meth:`upward`), which stops at ``core``'s
        levels where one is given."""
        return UpwardScratch(self, core)

    def upward(
        self, source: int, dist: np.ndarray, scratch: UpwardScratch
    ) -> tuple[np.ndarray, np.ndarray]:
        """The seeds of a sweep from node ``source``: their positions and distances (views into
        ``scratch``, from :meth:`scratch`). ``dist``: int64 work array of n entries by
        position, all :data:`~sssp.result.UNREACHABLE`, left so.

        Without a core table, the nodes the upward search (:func:`_upward`) settles without
        stalling them. With one (``scratch``'s), the core's positions ``0 .. K-1`` first, every
        one with its exact distance (:data:`~sssp.result.UNREACHABLE` where the source does
        not reach it), then the seeds below the core: a sweep of the levels below the core
        from these seeds gives every distance."""
        count = _upward(
            self.search_arrays,
            scratch.core_levels,
            scratch.table,
            int(self.position[source]),
            dist,
            scratch.work,
        )
        return scratch.out_v[:count], scratch.out_d[:count]

    @property
    def levels(self) -> int:
        """Levels: the dependent steps of a sweep."""
        return int(self.level_ptr.size - 1)

    def top_levels(self, nodes: int) -> int:
        """How many of the top levels hold at most ``nodes`` nodes together: the levels a core
        table of ``nodes`` nodes covers (:func:`core_table`)."""
        return int(np.searchsorted(self.level_ptr, nodes, side="right")) - 1

    def levels_below(self, core_nodes: int) -> int:
        """The levels a sweep under a core table of ``core_nodes`` nodes goes through: its
        dependent steps (all :attr:`levels` without a core)."""
        return self.levels - self.top_levels(core_nodes)

    @property
    def edges(self) -> int:
        """Edges of the hierarchy, up and down (the graph's own, without parallel copies and
        self-loops, and the shortcuts)."""
        return int(self.down_src.size + self.up_dst.size)


ARRAYS = tuple(f.name for f in dataclasses.fields(Hierarchy) if f.name not in ("n", "seconds"))
"""The array fields of :class:`Hierarchy` (what a cached file holds, with ``seconds``)."""


@dataclasses.dataclass(frozen=True, eq=False)
class CoreTable:
    """The distances between the nodes of a hierarchy's top levels (:func:`core_table`).

    Attributes
    ----------
    hierarchy : Hierarchy
        The hierarchy it belongs to.
    levels : int
        The core's levels: the hierarchy's first ``levels`` (0: no core).
    nodes : int
        Its nodes K: the positions ``0 .. K-1`` (``level_ptr[levels]``).
    dist : ndarray of int32 or int64, shape (K, K)
        ``dist[a, b]``: the graph's distance from position ``a`` to position ``b``, -1 where
        there is no path; int32 where every distance fits (half the bytes a solve reads).
    seconds : float
        The build's wall time.
    """

    hierarchy: Hierarchy = dataclasses.field(repr=False)
    levels: int
    nodes: int
    dist: np.ndarray
    seconds: float


class UpwardScratch:
    """The work arrays of :meth:`Hierarchy.upward` for one hierarchy and core table (not
    shared between threads): each level's list of reached nodes (heads, all -1 between
    searches, and links), the seeds' positions and distances (the core's positions first,
    constant; the nodes stalled at the back), and the core nodes the search reached."""

    def __init__(self, hierarchy: Hierarchy, core: CoreTable | None) -> None:
        if core is not None and core.hierarchy is not hierarchy:
            raise InvalidArgumentError(
                "the core table is another hierarchy's: build it from this one"
            )
        n = hierarchy.n
        self.core_levels = 0 if core is None else core.levels
        k = 0 if core is None else core.nodes
        self.table = np.empty((0, 0), np.int64) if core is None else core.dist
        self.head = np.full(max(hierarchy.levels, 1), -1, dtype=np.int32)
        self.next = np.empty(n, dtype=np.int32)
        self.out_v = np.empty(n, dtype=np.int32)
        self.out_v[:k] = np.arange(k, dtype=np.int32)
        self.out_d = np.empty(n, dtype=np.int64)
        self.entry_v = np.empty(k, dtype=np.int32)
        self.entry_d = np.empty(k, dtype=np.int64)
        self.work = (self.head, self.next, self.out_v, self.out_d, self.entry_v, self.entry_d)
        """The arrays above in the order of the compiled search (:func:`_upward`)."""


@dataclasses.dataclass(frozen=True, eq=False)
class UpwardLabels:
    """Every position's upward search, kept (:func:`upward_labels`): a solve reads its
    source's label instead of searching, so the search leaves the solve's critical path. A
    label is what :meth:`Hierarchy.upward` finds before it takes the core's distances: the core
    nodes the search reached (its *entries*, by distance, without those an earlier entry reaches
    no later through the table: their rows can lower nothing), then the seeds below the core.
    The core's distances are then the least over the entries of the entry's distance plus its
    table row; a source in the core has itself at 0 as its one entry. These are the forward
    labels of hub labelling (Abraham, Delling, Goldberg and Werneck, SEA 2011) cut at the core.

    Attributes
    ----------
    core : CoreTable
        The core table the labels stop at (its ``nodes`` 0: none, every label climbs to the
        top, and has no entries).
    ptr : ndarray of int64, shape (n + 1,)
        Position ``p``'s label is items ``ptr[p]:ptr[p + 1]``.
    pos, dist : ndarray of int32, int64
        Each item's position and its distance from the label's position: the entries
        (positions below K) first, then the seeds.
    entries : ndarray of int32, shape (n,)
        How many of a label's first items are entries.
    seconds : float
        The build's wall time.
    """

    core: CoreTable = dataclasses.field(repr=False)
    ptr: np.ndarray
    pos: np.ndarray
    dist: np.ndarray
    entries: np.ndarray
    seconds: float

    @property
    def items(self) -> int:
        """Items of every label together."""
        return int(self.pos.size)


# -- compiled parts -------------------------------------------------------------------------------
@_jit
def _upward(arrays, core_levels, table, source, dist, work):  # pragma: no cover
    """The search from position ``source`` over the upward edges (:meth:`Hierarchy.upward`):
    :func:`_climb`, then, with a core table (K = ``table.shape[0]`` positions), the core's
    distances through it (:func:`_through_core`) into ``out_d[:K]``; ``out_v[:K]`` holds the
    core's positions. A source in the core takes its table row. Returns K plus the seeds'
    count. ``arrays``: :attr:`Hierarchy.search_arrays`; ``work``: :attr:`UpwardScratch.work`."""
    out_d, entry_v, entry_d = work[3], work[4], work[5]
    k = table.shape[0]
    if source < k:
        for c in range(k):
            r = table[source, c]
            out_d[c] = INF if r < 0 else r
        return k
    seeds, entries = _climb(arrays, core_levels, k, source, dist, work)
    if k:
        _through_core(table, entry_v[:entries], entry_d[:entries], out_d)
    return seeds


@_jit
def _climb(arrays, core_levels, k, source, dist, work):  # pragma: no cover
    """The upward search from position ``source`` (below the core), a level at a time from the
    source's up, on ``dist`` (all INF on entry, and again on return). Every upward edge climbs
    at least one level, so once the levels below a node's are done its distance is final: no
    heap, each node reached is handled once (a list of reached nodes per level,
    ``head``/``nxt``). With stall-on-demand (Geisberger, Sanders, Schultes and Delling, WEA
    2008): a node at distance d is *stalled* when one of its downward in-edges, from a higher
    node x, gives x's distance so far (a path's length, so a bound) plus the weight below d.
    Its distance is then not the graph's, and no shortest up-down path climbs through it (each
    node of the climbing part of a shortest path has its graph distance), so it neither relaxes
    its upward edges nor becomes a seed (the sweep gives it x's distance plus the weight).

    The seeds (the nodes handled and not stalled) and their distances go into ``out_v``/
    ``out_d`` from index ``k`` on, the stalled nodes into the back of ``out_v``. The search
    handles the levels below the first ``core_levels`` only: the core nodes it reaches go to
    ``entry_v``/``entry_d``. Returns (``k`` plus the seeds' count, the entries' count)."""
    up_ptr, up_dst, up_w, down_ptr, down_src, down_w, sweep_level = arrays
    head, nxt, out_v, out_d, entry_v, entry_d = work
    seeds = k
    stalled = 0
    dist[source] = 0
    nxt[source] = -1
    head[sweep_level[source]] = source
    for lev in range(sweep_level[source], core_levels - 1, -1):
        u = head[lev]
        head[lev] = -1
        while u >= 0:
            d = dist[u]
            stall = False
            for j in range(down_ptr[u], down_ptr[u + 1]):
                dx = dist[down_src[j]]
                if dx != INF and dx + down_w[j] < d:
                    stall = True
                    break
            if stall:
                stalled += 1
                out_v[out_v.size - stalled] = u
            else:
                out_v[seeds] = u
                out_d[seeds] = d
                seeds += 1
                for j in range(up_ptr[u], up_ptr[u + 1]):
                    x = up_dst[j]
                    nd = d + up_w[j]
                    if dist[x] == INF:  # first reached: onto its level's list
                        dist[x] = nd
                        nxt[x] = head[sweep_level[x]]
                        head[sweep_level[x]] = x
                    elif nd < dist[x]:
                        dist[x] = nd
            u = nxt[u]
    entries = 0
    for lev in range(core_levels - 1, -1, -1):
        u = head[lev]
        head[lev] = -1
        while u >= 0:
            entry_v[entries] = u
            entry_d[entries] = dist[u]
            dist[u] = INF
            entries += 1
            u = nxt[u]
    for i in range(k, seeds):
        dist[out_v[i]] = INF
    for i in range(out_v.size - stalled, out_v.size):
        dist[out_v[i]] = INF
    return seeds, entries


@_jit
def _through_core(table, entry_v, entry_d, out):  # pragma: no cover
    """The core's distances into ``out[:K]``: over the entries (core nodes the upward search
    reached, ``entry_v``, at ``entry_d``), the least of the entry's distance plus its table
    row. Taken by distance, so an entry that an earlier one reaches no later (``out`` at it
    already at most its distance) is skipped: through the triangle inequality, its row can
    lower nothing."""
    k = table.shape[0]
    for c in range(k):
        out[c] = INF
    for i in np.argsort(entry_d):
        e, de = entry_v[i], entry_d[i]
        if out[e] <= de:
            continue
        row = table[e]
        for c in range(k):  # no branch on the minimum, so the loop vectorizes
            r = row[c]
            v = INF if r < 0 else de + r
            out[c] = min(out[c], v)


@_jit
def _pull(down_ptr, down_src, down_w, pdist, p):  # pragma: no cover
    """The least of ``pdist[p]`` and, over position p's downward in-edges, the tail's distance
    plus the weight: one node's step of a sweep."""
    best = pdist[p]
    for j in range(down_ptr[p], down_ptr[p + 1]):
        du = pdist[down_src[j]]
        if du != INF and du + down_w[j] < best:
            best = du + down_w[j]
    return best


@_jit
def _sweep(arrays, core_levels, table, start, pdist, work, stop):  # pragma: no cover
    """PHAST from position ``start`` into ``pdist`` (by position, all INF on entry; its size is
    the positions swept, so a prefix of the hierarchy closed under upward edges sweeps alone):
    the upward search (:func:`_upward`), then the sweep below the core. Returns the seeds'
    count (the core's positions included)."""
    seeds = _upward(arrays, core_levels, table, start, pdist, work)
    out_v, out_d = work[2], work[3]
    down_ptr, down_src, down_w = arrays[3], arrays[4], arrays[5]
    for i in range(seeds):
        pdist[out_v[i]] = out_d[i]
    for p in range(table.shape[0], pdist.size):
        if stop[0] and (p & 4095) == 0:
            return seeds
        pdist[p] = _pull(down_ptr, down_src, down_w, pdist, p)
    return seeds


@_jit
def _core_rows(arrays, table, first, last, stop):  # pragma: no cover
    """:func:`core_table`'s distances: row ``a`` of ``table`` (K x K), for ``first <= a <
    last``, a PHAST solve from position ``a`` over positions ``0 .. K-1`` alone (the core is
    closed under upward edges, and a core node's downward in-edges come from the core)."""
    k = table.shape[0]
    sweep_level = arrays[6]
    work = (
        np.full(sweep_level[k - 1] + 1, -1, np.int32),
        np.empty(k, np.int32),
        np.empty(k, np.int32),
        np.empty(k, np.int64),
        np.empty(0, np.int32),
        np.empty(0, np.int64),
    )
    none = np.empty((0, 0), np.int64)
    pdist = np.full(k, INF, np.int64)
    for a in range(first, last):
        if stop[0]:
            return
        _sweep(arrays, 0, none, a, pdist, work, stop)
        table[a] = pdist
        pdist[:] = INF


@_jit
def _label_rows(  # pragma: no cover
    arrays, core_levels, table, sources, dist, work, counts, entries, cap, limit, stop
):
    """:func:`upward_labels`'s labels of positions ``sources`` (a thread's; its own ``dist``, all
    INF, and ``work``): ``counts[p + 1]`` the items of position p's label and ``entries[p]`` its
    entries; returns (positions, distances) of their items one label after another, in arrays
    that start at ``cap`` items and grow. Stops early, the labels unfinished, past ``limit``
    items or when ``stop`` is set."""
    k = table.shape[0]
    out_v, out_d, entry_v, entry_d = work[2], work[3], work[4], work[5]
    kept = np.empty(k, np.int64)
    pos = np.empty(max(cap, 16), np.int32)
    val = np.empty(pos.size, np.int64)
    used = 0
    for i in range(sources.size):
        if stop[0] or used > limit:
            break
        p = sources[i]
        ne = 0
        seeds = reached = k
        if p < k:  # a core node: itself, at 0
            ne = 1
        else:
            seeds, reached = _climb(arrays, core_levels, k, p, dist, work)
            for j in np.argsort(entry_d[:reached]):
                e, de = entry_v[j], entry_d[j]
                dominated = False
                for t in range(ne):
                    f = kept[t]
                    r = table[entry_v[f], e]
                    if r >= 0 and entry_d[f] + r <= de:
                        dominated = True
                        break
                if not dominated:
                    kept[ne] = j
                    ne += 1
        count = ne + seeds - k
        if used + count > pos.size:  # grow: double, or to what this label needs
            size = max(2 * pos.size, used + count)
            grown_v, grown_d = np.empty(size, np.int32), np.empty(size, np.int64)
            grown_v[:used], grown_d[:used] = pos[:used], val[:used]
            pos, val = grown_v, grown_d
        if p < k:
            pos[used], val[used] = p, 0
        else:
            for t in range(ne):
                pos[used + t] = entry_v[kept[t]]
                val[used + t] = entry_d[kept[t]]
            at = used + ne - k
            for j in range(k, seeds):
                pos[at + j] = out_v[j]
                val[at + j] = out_d[j]
        counts[p + 1] = count
        entries[p] = ne
        used += count
    return pos[:used], val[:used]


# -- the public functions -------------------------------------------------------------------------
def build_hierarchy(
    graph: Graph,
    *,
    hop_limit: int = HOP_LIMIT,
    settle_limit: int = SETTLE_LIMIT,
    level_weight: int = LEVEL_WEIGHT,
) -> Hierarchy:
    """The contraction hierarchy of ``graph`` (integer weights), laid out for :func:`phast`.

    On all of numba's threads, the same hierarchy on any number of them. On this project's
    2-core development host: about 1 s for a 16k-node 2-D mesh, 7 s for the 436k-node COL road
    network, 22 s for a 196k-node geometric graph of degree 8, 45 s for a 1M-node road-like
    graph (``benchmarks/results/cpu/hierarchy_weight.csv``), but minutes for a dense
    stiffness matrix, whose last rounds each remove a few nodes of a dense remainder: 109 s
    for bcsstk29 (14 000 nodes of degree 43), 294 s for vibrobox
    (``hierarchy_levels_lowdiam.csv``). ``level_weight``: a node's level
    in its priority, times this (:data:`~sssp.contraction.LEVEL_WEIGHT`; the cache,
    :func:`hierarchy_for`, holds the default's). Ctrl-C stops it between two rounds.

    Raises
    ------
    InvalidGraphError
        Real weights (see the module docstring).
    InvalidArgumentError
        ``hop_limit`` or ``settle_limit`` below 1, ``level_weight`` below 0.
    """
    if graph.is_float:
        raise InvalidGraphError(
            f"{graph.name or 'the graph'}: a contraction hierarchy takes integer weights only "
            "(a shortcut's real sum could differ from SciPy's path sum in the last bit)"
        )
    for name, value, low in (
        ("hop_limit", hop_limit, 1),
        ("settle_limit", settle_limit, 1),
        ("level_weight", level_weight, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise InvalidArgumentError(f"{name} must be an integer >= {low}, got {value!r}")
    t0 = time.perf_counter()
    n = graph.n
    tails = np.repeat(np.arange(n, dtype=np.int32), np.diff(graph.indptr))
    heads = graph.indices.astype(np.int32, copy=False)
    w = graph.weights.astype(np.int64)
    keep = tails != heads  # a self-loop shortens nothing
    tails, heads, w = tails[keep], heads[keep], w[keep]
    by = np.lexsort((w, heads, tails))  # the lightest of parallel edges first
    tails, heads, w = tails[by], heads[by], w[by]
    first = np.ones(tails.size, dtype=bool)
    first[1:] = (tails[1:] != tails[:-1]) | (heads[1:] != heads[:-1])
    tails, heads, w = tails[first], heads[first], w[first]
    level, rank, dt, dh, dc, ut, uh, uc = run_stoppable(
        contract,
        n,
        tails,
        heads,
        w,
        int(hop_limit),
        int(settle_limit),
        min(int(hop_limit), SIM_HOPS),
        min(int(settle_limit), SIM_SETTLE),
        int(level_weight),
        max(1, min(numba.get_num_threads(), n)),
        size=n + graph.m,
    )
    # The sweep's order: top level first, the last removed first within a level.
    order = np.lexsort((-rank.astype(np.int64), -level.astype(np.int64))).astype(np.int32)
    position = np.empty(n, dtype=np.int32)
    position[order] = np.arange(n, dtype=np.int32)
    counts = np.bincount(level, minlength=int(level.max()) + 1 if n else 0)[::-1]
    level_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    dh, dt, ut, uh = position[dh], position[dt], position[ut], position[uh]
    by_head = np.argsort(dh, kind="stable")
    down_ptr = np.concatenate(([0], np.cumsum(np.bincount(dh, minlength=n))))
    up_by = np.argsort(ut, kind="stable")
    up_ptr = np.concatenate(([0], np.cumsum(np.bincount(ut, minlength=n))))
    seconds = time.perf_counter() - t0
    hierarchy = Hierarchy(
        n=n,
        level=level,
        order=order,
        position=position,
        level_ptr=level_ptr,
        down_ptr=down_ptr.astype(np.int64),
        down_src=dt[by_head],
        down_w=dc[by_head],
        up_ptr=up_ptr.astype(np.int64),
        up_dst=uh[up_by],
        up_w=uc[up_by],
        seconds=seconds,
    )
    log.debug(
        "hierarchy of %s: %d levels, %d edges (%.2f x m), %.3g s",
        graph.name,
        hierarchy.levels,
        hierarchy.edges,
        hierarchy.edges / max(graph.m, 1),
        seconds,
    )
    return hierarchy


def cache_dir() -> Path | None:
    """Where :func:`hierarchy_for` keeps hierarchies: ``$SSSP_HIERARCHY_CACHE``, else
    ``hierarchies`` in the user cache folder; None where the variable says ``off`` or ``0``."""
    env = os.environ.get(CACHE_ENV, "").strip()
    if env.lower() in ("off", "0", "none", "false"):
        return None
    return Path(env) if env else Path(platformdirs.user_cache_dir("sssp-tune")) / "hierarchies"


def _cache_key(graph: Graph, hop_limit: int, settle_limit: int) -> str:
    """A digest of everything the hierarchy depends on: the graph's arrays and the build's
    rules (``_LAYOUT``, the search limits)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{_LAYOUT} {graph.n} {hop_limit} {settle_limit} ".encode())
    for array in (graph.indptr, graph.indices, graph.weights):
        digest.update(str(array.dtype).encode())
        digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()


def _read_cached(path: Path, n: int) -> Hierarchy | None:
    """The hierarchy in ``path``, or None where it is missing or does not hold a well-formed
    hierarchy of ``n`` nodes (a truncated write, another version's file)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in ARRAYS}
            seconds = float(data["seconds"])
    except (FileNotFoundError, NotADirectoryError):  # not there (or no folder to hold it)
        return None
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as err:
        log.warning("ignoring the cached hierarchy %s: %s", path, err)
        return None
    h = Hierarchy(n=n, seconds=seconds, **arrays)
    ok = (
        h.order.size == h.position.size == h.level.size == n
        and h.level_ptr.size >= 1
        and h.level_ptr[-1] == n
        and h.down_ptr.size == h.up_ptr.size == n + 1
        and h.down_ptr[-1] == h.down_src.size == h.down_w.size
        and h.up_ptr[-1] == h.up_dst.size == h.up_w.size
    )
    if not ok:
        log.warning("ignoring the cached hierarchy %s: not a hierarchy of %d nodes", path, n)
        return None
    return h


def cache_path(graph: Graph) -> Path | None:
    """The file :func:`hierarchy_for` keeps ``graph``'s hierarchy in (with the default search
    limits), or None where nothing is kept (no cache folder, real weights). Hashes the graph's
    arrays: about 50 ms for a graph of a million nodes."""
    folder = cache_dir()
    if folder is None or graph.is_float:
        return None
    return folder / f"{_cache_key(graph, HOP_LIMIT, SETTLE_LIMIT)}.npz"


def read_cached(graph: Graph, path: Path | None) -> Hierarchy | None:
    """The hierarchy of ``graph`` in ``path`` (:func:`cache_path`), or None where it is not
    there (or not well formed)."""
    return None if path is None else _read_cached(path, graph.n)


class BackgroundBuild:
    """``graph``'s hierarchy built into the cache by a separate, low-priority process.

    The process (``python -c ...``, :func:`_build_job`) reads the graph's arrays from a file written next
    to ``path``, builds, writes ``path`` atomically and removes its input; it outlives the
    caller, so a build started by a short script still fills the cache for the next one. A
    second build of the same graph is not started while one is under way (a marker file, stale
    after :attr:`STALE_SECONDS`). :meth:`result` is the hierarchy once the file is there.
    """

    STALE_SECONDS = 3600.0

    def __init__(self, graph: Graph, path: Path) -> None:
        import subprocess
        import sys

        self.graph, self.path = graph, path
        self.started = False
        marker = path.with_suffix(".building")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                if time.time() - marker.stat().st_mtime < self.STALE_SECONDS:
                    return  # another process builds it
                marker.unlink(missing_ok=True)
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
            source = path.with_suffix(".graph.npz")
            with open(source, "wb") as fh:
                save_arrays(
                    fh, {"indptr": graph.indptr, "indices": graph.indices, "weights": graph.weights}
                )
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            subprocess.Popen(
                [sys.executable, "-c", _JOB, str(source), str(path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
            )
            self.started = True
        except OSError as err:
            log.warning("could not start a background build of the hierarchy in %s: %s", path, err)

    def done(self) -> bool:
        """Whether the hierarchy is in the cache (cheap: one stat)."""
        return self.path.exists()

    def result(self) -> Hierarchy | None:
        """The built hierarchy, or None while it is not there (or not readable)."""
        return read_cached(self.graph, self.path) if self.done() else None


_JOB = "import sys; from sssp.hierarchy import _build_job; sys.exit(_build_job(*sys.argv[1:3]))"


def _build_job(source: str, target: str) -> int:
    """The background build's process (:class:`BackgroundBuild`): at low priority, the
    hierarchy of the graph in ``source`` written to ``target`` (where :func:`hierarchy_for`
    would keep it), then its input and marker removed."""
    src, path = Path(source), Path(target)
    try:
        os.nice(10)
        with np.load(src, allow_pickle=False) as data:
            graph = Graph(data["indptr"], data["indices"], data["weights"])
        if cache_path(graph) != path:  # another cache folder or rules: write nothing
            return 1
        hierarchy_for(graph)
        return 0
    finally:
        src.unlink(missing_ok=True)
        path.with_suffix(".building").unlink(missing_ok=True)


def hierarchy_for(
    graph: Graph,
    *,
    cache: bool = True,
    hop_limit: int = HOP_LIMIT,
    settle_limit: int = SETTLE_LIMIT,
) -> tuple[Hierarchy, bool]:
    """The hierarchy of ``graph``, built once per graph and machine: read from :func:`cache_dir`
    where a build of the same arrays and rules left it, else built (:func:`build_hierarchy`)
    and written there (atomically; a folder that cannot be written only logs a warning).
    Returns ``(hierarchy, read_from_cache)``; ``cache=False`` always builds and writes nothing.
    The file's key is a digest of the graph's arrays, so an edited graph never reads another's.
    """
    folder = cache_dir() if cache else None
    if folder is None or graph.is_float:  # a real-weighted graph is refused by the build
        return build_hierarchy(graph, hop_limit=hop_limit, settle_limit=settle_limit), False
    path = folder / f"{_cache_key(graph, hop_limit, settle_limit)}.npz"
    found = _read_cached(path, graph.n)
    if found is not None:
        return found, True
    h = build_hierarchy(graph, hop_limit=hop_limit, settle_limit=settle_limit)
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".partial-", suffix=".npz")
        with os.fdopen(fd, "wb") as fh:
            save_arrays(
                fh,
                {
                    "seconds": np.array(h.seconds, dtype=np.float64),
                    **{k: getattr(h, k) for k in ARRAYS},
                },
            )
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        log.warning("could not keep the hierarchy in %s: %s", folder, err)
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return h, False


def core_table(hierarchy: Hierarchy, nodes: int, *, threads: int | None = None) -> CoreTable:
    """The distances between the nodes of ``hierarchy``'s top levels, as many levels as hold at
    most ``nodes`` nodes together (module docstring, 4): K PHAST solves over the core, K x K
    int32 where the distances fit, else int64 (4 or 8 MiB for K = 1024, 64 or 128 at 4 096, 256
    or 512 at 8 192; 0.1 s on one core of this project's 2-core host for cs4's core of 1 009
    nodes, 0.8 s for fe_body's of 3 924). The rows are split in contiguous runs over
    ``threads`` threads (default: the available cores). A solve reads a table row per core node
    its search reached that no earlier one reaches sooner (20 of cs4's 121 at the median), so
    the narrower rows pay. ``nodes`` 0 gives the empty table (no core). Ctrl-C stops it.

    Raises
    ------
    InvalidArgumentError
        ``nodes`` not an integer from 0 to :data:`CORE_NODES_MAX`.
    """
    if (
        isinstance(nodes, bool)
        or not isinstance(nodes, int | np.integer)
        or not 0 <= nodes <= CORE_NODES_MAX
    ):
        raise InvalidArgumentError(
            f"core nodes must be an integer from 0 to {CORE_NODES_MAX}, got {nodes!r}"
        )
    t0 = time.perf_counter()
    h = hierarchy
    levels = h.top_levels(nodes)
    k = int(h.level_ptr[levels])
    table = np.empty((k, k), dtype=np.int64)
    if k:
        from .cpu.many import available_cores

        # Runs of at least 64 rows: a thread's start costs more than so few PHAST solves.
        runs = max(1, min(threads or available_cores(), 64, k // 64))
        bounds = np.linspace(0, k, runs + 1).astype(np.int64)

        def rows(stop: np.ndarray) -> None:
            def run(i: int) -> None:
                _core_rows(h.search_arrays, table, bounds[i], bounds[i + 1], stop)

            with ThreadPoolExecutor(runs, thread_name_prefix="sssp-core") as pool:
                list(pool.map(run, range(runs)))

        run_stoppable(rows)
    table[table == INF] = -1
    if k and table.max() < np.iinfo(np.int32).max:
        table = table.astype(np.int32)
    return CoreTable(h, levels=levels, nodes=k, dist=table, seconds=time.perf_counter() - t0)


LABEL_ITEMS_MAX = 1 << 24
"""The most items :func:`upward_labels` keeps for a hierarchy (items of 8 or 12 bytes on the
device: 128 or 192 MiB). With the record's weights, under a core of 1 024 nodes, fe_body's
(45 000 nodes) hold 0.9 million, COL's (436 000) 12.6 million, a road-like graph's of a million
nodes more than this (``benchmarks/results/cpu/phast_core_labels.csv``)."""


def upward_labels(
    hierarchy: Hierarchy,
    core: CoreTable,
    *,
    max_items: int | None = None,
    threads: int | None = None,
) -> UpwardLabels | None:
    """Every position's upward search under ``core`` (:class:`UpwardLabels`), or None where
    they would hold more than ``max_items`` items (default :data:`LABEL_ITEMS_MAX`; judged
    first from 64 positions spread over the hierarchy, then by the build, which stops once a
    thread's labels pass it). One pass over the positions on ``threads`` threads (default: the
    available cores), each a contiguous run of positions; Ctrl-C stops it.

    Raises
    ------
    InvalidArgumentError
        ``core`` is another hierarchy's.
    """
    from .cpu.many import available_cores

    if core.hierarchy is not hierarchy:
        raise InvalidArgumentError("the core table is another hierarchy's: build it from this one")
    t0 = time.perf_counter()
    n = hierarchy.n
    max_items = LABEL_ITEMS_MAX if max_items is None else max_items
    threads = max(1, min(threads or available_cores(), 64))
    counts = np.zeros(n + 1, dtype=np.int64)
    entries = np.zeros(n, dtype=np.int32)
    sample = np.unique(np.linspace(0, n - 1, min(n, 64)).astype(np.int64))
    _label_pass(hierarchy, core, [sample], counts, entries, 0, max_items)
    mean = float(counts[sample + 1].mean()) if n else 0.0
    if mean * n > max_items:
        return None
    chunks = [c for c in np.array_split(np.arange(n, dtype=np.int64), threads) if c.size]
    cap = int(1.25 * mean * max((c.size for c in chunks), default=0))
    parts = _label_pass(hierarchy, core, chunks, counts, entries, cap, max_items)
    ptr = np.cumsum(counts)
    if ptr[-1] > max_items or sum(v.size for v, _ in parts) != ptr[-1]:  # stopped past it
        return None
    pos = np.concatenate([v for v, _ in parts]) if parts else np.empty(0, np.int32)
    val = np.concatenate([d for _, d in parts]) if parts else np.empty(0, np.int64)
    return UpwardLabels(core, ptr, pos, val, entries, seconds=time.perf_counter() - t0)


def _label_pass(
    h: Hierarchy,
    core: CoreTable,
    chunks: list[np.ndarray],
    counts: np.ndarray,
    entries: np.ndarray,
    cap: int,
    limit: int,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_label_rows` over ``chunks`` of positions, a thread each (the compiled code holds
    no GIL), stoppable by Ctrl-C (:func:`~sssp.cpu.parallel.run_stoppable`: every thread reads
    the flag); each chunk's items, in the chunks' order."""
    if not chunks:
        return []
    table = core.dist if core.nodes else np.empty((0, 0), np.int64)

    def rows(stop: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        def run(sources: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            scratch = h.scratch(core)
            dist = np.full(h.n, INF, dtype=np.int64)
            return _label_rows(
                h.search_arrays, core.levels, table, sources, dist, scratch.work,
                counts, entries, cap, limit, stop,
            )  # fmt: skip

        with ThreadPoolExecutor(len(chunks), thread_name_prefix="sssp-labels") as pool:
            return list(pool.map(run, chunks))

    result: list[tuple[np.ndarray, np.ndarray]] = run_stoppable(rows)
    return result


def phast(
    graph: Graph, hierarchy: Hierarchy, source: int, *, core: CoreTable | None = None
) -> SSSPResult:
    """Shortest paths from ``source`` by PHAST over ``hierarchy`` (:func:`build_hierarchy` of
    ``graph``), sequential, with the predecessor tree of :mod:`sssp.cpu.nearfar`. ``core``: a
    :func:`core_table` of the hierarchy, whose levels the upward search and the sweep then skip.

    Returns
    -------
    SSSPResult
        ``dist`` int64 with :data:`~sssp.result.UNREACHABLE`, ``pred`` int32,
        ``algorithm="phast"``, ``iterations`` = the levels swept (below the core), ``stats``:
        ``"levels"``, ``"core_levels"``, ``"core_nodes"``, ``"upward_settled"`` (the seeds
        below the core: nodes the upward search reached and did not stall),
        ``"hierarchy_edges"``, ``"hierarchy_seconds"``, ``"reached"``.
    """
    from .cpu.nearfar import tight_tree

    if hierarchy.n != graph.n:
        raise InvalidArgumentError(
            f"the hierarchy has {hierarchy.n} nodes, the graph {graph.n}: build it from this graph"
        )
    s = check_source(graph, source)
    h = hierarchy
    pdist = np.full(graph.n, INF, dtype=np.int64)
    sc = h.scratch(core)
    t0 = time.perf_counter()
    seeds = run_stoppable(
        _sweep,
        h.search_arrays,
        sc.core_levels,
        sc.table,
        int(h.position[s]),
        pdist,
        sc.work,
        size=graph.n + graph.m,
    )
    k = sc.table.shape[0]
    dist = np.empty_like(pdist)
    dist[h.order] = pdist
    pred = tight_tree(graph, dist, s)
    total = time.perf_counter() - t0
    return SSSPResult(
        dist=dist,
        pred=pred,
        source=s,
        algorithm="phast",
        variant="successors",
        backend="cpu",
        iterations=h.levels - sc.core_levels,
        timings={"total": total},
        stats={
            "levels": h.levels,
            "core_levels": sc.core_levels,
            "core_nodes": k,
            "upward_settled": int(seeds) - k,
            "hierarchy_edges": h.edges,
            "hierarchy_seconds": h.seconds,
            "reached": int(np.count_nonzero(dist != INF)),
        },
    )
