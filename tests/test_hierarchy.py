"""Contraction hierarchies and PHAST (:mod:`sssp.hierarchy`).

PHAST's distances must equal SciPy's and its tree the reference's on any graph with integer
weights (self-loops, parallel edges, zero weights, unreachable nodes, one node), also when the
witness searches are cut to nothing (more shortcuts, never a wrong one) and through a core
table of any size (its distances the graph's); every hierarchy edge
joins two levels, downward edges from the higher, and weighs a real path's length; a road-like
graph sweeps in far fewer levels than near-far takes steps; a hierarchy is built once per graph
and machine (the cache), and a bad cached file is rebuilt, never used.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sssp
from sssp.contraction import LEVEL_WEIGHT
from sssp.cpu.nearfar import near_far
from sssp.cpu.parallel import INF
from sssp.cpu.reference import dijkstra
from sssp.errors import InvalidArgumentError, InvalidGraphError
from sssp.hierarchy import (
    ARRAYS,
    CACHE_ENV,
    CORE_NODES_MAX,
    Hierarchy,
    build_hierarchy,
    cache_dir,
    core_table,
    hierarchy_for,
    phast,
    upward_labels,
)

try:
    from tests.interrupts import assert_ctrl_c_stops
except ImportError:  # pragma: no cover
    from interrupts import assert_ctrl_c_stops  # type: ignore[no-redef]


def _random(n: int, m: int, seed: int, low: int = 0, high: int = 9) -> sssp.Graph:
    rng = np.random.default_rng(seed)
    return sssp.Graph.from_edges(
        n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(low, high, m)
    )


def _one_way(base: sssp.Graph, keep: float, low: int, seed: int) -> sssp.Graph:
    """``base``'s edges, each kept with probability ``keep`` (some then one way only) and
    weighed anew from ``low`` to 999 (each direction its own weight)."""
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(base.n), np.diff(base.indptr))
    kept = rng.random(src.size) < keep
    weights = rng.integers(low, 1000, int(kept.sum()))
    return sssp.Graph.from_edges(base.n, src[kept], base.indices[kept], weights)


def _check_structure(graph: sssp.Graph, h: Hierarchy) -> None:
    """The sweep order is a permutation grouped by level, top first, ``position`` its inverse;
    downward edges come from a higher level, upward edges go to one (ends by position); each
    edge weighs at least the distance it spans."""
    n = graph.n
    assert sorted(h.order.tolist()) == list(range(n))
    np.testing.assert_array_equal(h.position[h.order], np.arange(n))
    assert h.level_ptr[0] == 0 and h.level_ptr[-1] == n
    for i in range(h.levels):
        nodes = h.order[h.level_ptr[i] : h.level_ptr[i + 1]]
        assert nodes.size and np.all(h.level[nodes] == h.levels - 1 - i)
    level = h.level[h.order]  # by position
    heads = np.repeat(np.arange(n), np.diff(h.down_ptr))
    assert np.all(level[h.down_src] > level[heads])
    tails = np.repeat(np.arange(n), np.diff(h.up_ptr))
    assert np.all(level[h.up_dst] > level[tails])
    for tails_, heads_, weights in ((h.down_src, heads, h.down_w), (tails, h.up_dst, h.up_w)):
        for u in np.unique(tails_)[:20]:
            row = dijkstra(graph, int(h.order[u])).dist
            sel = tails_ == u
            assert np.all(weights[sel] >= row[h.order[heads_[sel]]])


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 40),
    m=st.integers(0, 160),
    seed=st.integers(0, 2**16),
    limits=st.sampled_from([(8, 200), (1, 1), (2, 3)]),
    weight=st.sampled_from([0, 1, 16]),
    core=st.sampled_from([0, 1, 5, 20, 40]),
)
def test_phast_equals_scipy_on_drawn_graphs(n, m, seed, limits, weight, core):
    """Self-loops, parallel edges, zero weights, unreachable nodes, one node, witness searches
    cut short, any weight of the level in the order, and a core table of none, some or all of
    the levels: distances equal SciPy's, the tree the reference's, the levels swept those below
    the core."""
    graph = _random(n, m, seed)
    h = build_hierarchy(graph, hop_limit=limits[0], settle_limit=limits[1], level_weight=weight)
    _check_structure(graph, h)
    table = core_table(h, core)
    assert table.nodes <= core and table.nodes == h.level_ptr[table.levels]
    assert table.levels == h.levels or h.level_ptr[table.levels + 1] > core
    for s in range(min(n, 4)):
        r = phast(graph, h, s, core=table)
        np.testing.assert_array_equal(r.dist, dijkstra(graph, s).dist)
        np.testing.assert_array_equal(r.pred, near_far(graph, s).pred)
        assert r.algorithm == "phast" and r.iterations == h.levels - table.levels
        assert r.stats["reached"] == np.count_nonzero(r.dist != sssp.UNREACHABLE)


def test_road_sweeps_in_few_levels():
    """A road-like graph: the same distances and tree as near-far from every source tried, in a
    sweep of far fewer levels than near-far's steps, with few edges added."""
    graph = sssp.generate("road", size=20_000, seed=5)
    h = build_hierarchy(graph)
    assert h.edges < 3 * graph.m
    for s in (0, 7_777, 19_999):
        ref = near_far(graph, s)
        r = phast(graph, h, s)
        np.testing.assert_array_equal(r.dist, ref.dist)
        np.testing.assert_array_equal(r.pred, ref.pred)
        assert 4 * h.levels < ref.iterations, (h.levels, ref.iterations)
        assert r.stats["upward_settled"] < graph.n // 10


def test_the_level_weight_makes_the_hierarchy_shallower():
    """The level's weight in a node's priority (``LEVEL_WEIGHT``) trades a few more edges for
    fewer levels, the sweep's dependent steps: on a road-like graph the default's hierarchy has
    at least a fifth fewer levels than with the level weighed as one edge, the same answers."""
    graph = sssp.generate("road", size=20_000, seed=5)
    assert LEVEL_WEIGHT > 1
    plain, shallow = build_hierarchy(graph, level_weight=1), build_hierarchy(graph)
    assert 5 * shallow.levels <= 4 * plain.levels, (shallow.levels, plain.levels)
    assert shallow.edges < 1.2 * plain.edges
    for s in (0, 19_999):
        np.testing.assert_array_equal(phast(graph, shallow, s).dist, phast(graph, plain, s).dist)


def test_upward_seeds_bound_the_distances_and_leave_the_work_array_clean():
    """The upward search's seeds (stall-on-demand drops the nodes a higher one reaches more
    cheaply): the source at 0 among them, every seed's distance at least the true one, and the
    work array all unreachable again after each search."""
    graph = sssp.generate("road", size=20_000, seed=5)
    h = build_hierarchy(graph)
    work = np.full(graph.n, sssp.UNREACHABLE, dtype=np.int64)
    scratch = h.scratch()
    for s in (0, 7_777, 19_999):
        positions, dists = h.upward(s, work, scratch)
        ref = dijkstra(graph, s).dist
        assert positions[0] == h.position[s] and dists[0] == 0
        assert np.unique(positions).size == positions.size
        assert np.all(dists >= ref[h.order[positions]])
        assert np.all(work == sssp.UNREACHABLE)


def test_a_core_table_holds_the_core_distances_and_seeds_the_sweep_below_it():
    """``core_table(h, nodes)``: the most top levels of at most ``nodes`` nodes; its distances
    the graph's between those nodes (directed, asymmetric weights, some pairs unreachable).
    The upward search's seeds through it: the core's positions first with their exact
    distances, then seeds below the core that bound the distances; the work array clean. The
    same table from one thread and from three (runs of rows)."""
    graph = _one_way(sssp.generate("road", size=3_000, seed=8), 0.85, 0, 12)
    h = build_hierarchy(graph)
    work = np.full(graph.n, sssp.UNREACHABLE, dtype=np.int64)
    assert core_table(h, 0).nodes == 0
    for nodes in (1, 100, 700):
        table = core_table(h, nodes, threads=3)
        np.testing.assert_array_equal(table.dist, core_table(h, nodes, threads=1).dist)
        k = table.nodes
        assert 0 < k <= nodes < h.level_ptr[table.levels + 1]
        assert table.dist.shape == (k, k) and table.dist.dtype == np.int32  # small distances
        for a in (0, k // 2, k - 1):
            ref = dijkstra(graph, int(h.order[a])).dist[h.order[:k]]
            np.testing.assert_array_equal(table.dist[a], np.where(ref == INF, -1, ref))
        scratch = h.scratch(table)
        for s in (0, 1_500, 2_999, int(h.order[0])):
            ref = dijkstra(graph, s).dist
            positions, dists = h.upward(s, work, scratch)
            np.testing.assert_array_equal(positions[:k], np.arange(k))
            np.testing.assert_array_equal(dists[:k], ref[h.order[:k]])
            below = positions[k:]
            assert np.all(below >= k) and np.unique(below).size == below.size
            assert np.all(dists[k:] >= ref[h.order[below]])
            assert np.all(work == sssp.UNREACHABLE)
            assert np.all(scratch.head == -1)


@pytest.mark.parametrize("nodes", [0, 1, 100, 700])
def test_labels_are_the_upward_searches_kept(nodes):
    """``upward_labels(h, core)``: each position's label holds what the upward search finds
    before the core: its entries (core nodes, at most one a core node a search from the label's
    position reaches, by distance) whose table rows give exactly the core's distances that
    :meth:`Hierarchy.upward` gives, then the same seeds below the core with the same
    distances; a core node's label is itself at 0. The same labels on one thread and on three,
    and from a thread whose buffer starts too small and grows; a thread stops once past its
    limit; None where they would exceed ``max_items``, judged from a sample first."""
    graph = _one_way(sssp.generate("road", size=3_000, seed=8), 0.85, 0, 12)
    h = build_hierarchy(graph)
    core = core_table(h, nodes)
    k = core.nodes
    labels = upward_labels(h, core, threads=3)
    assert labels is not None and labels.core is core
    assert labels.ptr[0] == 0 and labels.ptr[-1] == labels.items and np.all(np.diff(labels.ptr) > 0)
    one = upward_labels(h, core, threads=1)
    assert one is not None
    for name in ("ptr", "pos", "dist", "entries"):
        np.testing.assert_array_equal(getattr(one, name), getattr(labels, name))
    work = np.full(graph.n, sssp.UNREACHABLE, dtype=np.int64)
    scratch = h.scratch(core)
    table = core.dist.astype(np.int64)
    for p in (*range(min(k, 3)), k, k + 1, 1_500, 2_999):
        positions, dists = h.upward(int(h.order[p]), work, scratch)
        a, b, ne = labels.ptr[p], labels.ptr[p + 1], labels.entries[p]
        entry_v, entry_d = labels.pos[a : a + ne], labels.dist[a : a + ne]
        assert np.all(entry_v < k) and np.unique(entry_v).size == ne
        assert np.all(np.diff(entry_d) >= 0)  # by distance
        if p < k:
            assert (ne, entry_v.tolist(), entry_d.tolist()) == (1, [p], [0])
        core_d = np.full(k, INF, dtype=np.int64)
        for e, de in zip(entry_v, entry_d, strict=True):
            core_d = np.minimum(core_d, np.where(table[e] < 0, INF, de + table[e]))
        np.testing.assert_array_equal(core_d, dists[:k])
        seed_v, seed_d = labels.pos[a + ne : b].tolist(), labels.dist[a + ne : b].tolist()
        seeds = dict(zip(seed_v, seed_d, strict=True))
        assert seeds == dict(zip(positions[k:].tolist(), dists[k:].tolist(), strict=True))
        assert len(seeds) == b - a - ne
    if k:
        assert 0 < labels.entries[k:].mean() < k  # entries dropped through the table
    assert upward_labels(h, core, max_items=graph.n) is None
    # One thread whose buffer starts at its smallest and grows: the same items; with a limit,
    # it stops soon after passing it.
    every = [np.arange(graph.n, dtype=np.int64)]
    counts, entries = np.zeros(graph.n + 1, np.int64), np.zeros(graph.n, np.int32)
    ((pos, dist),) = sssp.hierarchy._label_pass(h, core, every, counts, entries, 0, 10**9)
    np.testing.assert_array_equal(pos, labels.pos)
    np.testing.assert_array_equal(dist, labels.dist)
    np.testing.assert_array_equal(np.cumsum(counts), labels.ptr)
    ((pos, _),) = sssp.hierarchy._label_pass(h, core, every, counts, entries, 0, 50)
    assert 50 < pos.size < min(labels.items, 50 + graph.n)
    calls: list[int] = []
    real = sssp.hierarchy._label_rows

    def counted(*args):
        calls.append(args[3].size)
        return real(*args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sssp.hierarchy, "_label_rows", counted)
        assert upward_labels(h, core, max_items=graph.n, threads=2) is None
    assert calls == [64]  # the sample alone


def test_a_core_table_of_long_distances_keeps_64_bits():
    """Distances past int32 stay int64 in the table, -1 where there is no path, the answers
    exact."""
    base = _one_way(sssp.generate("grid", size=400, seed=2), 0.9, 1, 3)
    src = np.repeat(np.arange(base.n), np.diff(base.indptr))
    graph = sssp.Graph.from_edges(base.n, src, base.indices, base.weights.astype(np.int64) << 28)
    h = build_hierarchy(graph)
    table = core_table(h, 200)
    assert table.dist.dtype == np.int64 and table.dist.max() >= 2**31
    for s in (0, 399, int(h.order[0])):
        np.testing.assert_array_equal(phast(graph, h, s, core=table).dist, dijkstra(graph, s).dist)


@pytest.mark.parametrize(
    ("stored", "val"), [(np.int32, np.uint32), (np.int64, np.uint64), (np.int64, np.uint32)]
)
def test_a_core_tables_device_copy_marks_no_path_with_every_bit(stored, val):
    """The table the sweep reads (:func:`sssp.gpu.phast.device_table`, importable without a
    GPU): flat, in the distance type, every bit set where the host's table has no path (-1) or
    a distance at or past the distance type's infinity; the others unchanged."""
    from sssp.gpu.phast import device_table

    val = np.dtype(val)
    inf = min(int(np.iinfo(val).max), int(np.iinfo(np.int64).max))
    big = min(int(np.iinfo(stored).max), 2**40)
    dist = np.array([[0, 7, -1], [big, 3, inf if big >= inf else 5], [-1, 2, 0]], dtype=stored)
    got = device_table(dist, val, inf)
    assert got.dtype == val and got.shape == (9,)
    want = [v if 0 <= v < inf else int(np.iinfo(val).max) for v in dist.reshape(-1).tolist()]
    assert got.tolist() == want
    assert dist[0, 2] == -1  # the host's table is left as it was


def test_core_table_refusals():
    graph = _random(30, 90, 2)
    h = build_hierarchy(graph)
    for bad in (-1, CORE_NODES_MAX + 1, 2.5, True, "8"):
        with pytest.raises(InvalidArgumentError, match="core nodes"):
            core_table(h, bad)
    again = build_hierarchy(graph)
    with pytest.raises(InvalidArgumentError, match="another hierarchy's"):
        phast(graph, again, 0, core=core_table(h, 30))
    with pytest.raises(InvalidArgumentError, match="another hierarchy's"):
        upward_labels(again, core_table(h, 30))


def test_the_same_hierarchy_on_any_number_of_threads():
    """Rounds of independent removals whose searches avoid each other: one thread and two give
    the same levels, order and edges."""
    import numba

    graph = sssp.generate("road", size=5_000, seed=6)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = build_hierarchy(graph)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = build_hierarchy(graph)
    finally:
        numba.set_num_threads(threads)
    _same(one, two)


def test_directed_asymmetric_weights():
    """Each direction has its own weight, and some edges one direction only."""
    graph = _one_way(sssp.generate("grid", size=900, seed=1), 0.8, 1, 11)
    h = build_hierarchy(graph)
    for s in (0, 450, 899):
        np.testing.assert_array_equal(phast(graph, h, s).dist, dijkstra(graph, s).dist)


def test_refusals():
    real = sssp.Graph.from_edges(3, [0, 1], [1, 2], np.array([0.5, 1.5]))
    with pytest.raises(InvalidGraphError, match="integer weights only"):
        build_hierarchy(real)
    graph = _random(10, 30, 1)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InvalidArgumentError, match="hop_limit"):
            build_hierarchy(graph, hop_limit=bad)
    with pytest.raises(InvalidArgumentError, match="settle_limit"):
        build_hierarchy(graph, settle_limit=0)
    for bad in (-1, 1.5, True):
        with pytest.raises(InvalidArgumentError, match="level_weight must be an integer >= 0"):
            build_hierarchy(graph, level_weight=bad)
    with pytest.raises(InvalidArgumentError, match="build it from this graph"):
        phast(_random(11, 30, 1), build_hierarchy(graph), 0)
    with pytest.raises(InvalidGraphError):
        phast(graph, build_hierarchy(graph), 10)


def test_ctrl_c_stops_the_build(monkeypatch):
    """The contraction runs in a helper thread that looks at a stop flag between removals:
    Ctrl-C (SIGINT) during a build raises KeyboardInterrupt well before it would have ended."""
    import sssp.hierarchy as module

    graph = sssp.generate("road", size=100_000, seed=7)
    assert_ctrl_c_stops(monkeypatch, module, lambda: build_hierarchy(graph))
    assert build_hierarchy(_random(30, 90, 2)).n == 30  # the next build starts afresh


def _same(one: Hierarchy, two: Hierarchy) -> None:
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name), err_msg=name)


def test_the_cache_builds_once_per_graph(tmp_path, monkeypatch):
    """The first call builds and writes, the next reads the same arrays (and answers); another
    weight or ``cache=False`` builds again; ``off`` keeps nothing."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    graph = sssp.generate("grid", size=900, seed=3)
    first, hit = hierarchy_for(graph)
    assert not hit and len(list(tmp_path.glob("*.npz"))) == 1
    again, hit = hierarchy_for(graph)
    assert hit
    _same(first, again)
    assert again.seconds == first.seconds  # the build's own time, kept
    ref = dijkstra(graph, 7)
    np.testing.assert_array_equal(phast(graph, again, 7).dist, ref.dist)
    heavier = sssp.Graph(graph.indptr, graph.indices, graph.weights + 1)
    assert not hierarchy_for(heavier)[1]
    assert len(list(tmp_path.glob("*.npz"))) == 2
    assert not hierarchy_for(graph, cache=False)[1]
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_dir() is None and not hierarchy_for(graph)[1]
    assert not list(tmp_path.glob(".partial-*"))


def test_a_bad_cached_file_is_rebuilt(tmp_path, monkeypatch, caplog):
    """A truncated file, or another graph's arrays under this graph's name, is named in a
    warning and replaced by a fresh build."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    graph = sssp.generate("grid", size=400, seed=1)
    built, _ = hierarchy_for(graph)
    (path,) = tmp_path.glob("*.npz")
    path.write_bytes(path.read_bytes()[:100])
    with caplog.at_level("WARNING", logger="sssp.hierarchy"):
        again, hit = hierarchy_for(graph)
    assert not hit and path.name in caplog.text
    _same(built, again)
    other, _ = hierarchy_for(sssp.generate("grid", size=100, seed=1), cache=False)
    np.savez(path, seconds=0.0, **{k: getattr(other, k) for k in ARRAYS})
    caplog.clear()
    with caplog.at_level("WARNING", logger="sssp.hierarchy"):
        again, hit = hierarchy_for(graph)
    assert not hit and "not a hierarchy of 400 nodes" in caplog.text
    assert hierarchy_for(graph)[1]


def test_an_unwritable_cache_only_warns(tmp_path, monkeypatch, caplog):
    """A cache folder that cannot be made costs a warning, not the solve."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "sub"))
    graph = sssp.generate("grid", size=100, seed=0)
    with caplog.at_level("WARNING", logger="sssp.hierarchy"):
        h, hit = hierarchy_for(graph)
    assert not hit and h.n == 100 and "could not keep the hierarchy" in caplog.text


def test_ctrl_c_stops_the_core_table(monkeypatch):
    """The core table's rows run on threads under a stop flag each reads between rows: Ctrl-C
    during a build raises KeyboardInterrupt well before it would have ended."""
    import sssp.hierarchy as module

    graph = sssp.generate("road", size=60_000, seed=7)
    h, _ = hierarchy_for(graph)
    assert_ctrl_c_stops(monkeypatch, module, lambda: core_table(h, 4096, threads=2))


def test_ctrl_c_stops_the_labels(monkeypatch):
    """The labels' passes run their threads under a stop flag each reads between positions:
    Ctrl-C during a build raises KeyboardInterrupt well before it would have ended."""
    import sssp.hierarchy as module

    graph = sssp.generate("road", size=60_000, seed=7)
    h, _ = hierarchy_for(graph)
    core = core_table(h, 0)
    assert_ctrl_c_stops(monkeypatch, module, lambda: upward_labels(h, core, threads=2))
