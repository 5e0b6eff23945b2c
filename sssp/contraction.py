"""The contraction that builds a hierarchy (:func:`sssp.hierarchy.build_hierarchy`), compiled.

Geisberger, Sanders, Schultes and Delling's contraction (WEA 2008): nodes are removed one at a
time, least important first, and removing ``v`` adds an edge ``u -> x`` of weight ``w(u, v) +
w(v, x)`` for each pair of its remaining neighbours unless a *witness* path ``u -> x`` avoiding
``v`` is no longer. The witness searches are limited (:data:`HOP_LIMIT` hops,
:data:`SETTLE_LIMIT` settled nodes): a search that stops early only adds a shortcut that was not
needed, never a wrong distance. A node's priority is the edge difference plus its removed
neighbours plus :data:`LEVEL_WEIGHT` times its level (so the hierarchy stays shallow). The removal runs in rounds on all
cores, as Vetter's parallel contraction does ("Parallel time-dependent contraction
hierarchies", 2009): each round removes every remaining node whose priority comes before all its
remaining neighbours', their witness searches in parallel and avoiding each other, so the result
is the same on any number of threads.

The remaining graph lives in two pools (out- and in-lists per node, with room to grow); edges to
removed nodes are skipped where they are read and left behind when a list moves.
"""

from __future__ import annotations

import numba
import numpy as np

from .cpu.heap import pop as heap_pop
from .cpu.heap import put as heap_put
from .cpu.parallel import INF, _jit

__all__ = ["HOP_LIMIT", "LEVEL_WEIGHT", "SETTLE_LIMIT", "SIM_HOPS", "SIM_SETTLE", "contract"]

HOP_LIMIT = 8
"""A witness search follows paths of at most this many edges."""
SETTLE_LIMIT = 200
"""A witness search settles at most this many nodes."""
LEVEL_WEIGHT = 16
"""A node's level in its priority, times this: a sweep takes one dependent step per level. On
the record's meshes, roads and geometric graphs (CPU counts, ``benchmarks/hierarchy_levels.py
--level-weights 1 16``, ``benchmarks/results/cpu/hierarchy_weight.csv``) 16 rather than 1 gave
26-37 % fewer levels (cs4 173 to 110, COL 81 to 59, grid-512 114 to 76, the 1M-node road-like
graph 168 to 106) for 4-16 % more edges and 5-60 % more build time; 4 and 8 cut fewer levels
and 32 no more on cs4, t60k, COL and grid-512 (``hierarchy_weight_sweep.csv``)."""
SIM_HOPS, SIM_SETTLE = 4, 50
"""The limits of the searches that only estimate a node's priority (a removal searches with
:data:`HOP_LIMIT` and :data:`SETTLE_LIMIT`)."""


@_jit
def _grow(a, size):  # pragma: no cover
    out = np.empty(max(2 * a.size, size), dtype=a.dtype)
    out[: a.size] = a
    return out


@_jit
def _append(start, length, cap, nbr, wt, used, node, x, c, dead):  # pragma: no cover
    """Append ``(x, c)`` to ``node``'s list in the pool ``nbr``/``wt``; a full list moves to the
    pool's end with twice the room, leaving its entries to removed nodes behind. Returns the
    pools (grown when needed)."""
    if length[node] == cap[node]:
        live = 0
        for j in range(start[node], start[node] + length[node]):
            if not dead[nbr[j]]:
                live += 1
        room = 2 * live + 4
        if used[0] + room > nbr.size:
            nbr = _grow(nbr, used[0] + room)
            wt = _grow(wt, used[0] + room)
        k = used[0]
        for j in range(start[node], start[node] + length[node]):
            if not dead[nbr[j]]:
                nbr[k] = nbr[j]
                wt[k] = wt[j]
                k += 1
        start[node] = used[0]
        length[node] = live
        cap[node] = room
        used[0] += room
    j = start[node] + length[node]
    nbr[j] = x
    wt[j] = c
    length[node] += 1
    return nbr, wt


@_jit
def _find(start, length, nbr, node, x):  # pragma: no cover
    for j in range(start[node], start[node] + length[node]):
        if nbr[j] == x:
            return j
    return -1


@_jit
def _witness(
    o_start,
    o_len,
    o_nbr,
    o_w,
    dead,
    skip,
    src,
    limit,
    dist,
    hops,
    touched,
    hk,
    hv,
    hop_limit,
    settle_limit,
    mark,
    token,
    targets,
):  # pragma: no cover
    """Distances from ``src`` avoiding ``skip`` and removed nodes, exact up to ``limit`` for the
    nodes the search settles (hop and settle limits; it ends once the ``targets`` nodes with
    ``mark[x] == token`` are settled); the others stay at or above their true distance, each a
    real path's length. Returns the touched count (``dist`` entries to reset)."""
    nt = 0
    dist[src] = 0
    hops[src] = 0
    touched[nt] = src
    nt += 1
    heap_put(hk, hv, 0, 0, src)
    size = 1
    settled = 0
    while size > 0:
        d, u, size = heap_pop(hk, hv, size)
        if d > dist[u]:
            continue
        if d > limit:
            break
        if mark[u] == token:
            targets -= 1
            if targets == 0:
                break
        settled += 1
        if settled > settle_limit:
            break
        if hops[u] >= hop_limit:
            continue
        for j in range(o_start[u], o_start[u] + o_len[u]):
            x = o_nbr[j]
            if dead[x] or x == skip:
                continue
            nd = d + o_w[j]
            if nd < dist[x] and nd <= limit:
                if dist[x] == INF:
                    if nt == touched.size:
                        return nt  # the search is only ever cut short, never wrong
                    touched[nt] = x
                    nt += 1
                dist[x] = nd
                hops[x] = hops[u] + 1
                if size == hk.size:  # the heap stays in the caller's arrays
                    return nt
                heap_put(hk, hv, size, nd, x)
                size += 1
    return nt


@_jit
def _shortcuts(
    v,
    o_start,
    o_len,
    o_nbr,
    o_w,
    i_start,
    i_len,
    i_nbr,
    i_w,
    dead,
    dist,
    hops,
    touched,
    hk,
    hv,
    hop_limit,
    settle_limit,
    mark,
    token,
    out_u,
    out_x,
    out_c,
):  # pragma: no cover
    """The shortcuts removing ``v`` needs, written to ``out_*`` (grown when needed); returns
    (count, out_u, out_x, out_c). ``token``: a value no earlier call on this ``mark`` used (it
    marks ``v``'s out-neighbours as the searches' targets)."""
    count = 0
    top = 0
    targets = 0
    for j in range(o_start[v], o_start[v] + o_len[v]):
        x = o_nbr[j]
        if not dead[x]:
            top = max(top, o_w[j])
            if mark[x] != token:
                mark[x] = token
                targets += 1
    for i in range(i_start[v], i_start[v] + i_len[v]):
        u = i_nbr[i]
        if dead[u]:
            continue
        cu = i_w[i]
        nt = _witness(
            o_start,
            o_len,
            o_nbr,
            o_w,
            dead,
            v,
            u,
            cu + top,
            dist,
            hops,
            touched,
            hk,
            hv,
            hop_limit,
            settle_limit,
            mark,
            token,
            targets,
        )
        for j in range(o_start[v], o_start[v] + o_len[v]):
            x = o_nbr[j]
            if dead[x] or x == u:
                continue
            c = cu + o_w[j]
            if dist[x] > c:
                if count == out_u.size:
                    out_u = _grow(out_u, count + 1)
                    out_x = _grow(out_x, count + 1)
                    out_c = _grow(out_c, count + 1)
                out_u[count] = u
                out_x[count] = x
                out_c[count] = c
                count += 1
        for t in range(nt):
            dist[touched[t]] = INF
    return count, out_u, out_x, out_c


@_jit
def _live(start, length, nbr, dead, node):  # pragma: no cover
    k = 0
    for j in range(start[node], start[node] + length[node]):
        if not dead[nbr[j]]:
            k += 1
    return k


@_jit
def _compact(start, length, nbr, wt, dead, node):  # pragma: no cover
    """``node``'s list without its entries to removed nodes, in place and in its order (every
    reader skips those entries, so the order of the rest is all that the results depend on)."""
    k = start[node]
    for j in range(start[node], start[node] + length[node]):
        if not dead[nbr[j]]:
            nbr[k] = nbr[j]
            wt[k] = wt[j]
            k += 1
    length[node] = k - start[node]


@_jit
def _pools(n, tails, heads, weights):  # pragma: no cover
    """Each node's out- and in-lists in two pools with room to grow (twice the degree plus 4):
    (o_start, o_len, o_cap, o_nbr, o_w, o_used, i_start, i_len, i_cap, i_nbr, i_w, i_used)."""
    m = tails.size
    o_len = np.zeros(n, dtype=np.int64)
    i_len = np.zeros(n, dtype=np.int64)
    for e in range(m):
        o_len[tails[e]] += 1
        i_len[heads[e]] += 1
    o_cap = 2 * o_len + 4
    i_cap = 2 * i_len + 4
    o_start = np.zeros(n, dtype=np.int64)
    i_start = np.zeros(n, dtype=np.int64)
    for v in range(1, n):
        o_start[v] = o_start[v - 1] + o_cap[v - 1]
        i_start[v] = i_start[v - 1] + i_cap[v - 1]
    o_used = np.zeros(1, dtype=np.int64)
    i_used = np.zeros(1, dtype=np.int64)
    o_used[0] = o_start[n - 1] + o_cap[n - 1]
    i_used[0] = i_start[n - 1] + i_cap[n - 1]
    o_nbr = np.empty(2 * o_used[0] + 16, dtype=np.int32)
    o_w = np.empty(2 * o_used[0] + 16, dtype=np.int64)
    i_nbr = np.empty(2 * i_used[0] + 16, dtype=np.int32)
    i_w = np.empty(2 * i_used[0] + 16, dtype=np.int64)
    o_fill = np.zeros(n, dtype=np.int64)
    i_fill = np.zeros(n, dtype=np.int64)
    for e in range(m):
        u = tails[e]
        x = heads[e]
        o_nbr[o_start[u] + o_fill[u]] = x
        o_w[o_start[u] + o_fill[u]] = weights[e]
        o_fill[u] += 1
        i_nbr[i_start[x] + i_fill[x]] = u
        i_w[i_start[x] + i_fill[x]] = weights[e]
        i_fill[x] += 1
    return o_start, o_len, o_cap, o_nbr, o_w, o_used, i_start, i_len, i_cap, i_nbr, i_w, i_used


@numba.njit(cache=True, nogil=True, parallel=True)
def _searches(
    nodes, out_off, g, dead, level, removed, prio, work, limits, buf, counts, epoch
):  # pragma: no cover
    """For each of ``nodes`` in parallel (in as many chunks as ``work``'s rows, each chunk with
    its own search state: rows of ``work`` = (dist, hops, mark)): the shortcuts its removal
    needs (``limits`` = (hops, settled, the level's weight)), counted in ``counts`` and, where ``out_off`` is given
    (len > 0), written to ``buf`` = (tails, heads, weights) from ``out_off[i]``; otherwise its
    priority: shortcuts less its remaining edges, plus its removed neighbours and the level's
    weight times its level.
    ``g``: the pools (o_start, o_len, o_nbr, o_w, i_start, i_len, i_nbr, i_w); ``epoch``: a
    number no earlier call used (the searches' target tokens)."""
    o_start, o_len, o_nbr, o_w, i_start, i_len, i_nbr, i_w = g
    dist2, hops2, mark2 = work
    hop_limit, settle_limit, level_weight = limits
    buf_u, buf_x, buf_c = buf
    chunks = dist2.shape[0]
    k = nodes.size
    room = max(16, 64 * settle_limit)
    for c in numba.prange(chunks):
        dist = dist2[c]
        hops = hops2[c]
        mark = mark2[c]
        touched = np.empty(room, dtype=np.int32)
        hk = np.empty(room, dtype=np.int64)
        hv = np.empty(room, dtype=np.int64)
        su = np.empty(64, dtype=np.int32)
        sx = np.empty(64, dtype=np.int32)
        scc = np.empty(64, dtype=np.int64)
        for i in range(c, k, chunks):
            v = nodes[i]
            count, su, sx, scc = _shortcuts(
                v,
                o_start,
                o_len,
                o_nbr,
                o_w,
                i_start,
                i_len,
                i_nbr,
                i_w,
                dead,
                dist,
                hops,
                touched,
                hk,
                hv,
                hop_limit,
                settle_limit,
                mark,
                epoch * dist.size + i,  # unique per call on this mark row
                su,
                sx,
                scc,
            )
            counts[i] = count
            if out_off.size:
                base = out_off[i]
                for j in range(count):
                    buf_u[base + j] = su[j]
                    buf_x[base + j] = sx[j]
                    buf_c[base + j] = scc[j]
            else:
                prio[v] = (
                    count
                    - _live(o_start, o_len, o_nbr, dead, v)
                    - _live(i_start, i_len, i_nbr, dead, v)
                    + removed[v]
                    + level_weight * level[v]
                )


@numba.njit(cache=True, nogil=True, parallel=True)
def _select(
    live, prio, o_start, o_len, o_nbr, i_start, i_len, i_nbr, dead, flag
):  # pragma: no cover
    """``flag[i]``: ``live[i]`` comes before every remaining neighbour (priority, then id)."""
    for i in numba.prange(live.size):
        v = live[i]
        pv = prio[v]
        ok = True
        for j in range(o_start[v], o_start[v] + o_len[v]):
            y = o_nbr[j]
            if not dead[y] and (prio[y] < pv or (prio[y] == pv and y < v)):
                ok = False
                break
        if ok:
            for j in range(i_start[v], i_start[v] + i_len[v]):
                y = i_nbr[j]
                if not dead[y] and (prio[y] < pv or (prio[y] == pv and y < v)):
                    ok = False
                    break
        flag[i] = ok


@_jit
def _record(
    start, length, nbr, wt, dead, v, incoming, tails, heads, ws, count, stamp, removed, level
):  # pragma: no cover
    """The edges between ``v`` (being removed) and its remaining neighbours in one of its lists
    (``incoming``: its in-list, edges neighbour -> v) appended to ``tails``/``heads``/``ws`` from
    ``count``, each such neighbour's removed count and level raised once (``stamp``). Returns
    the arrays (grown when needed) and the new count."""
    for j in range(start[v], start[v] + length[v]):
        y = nbr[j]
        if dead[y]:
            continue
        if count == tails.size:
            tails = _grow(tails, count + 1)
            heads = _grow(heads, count + 1)
            ws = _grow(ws, count + 1)
        tails[count] = y if incoming else v
        heads[count] = v if incoming else y
        ws[count] = wt[j]
        count += 1
        if stamp[y] != v:
            stamp[y] = v
            removed[y] += 1
            level[y] = max(level[y], level[v] + 1)
    return tails, heads, ws, count


@_jit
def contract(
    n,
    tails,
    heads,
    weights,
    hop_limit,
    settle_limit,
    sim_hops,
    sim_settle,
    level_weight,
    chunks,
    stop,
):  # pragma: no cover
    """Contracts the graph of the deduplicated edges ``tails -> heads`` (no self-loops), in
    rounds: every remaining node that comes before all its remaining neighbours (priority, then
    id) is removed at once, its witness searches in parallel avoiding every node of the round
    (so each removal's shortcuts hold whatever the others remove); then the priorities of their
    neighbours are computed again, in parallel. Returns (level, rank, down (tail, head, w), up
    (tail, head, w)) as arrays; ``stop[0]`` set ends it between rounds (the caller then
    discards the result)."""
    m = tails.size
    (o_start, o_len, o_cap, o_nbr, o_w, o_used, i_start, i_len, i_cap, i_nbr, i_w, i_used) = _pools(
        n, tails, heads, weights
    )
    dead = np.zeros(n, dtype=np.bool_)
    level = np.zeros(n, dtype=np.int32)
    removed = np.zeros(n, dtype=np.int64)
    rank = np.full(n, -1, dtype=np.int32)
    prio = np.zeros(n, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    dist2 = np.full((chunks, n), INF, dtype=np.int64)
    hops2 = np.zeros((chunks, n), dtype=np.int32)
    mark2 = np.full((chunks, n), -1, dtype=np.int64)
    down_t = np.empty(m + 16, dtype=np.int32)
    down_h = np.empty(m + 16, dtype=np.int32)
    down_c = np.empty(m + 16, dtype=np.int64)
    up_t = np.empty(m + 16, dtype=np.int32)
    up_h = np.empty(m + 16, dtype=np.int32)
    up_c = np.empty(m + 16, dtype=np.int64)
    nd_ = 0
    nu_ = 0
    none = np.empty(0, dtype=np.int64)
    buf_u = np.empty(16, dtype=np.int32)
    buf_x = np.empty(16, dtype=np.int32)
    buf_c = np.empty(16, dtype=np.int64)
    live = np.arange(n).astype(np.int32)
    counts = np.zeros(n, dtype=np.int64)
    work = (dist2, hops2, mark2)
    sim = (sim_hops, sim_settle, level_weight)
    full = (hop_limit, settle_limit, level_weight)
    bufs = (buf_u, buf_x, buf_c)
    g = (o_start, o_len, o_nbr, o_w, i_start, i_len, i_nbr, i_w)
    _searches(live, none, g, dead, level, removed, prio, work, sim, bufs, counts, 0)
    flag = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int32)
    r = 0
    rounds = 0
    while live.size:
        if stop[0]:
            break
        rounds += 1
        _select(live, prio, o_start, o_len, o_nbr, i_start, i_len, i_nbr, dead, flag)
        sel = live[flag[: live.size]]
        # The round's nodes leave the witness searches first (none is another's neighbour).
        out_off = np.zeros(sel.size + 1, dtype=np.int64)
        for i in range(sel.size):
            v = sel[i]
            dead[v] = True
            out_off[i + 1] = out_off[i] + _live(o_start, o_len, o_nbr, dead, v) * _live(
                i_start, i_len, i_nbr, dead, v
            )
        if out_off[sel.size] > buf_u.size:
            buf_u = np.empty(out_off[sel.size], dtype=np.int32)
            buf_x = np.empty(out_off[sel.size], dtype=np.int32)
            buf_c = np.empty(out_off[sel.size], dtype=np.int64)
        bufs = (buf_u, buf_x, buf_c)
        g = (o_start, o_len, o_nbr, o_w, i_start, i_len, i_nbr, i_w)
        _searches(
            sel, out_off, g, dead, level, removed, prio, work, full, bufs, counts, 2 * rounds - 1
        )
        nt = 0
        for i in range(sel.size):
            v = sel[i]
            rank[v] = r
            r += 1
            down_t, down_h, down_c, nd_ = _record(
                i_start, i_len, i_nbr, i_w, dead, v, True, down_t, down_h, down_c, nd_, stamp,
                removed, level,
            )  # fmt: skip
            up_t, up_h, up_c, nu_ = _record(
                o_start, o_len, o_nbr, o_w, dead, v, False, up_t, up_h, up_c, nu_, stamp,
                removed, level,
            )  # fmt: skip
            for k in range(out_off[i], out_off[i] + counts[i]):
                u = buf_u[k]
                x = buf_x[k]
                c = buf_c[k]
                j = _find(o_start, o_len, o_nbr, u, x)
                if j >= 0:
                    if c < o_w[j]:
                        o_w[j] = c
                        i_w[_find(i_start, i_len, i_nbr, x, u)] = c
                    continue
                o_nbr, o_w = _append(o_start, o_len, o_cap, o_nbr, o_w, o_used, u, x, c, dead)
                i_nbr, i_w = _append(i_start, i_len, i_cap, i_nbr, i_w, i_used, x, u, c, dead)
        # The remaining neighbours of the round's nodes: their priorities again.
        for i in range(sel.size):
            v = sel[i]
            for j in range(i_start[v], i_start[v] + i_len[v]):
                u = i_nbr[j]
                if not dead[u] and stamp[u] != -2 - rounds:
                    stamp[u] = -2 - rounds
                    touched[nt] = u
                    nt += 1
            for j in range(o_start[v], o_start[v] + o_len[v]):
                x = o_nbr[j]
                if not dead[x] and stamp[x] != -2 - rounds:
                    stamp[x] = -2 - rounds
                    touched[nt] = x
                    nt += 1
        # Their lists lose the entries to the round's nodes first: the searches below scan
        # them many times each (in a dense remainder, lists were 2-4 times their live length).
        for i in range(nt):
            _compact(o_start, o_len, o_nbr, o_w, dead, touched[i])
            _compact(i_start, i_len, i_nbr, i_w, dead, touched[i])
        g = (o_start, o_len, o_nbr, o_w, i_start, i_len, i_nbr, i_w)  # the pools may have moved
        _searches(
            touched[:nt], none, g, dead, level, removed, prio, work, sim, bufs, counts, 2 * rounds
        )
        keep = 0
        for i in range(live.size):
            if not dead[live[i]]:
                live[keep] = live[i]
                keep += 1
        live = live[:keep]
    return (
        level,
        rank,
        down_t[:nd_],
        down_h[:nd_],
        down_c[:nd_],
        up_t[:nu_],
        up_h[:nu_],
        up_c[:nu_],
    )
