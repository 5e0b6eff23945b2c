"""The protocols of near-far fused across blocks, as models run under random interleavings (CPU).

Both kernels (the cluster loop's ``spread`` in ``kernels/sssp_cluster.cu``, the grid's
``sssp_nf_async`` in ``kernels/sssp_nearfar.cu``) run a bucket as: the blocks split the work they
start from (the far pile; the cluster: the active nodes below T), queue what lies below the
threshold T, and every warp pops queued nodes and relaxes their edges, queueing the targets that
fall below T and leaving the others to the next bucket (once: a far flag). A queue holds a
bounded number of entries a bucket; a push past them goes to the next bucket at the same
threshold. They differ in where a node is queued, and so in how a bucket knows it is over.

The grid's (:func:`solve`): node v is queued once (a queued bit) to its owner block v % S (or, in
its first version, to one queue). A pending count (a token per block until its split is done,
one per queued node until its edges are) tells when nothing below T is left anywhere; then every
warp leaves and a barrier ends the bucket. The first version kept one count; per-block queues
keep one per block with a count of the blocks whose count is not zero, updated when a push takes
a block's count from zero (before its entry shows) and when a release empties it.

The cluster's (:func:`solve_local`): a node is queued to the block whose warp lowered it, so a
chain of relaxations stays in the block it started in: each block counts its queued nodes (until
their edges are), its warps start popping once its split is done (a block barrier) and leave
when that count is zero, since only the block itself can queue more. A node of the block itself
is queued once (its queued bit; the pop clears the bit, then reads the distance); another
block's node carries the distance it was pushed at and is queued again when lowered again, and
the older pop finds a smaller distance and skips. A block resets its queue at the end of a
bucket, and the next solve starts on the same queues.

Each model takes every shared-memory operation of its protocol as one step and lets a seeded
random scheduler pick which block, split thread or warp takes the next one (sequentially
consistent: the memory model of the hardware is not modelled; the GPU tests run the kernels).
It checks the distances against Dijkstra's, that every bucket ends with nothing queued and its
counts at zero, and that no interleaving hangs; and that it notices a broken protocol. The
grid's: without the blocks' tokens a bucket can end before its split has queued anything, a push
counted only after its entry shows lets a pop empty the count while that entry waits, and a
block marked busy only after its entry shows lets its pop mark it idle first and the busy count
reach zero too early. The cluster's: a push counted late; a pop that skips a node found *at* its
entry's distance drops work; a pop that reads its own node's distance before clearing the bit
misses a lowering whose push found the bit still set; and a node queued to its owner block
instead of the pusher's can arrive after the owner has left.
"""

from __future__ import annotations

import heapq
import random

import pytest

INF = 1 << 40


def dijkstra(n: int, adj: list, s: int) -> list[int]:
    dist = [INF] * n
    dist[s] = 0
    heap = [(0, s)]
    while heap:
        du, u = heapq.heappop(heap)
        if du > dist[u]:
            continue
        for v, w in adj[u]:
            if du + w < dist[v]:
                dist[v] = du + w
                heapq.heappush(heap, (dist[v], v))
    return dist


STEP_LIMIT = 200_000
"""Steps of one bucket past which the model calls it a hang (the largest bucket of the random
cases below takes a few thousand)."""


class Hang(RuntimeError):
    """No interleaving should need this many steps for these graphs."""


def interleave(rng: random.Random, gens):
    """Runs the generators to their ends, one step at a time of one picked at random."""
    gens = list(gens)
    while gens:
        g = rng.choice(gens)
        try:
            next(g)
        except StopIteration:
            gens.remove(g)
        yield


def random_graph(rng: random.Random) -> tuple[int, list]:
    """Up to 40 nodes, up to 4 arcs a node, weights from 0 up to 1, 3, 10 or 100."""
    n = rng.randint(1, 40)
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    wmax = rng.choice([1, 3, 10, 100])
    for _ in range(rng.randint(0, 4 * n)):
        adj[rng.randrange(n)].append((rng.randrange(n), rng.randint(0, wmax)))
    return n, adj


def solve(
    n: int,
    adj: list,
    s: int,
    delta: int,
    rng: random.Random,
    *,
    blocks: int,
    warps: int,
    split_threads: int,
    capacity: int,
    per_block_queues: bool,
    tokens: bool = True,
    count_first: bool = True,
    busy_first: bool = True,
) -> tuple[list[int], int]:
    """Distances from ``s`` by the protocol, and the buckets it ran. ``per_block_queues``: the
    cluster's layout (node v's queue is its owner block's, v % blocks, and only that block's
    warps pop it; each block counts its own walk and queued nodes, and a count of blocks whose
    count is not zero tells when all are quiet), else the grid's one queue and one count.
    ``tokens``, ``count_first`` and ``busy_first`` off break the protocol on purpose (see the
    module docstring)."""
    key = [INF] * n
    key[s] = 0
    pushed = [INF] * n  # the distance each node's edges were last relaxed at
    infar = [False] * n
    infar[s] = True
    queued = [False] * n
    piles: dict[int, list[int]] = {0: [s]}
    fmin = {0: 0}

    def bucket(r: int) -> None:
        pile = piles[r]
        T = (fmin[r] // delta) * delta + delta
        piles.setdefault(r + 1, [])
        fmin.setdefault(r + 1, INF)
        nq = blocks if per_block_queues else 1
        if per_block_queues:  # a count per block (its walk), and every block busy
            pend = [1 if tokens else 0] * nq
            st = {"busy": blocks if tokens else 0, "quiet": False}
        else:  # one count: a walk per block
            pend = [blocks if tokens else 0]
            st = {"busy": 1, "quiet": False}
        head, tail = [0] * nq, [0] * nq
        queue: list[dict[int, int]] = [{} for _ in range(nq)]

        def owner(v: int) -> int:
            return v % blocks if per_block_queues else 0

        def far_push(v, d):
            fmin[r + 1] = min(fmin[r + 1], d)
            yield
            was, infar[v] = infar[v], True
            yield
            if not was:
                piles[r + 1].append(v)
                yield

        def push(v, d):
            was, queued[v] = queued[v], True
            yield
            if was:  # queued: its pop reads d or less
                return
            o = owner(v)
            idle = False  # whether this push took the owner's count from zero
            if count_first:
                idle = yield from count(o)
                if idle and busy_first:
                    st["busy"] += 1
                    yield
            q, tail[o] = tail[o], tail[o] + 1
            yield
            if q < capacity:
                queue[o][q] = v
                yield
                if not count_first:
                    idle = yield from count(o)
                if idle and not (count_first and busy_first):
                    st["busy"] += 1
                    yield
                return
            queued[v] = False
            yield
            yield from far_push(v, d)
            if count_first:
                yield from release(o)

        def count(o):
            """Counts a push into ``o``'s count; True when it took a block's count from zero."""
            old, pend[o] = pend[o], pend[o] + 1
            yield
            return per_block_queues and old == 0

        def release(o):
            old, pend[o] = pend[o], pend[o] - 1
            yield
            assert old > 0, "a count went below zero"
            if old != 1:
                return
            if per_block_queues:
                old, st["busy"] = st["busy"], st["busy"] - 1
                yield
                if old != 1:
                    return
            st["quiet"] = True
            yield

        def split(items):
            for v in items:
                d = key[v]
                yield
                if d >= pushed[v]:  # stale: relaxed at this distance since
                    infar[v] = False
                    yield
                elif d < T:
                    infar[v] = False
                    yield
                    yield from push(v, d)
                else:
                    piles[r + 1].append(v)
                    yield
                    fmin[r + 1] = min(fmin[r + 1], d)
                    yield

        def drain(b):
            o = b if per_block_queues else 0
            while True:
                h, head[o] = head[o], head[o] + 1
                yield
                while h not in queue[o]:
                    if st["quiet"]:
                        return
                    yield
                v = queue[o].pop(h)
                queued[v] = False
                yield
                d = key[v]
                yield
                if d < pushed[v]:
                    pushed[v] = d
                    yield
                    for t, w in adj[v]:
                        nd = d + w
                        old, key[t] = key[t], min(key[t], nd)
                        yield
                        if nd < old:
                            yield from push(t, nd) if nd < T else far_push(t, nd)
                yield from release(o)

        def block(b):
            mine = pile[b::blocks]
            yield from interleave(
                rng, (split(mine[k::split_threads]) for k in range(split_threads))
            )
            if tokens:
                yield from release(owner(b) if per_block_queues else 0)
            yield from interleave(rng, (drain(b) for _ in range(warps)))

        steps = 0
        for _ in interleave(rng, (block(b) for b in range(blocks))):
            steps += 1
            if steps > STEP_LIMIT:
                raise Hang(f"bucket {r} did not end: {st}")
        assert not any(pend) and st["quiet"], (pend, st)
        assert not per_block_queues or st["busy"] == 0, st
        assert not any(queued) and not any(queue), "a queued node was left"

    r = 0
    while piles.get(r):
        bucket(r)
        r += 1
    return key, r


def random_case(seed: int):
    rng = random.Random(seed)
    n, adj = random_graph(rng)
    options = {
        "blocks": rng.randint(1, 4),
        "warps": rng.randint(1, 4),
        "split_threads": rng.randint(1, 3),
        "capacity": rng.choice([1, 3, 8, 10**9]),
        "per_block_queues": rng.random() < 0.5,
    }
    return rng, n, adj, rng.randrange(n), rng.choice([1, 2, 5, 50, 10**9]), options


def test_the_grids_protocol_gives_dijkstras_distances():
    runs = 0
    for seed in range(1500):
        rng, n, adj, s, delta, options = random_case(seed)
        got, buckets = solve(n, adj, s, delta, rng, **options)
        assert got == dijkstra(n, adj, s), (seed, options, delta)
        assert buckets >= 1
        runs += 1
    assert runs == 1500


@pytest.mark.parametrize(
    "broken", [{"tokens": False}, {"count_first": False}, {"busy_first": False}]
)
def test_the_grid_model_notices_a_broken_protocol(broken):
    for seed in range(1000):  # the first failures: seed 26 without tokens, 564 counting late
        rng, n, adj, s, delta, options = random_case(seed)
        try:
            got, _ = solve(n, adj, s, delta, rng, **options, **broken)
        except (AssertionError, Hang):
            return
        if got != dijkstra(n, adj, s):
            return
    pytest.fail(f"1000 runs of the protocol with {broken} all passed")


class Queues:
    """The cluster's queue memory, kept from one solve to the next as the kernel's shared memory
    is (a block resets the entries it used at the end of each bucket): entries (node, distance
    pushed at), or (node, None) for a node of the block itself, queued once by its bit."""

    def __init__(self, blocks: int, capacity: int):
        self.slots: list[dict[int, tuple]] = [{} for _ in range(blocks)]
        self.capacity = capacity


def solve_local(
    n: int,
    adj: list,
    s: int,
    delta: int,
    rng: random.Random,
    queues: Queues,
    *,
    warps: int,
    split_threads: int,
    count_first: bool = True,
    skip_equal: bool = False,
    read_first: bool = False,
    to_owner: bool = False,
) -> tuple[list[int], int]:
    """Distances from ``s`` by the cluster's protocol, and the buckets it ran. Node v belongs to
    block v % blocks. The keywords break the protocol on purpose (see the module docstring)."""
    blocks = len(queues.slots)
    capacity = queues.capacity
    key = [INF] * n
    key[s] = 0
    infar = [False] * n
    infar[s] = True
    queued = [False] * n  # the own-block nodes' queued bits
    piles: dict[int, list[int]] = {0: [s]}
    fmin = {0: 0}

    def bucket(r: int) -> None:
        pile = piles[r]
        T = (fmin[r] // delta) * delta + delta
        piles.setdefault(r + 1, [])
        fmin.setdefault(r + 1, INF)
        pend = [0] * blocks  # each block's queued nodes not yet relaxed
        head, tail = [0] * blocks, [0] * blocks
        left = [False] * blocks  # a block's warps have all left

        def far_push(v, d):
            fmin[r + 1] = min(fmin[r + 1], d)
            yield
            was, infar[v] = infar[v], True
            yield
            if not was:
                piles[r + 1].append(v)
                yield

        def push(b, v, d):
            o = v % blocks if to_owner else b
            own = v % blocks == o
            if own:
                was, queued[v] = queued[v], True
                yield
                if was:  # queued here: its pop reads d or less
                    return
            if count_first:
                pend[o] += 1
                yield
            q, tail[o] = tail[o], tail[o] + 1
            yield
            if q < capacity:
                queues.slots[o][q] = (v, None if own else d)
                yield
                if not count_first:
                    pend[o] += 1
                    yield
                return
            if own:
                queued[v] = False
                yield
            yield from far_push(v, d)
            if count_first:
                yield from release(o)

        def release(o):
            old, pend[o] = pend[o], pend[o] - 1
            yield
            assert old > 0, "a count went below zero"

        def split(b, items):
            for v in items:
                d = key[v]
                yield
                if d < T:
                    infar[v] = False
                    yield
                    yield from push(b, v, d)
                else:
                    piles[r + 1].append(v)
                    yield
                    fmin[r + 1] = min(fmin[r + 1], d)
                    yield

        def relax_edges(b, v, d):
            for t, w in adj[v]:
                nd = d + w
                old, key[t] = key[t], min(key[t], nd)
                yield
                if nd < old:
                    yield from push(b, t, nd) if nd < T else far_push(t, nd)

        def drain(b):
            mine = queues.slots[b]
            while True:
                h, head[b] = head[b], head[b] + 1
                yield
                while h not in mine:
                    if pend[b] == 0:
                        return
                    yield
                v, nd = mine.pop(h)
                yield
                if nd is None:  # this block's node: its bit, then its distance now
                    if read_first:
                        d = key[v]
                        yield
                        queued[v] = False
                        yield
                    else:
                        queued[v] = False
                        yield
                        d = key[v]
                        yield
                    yield from relax_edges(b, v, d)
                else:
                    d = key[v]
                    yield
                    if not (d < nd or (skip_equal and d == nd)):
                        yield from relax_edges(b, v, nd)
                yield from release(b)

        def block(b):
            mine = pile[b::blocks]
            yield from interleave(
                rng, (split(b, mine[k::split_threads]) for k in range(split_threads))
            )
            yield from interleave(rng, (drain(b) for _ in range(warps)))
            left[b] = True

        steps = 0
        for _ in interleave(rng, (block(b) for b in range(blocks))):
            steps += 1
            if steps > STEP_LIMIT:
                raise Hang(f"bucket {r} did not end: {pend}")
        assert all(left) and not any(pend), pend
        assert not any(queues.slots) and not any(queued), "a queued node was left"

    r = 0
    while piles.get(r):
        bucket(r)
        r += 1
    return key, r


def random_local_case(seed: int):
    rng = random.Random(seed)
    n, adj = random_graph(rng)
    queues = Queues(rng.randint(1, 4), rng.choice([1, 3, 8, 10**9]))
    options = {"warps": rng.randint(1, 4), "split_threads": rng.randint(1, 3)}
    sources = (rng.randrange(n), rng.randrange(n))
    return rng, n, adj, sources, rng.choice([1, 2, 5, 50, 10**9]), queues, options


def test_the_clusters_protocol_gives_dijkstras_distances():
    runs = 0
    for seed in range(1500):
        rng, n, adj, sources, delta, queues, options = random_local_case(seed)
        for s in sources:  # the second solve starts on the queues the first left
            got, buckets = solve_local(n, adj, s, delta, rng, queues, **options)
            assert got == dijkstra(n, adj, s), (seed, s, options, delta)
            assert buckets >= 1
            runs += 1
    assert runs == 3000


@pytest.mark.parametrize(
    "broken",
    [{"count_first": False}, {"skip_equal": True}, {"read_first": True}, {"to_owner": True}],
)
def test_the_cluster_model_notices_a_broken_protocol(broken):
    for seed in range(3000):
        rng, n, adj, sources, delta, queues, options = random_local_case(seed)
        try:
            for s in sources:
                got, _ = solve_local(n, adj, s, delta, rng, queues, **options, **broken)
                if got != dijkstra(n, adj, s):
                    return
        except (AssertionError, Hang):
            return
    pytest.fail(f"3000 runs of the protocol with {broken} all passed")
