"""The engine's plan (:mod:`sssp.gpu.plan`) on the CPU: every loop, algorithm, variant and
distance width, the combinations engine 2 rejects, the fallbacks and their reasons, the buffers
and their sizes, the control words, and the GPU layer's imports (no pycuda, no cycle)."""

from __future__ import annotations

import ast
import struct
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import kernels
import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu.nearfar import default_delta
from sssp.errors import BackendUnavailableError, InvalidGraphError, SolverError
from sssp.gpu.plan import (
    BUFFER_NAMES,
    MIN_ALLOC_BYTES,
    Bands,
    DeviceFacts,
    GraphFacts,
    graph_bands,
    hub_entries,
    plan_batch,
    plan_engine,
    shortcut_choice,
)

pytestmark = pytest.mark.timeout(120)

LOOPS = ("persistent", "graph", "host", "cluster", "wide")
ALGORITHMS = ("crauser", "crauser-in", "crauser-inout", "martin", "near-far")
VARIANTS = ("successors", "predecessors")
N = 1000
SET_WORDS = (kernels.CTRL_PHASE, kernels.CTRL_LIMIT, kernels.CTRL_SORTED)
"""The control words a plan sets; the others start at zero."""

H200 = DeviceFacts(
    compute_capability=(9, 0),
    sm_count=132,
    smem_per_block_optin=232448,
    smem_per_sm=233472,
    can_map_host=True,
    non_portable_clusters=True,
)
A100 = DeviceFacts((8, 0), 108, 166912, 167936)


def facts(width: str, n: int = N, degree: int = 2, degrees: np.ndarray | None = None) -> GraphFacts:
    """Graph facts of ``n`` nodes of out-degree ``degree`` whose weights give ``width``:
    ``"u32"`` (32-bit packed keys), ``"u64"`` (64-bit integer distances), ``"f64"`` (float64)."""
    deg = np.full(n, degree, np.int64) if degrees is None else np.asarray(degrees, np.int64)
    m = int(deg.sum())
    max_weight, dtype = {"u32": (100, "int32"), "u64": (2**30, "int32"), "f64": (2.5, "float64")}[
        width
    ]
    return GraphFacts(n, m, max_weight, dtype, deg, weight_sum=float(m) * max_weight / 2)


def plan(width: str = "u32", *, loop: str = "persistent", algorithm: str = "crauser", **kw):
    variant = kw.pop("variant", "successors")
    delta = kw.pop("delta", None)
    device = kw.pop("device", H200)
    config = kw.pop("config", LaunchConfig(loop=loop))
    graph = kw.pop("graph", None) or facts(width)
    return plan_engine(graph, config, algorithm, variant, delta, device, **kw)


def size(p, name: str) -> int | None:
    buf = p.buffer(name)
    return None if buf is None else buf.nbytes


# -- the whole matrix ---------------------------------------------------------------------------
def _rejection(loop: str, algorithm: str, variant: str) -> str | None:
    """The error engine 2 gives for this combination (checked in this order), or None."""
    nearfar = algorithm == "near-far"
    if loop in ("cluster", "wide", "phast") and not nearfar:
        return f"loop '{loop}' runs near-far only, not '{algorithm}'"
    if nearfar and loop not in ("persistent", "cluster", "wide", "phast"):
        return f"near-far runs on the persistent, cluster, wide or phast loop, not '{loop}'"
    return None


@pytest.mark.parametrize("width", ["u32", "u64", "f64"])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("loop", LOOPS)
def test_every_loop_algorithm_variant_and_width(loop, algorithm, variant, width):
    if algorithm == "near-far" and variant != "successors":
        # The front door's request rejects it (sssp.request); the plan asserts it.
        with pytest.raises(AssertionError):
            plan(width, loop=loop, algorithm=algorithm, variant=variant)
        return
    rejected = _rejection(loop, algorithm, variant)
    if rejected is not None:
        with pytest.raises(InvalidGraphError) as err:
            plan(width, loop=loop, algorithm=algorithm, variant=variant)
        assert str(err.value) == rejected
        return
    p = plan(width, loop=loop, algorithm=algorithm, variant=variant)
    nearfar, packed = algorithm == "near-far", width == "u32"
    n = N
    # The loop after the fallbacks, and why.
    expected_loop = loop if packed or loop not in ("cluster", "wide") else "persistent"
    if loop == "phast" and width == "f64":
        expected_loop = "persistent"
    assert (p.requested_loop, p.loop) == (loop, expected_loop)
    assert p.cluster_fallback == (
        "the cluster solver keeps 32-bit integer distances"
        if loop == "cluster" and not packed
        else ""
    )
    assert p.loop_fallback == (
        "the wide loop takes 32-bit integer distances: persistent loop"
        if loop == "wide" and not packed
        else "the phast loop takes integer weights (a contraction hierarchy's shortcut is an "
        "exact integer sum): persistent loop"
        if loop == "phast" and width == "f64"
        else ""
    )
    cluster, phast = p.loop == "cluster", p.loop == "phast"
    # Compile-time parameters.
    bits = {"u32": (32, 32, False), "u64": (64, 32, False), "f64": (64, 64, True)}[width]
    assert (p.params.dist_bits, p.params.weight_bits, p.params.floating) == bits
    assert p.params.packed is packed
    assert p.params.pull is (variant == "predecessors")
    assert (
        p.params.criterion
        == {
            "crauser": "out",
            "crauser-in": "in",
            "crauser-inout": "inout",
            "martin": "martin",
            "near-far": "out",
        }[algorithm]
    )
    assert p.params.relax_lanes == (kernels.CLUSTER_LANES if cluster else 1)
    assert p.params.cluster == (1 if cluster else 0)  # 1000 nodes fit in one block
    assert p.kernel_set_name == (
        "cluster" if cluster else "phast" if phast else "nearfar" if nearfar else "engine"
    )
    assert set(p.kernel_configs) == set(p.kernel_set)
    # Buffers: every node's key is one 64-bit word (packed, 64-bit integer or float64 bits).
    assert size(p, "d_key") == 8 * n
    assert size(p, "d_pred") == (None if packed else 4 * n)
    assert size(p, "d_settled") == (None if nearfar and packed else 4 * n)
    assert size(p, "d_qF") == size(p, "d_qR") == (None if cluster or phast else 8 * n)
    grid_nf = nearfar and not (cluster or phast)
    val = 4 if packed else 8
    assert size(p, "d_pushed") == (val * n if grid_nf else None)
    assert size(p, "d_infar") == (4 * kernels.nearfar_flag_words(n) if grid_nf else None)
    hist = kernels.NEARFAR_WORDS if nearfar else 2 * (n + 3)
    assert size(p, "d_cnt") == 4 * hist and p.history_len == hist
    assert size(p, "d_thr") == (None if cluster or phast else val * hist)
    crit = None if nearfar else p.params.criterion
    assert size(p, "d_omega") == (val * n if crit in ("out", "inout") else None)
    assert size(p, "d_iota") == (val * n if crit in ("in", "inout") else None)
    assert size(p, "d_indptr") == 8 * (n + 1) and size(p, "d_indices") == 4 * 2 * n
    assert size(p, "d_weights") == (8 if width == "f64" else 4) * 2 * n
    assert size(p, "d_ctrl") == 4 * kernels.CTRL_WORDS
    wide = p.loop == "wide"
    assert (size(p, "d_hubs") is not None, size(p, "d_w") is not None) == (wide, wide)
    assert (p.wide is not None) is wide
    assert size(p, "d_out_dist") is None  # the H200 maps host memory
    assert {b.name for b in p.buffers} <= set(BUFFER_NAMES)
    assert len({b.name for b in p.buffers}) == len(p.buffers)
    # The control words every solve starts from.
    ctrl0 = list(p.ctrl0)
    assert len(ctrl0) == kernels.CTRL_WORDS and ctrl0[kernels.CTRL_PHASE] == 1
    limit = kernels.nearfar_step_limit(n) if nearfar else n + 2
    assert ctrl0[kernels.CTRL_LIMIT] == limit
    sorted_rows = not nearfar and variant == "successors" and p.params.weight_bits == 32
    assert p.sort_rows is sorted_rows and ctrl0[kernels.CTRL_SORTED] == int(sorted_rows)
    others = [i for i in range(kernels.CTRL_WORDS) if i not in SET_WORDS]
    assert all(ctrl0[i] == 0 for i in others)
    # The result pass.
    assert p.layout == (
        kernels.RES_PACKED if packed else kernels.RES_F64 if width == "f64" else kernels.RES_U64
    )
    assert p.dist_dtype == ("float64" if width == "f64" else "int64")
    assert p.tree_pass is (nearfar or not packed)
    assert p.counters == (kernels.RES_COUNTERS_NEARFAR if nearfar else kernels.RES_COUNTERS_PHASES)
    # Δ: near-far only.
    assert (p.delta is not None) is nearfar and (p.delta_bits != 0) is nearfar
    assert p.device_bytes == sum(max(b.nbytes, MIN_ALLOC_BYTES) for b in p.buffers)


# -- the checks before and after the device -----------------------------------------------------
def test_requests_engine_2_rejects():
    with pytest.raises(AssertionError):  # the request's check (sssp.request)
        plan(variant="both")
    with pytest.raises(InvalidGraphError, match="the graph has no nodes"):
        plan(graph=GraphFacts(0, 0, 0, "int32", np.zeros(0, np.int64)))
    with pytest.raises(InvalidGraphError, match="loop 'legacy' runs on sssp.gpu.runtime"):
        plan(loop="legacy")
    with pytest.raises(BackendUnavailableError, match="'dijkstra' has no GPU version"):
        plan(algorithm="dijkstra")
    # The loop is checked before the algorithm is looked up, as the engine always did.
    with pytest.raises(InvalidGraphError, match="near-far only, not 'dijkstra'"):
        plan(algorithm="dijkstra", loop="cluster")
    with pytest.raises(AssertionError):  # the request's check
        plan(delta=4)
    too_wide = GraphFacts(10, 10, 2**62, "int64", np.ones(10, np.int64))
    with pytest.raises(InvalidGraphError, match="do not fit in 64 bits"):
        plan(graph=too_wide)


def test_graph_facts_must_agree_with_their_degrees():
    with pytest.raises(ValueError, match="degrees"):
        GraphFacts(3, 5, 1, "int32", np.array([1, 1, 1]))


# -- near-far's Δ -------------------------------------------------------------------------------
def test_default_delta_from_the_facts_is_the_cpu_rule():
    ints = sssp.generate("random", size=2000, degree=4, seed=3)
    reals = sssp.Graph(ints.indptr, ints.indices, np.linspace(0.1, 9.0, ints.m))
    for graph in (ints, reals):
        p = plan_engine(GraphFacts.of(graph), None, "near-far", "successors", None, H200)
        assert p.delta == default_delta(graph)
        assert p.delta_bits == kernels.nearfar_delta_bits(p.delta, graph.is_float)


def test_explicit_delta_is_rounded():
    assert plan(algorithm="near-far", delta=2.5).delta == 3  # integer weights: rounded up
    p = plan("f64", algorithm="near-far", delta=2.5)
    assert p.delta == 2.5
    assert p.delta_bits == struct.unpack("<Q", struct.pack("<d", 2.5))[0]
    assert plan(algorithm="near-far", delta=10**30).delta == kernels.UNREACHABLE_INT64  # capped
    with pytest.raises(ValueError, match="weight_sum"):
        no_sum = GraphFacts(4, 4, 1, "int32", np.ones(4, np.int64))
        plan(algorithm="near-far", graph=no_sum)


# -- the cluster loop ---------------------------------------------------------------------------
def test_cluster_layout_from_the_facts():
    p = plan(loop="cluster", algorithm="near-far")
    assert (p.cluster, p.cluster_mb, p.cluster_lq) == (1, 2 * N, 0)  # graph resident in one block
    assert p.nb == kernels.cluster_slots(N, 1) == 1024
    assert p.local_smem == kernels.cluster_smem_bytes(N, 1, mb=2 * N)
    assert p.local_limit == p.local_cap == 0 and p.placement is None
    # At least the configuration's cluster size: four blocks of 250 nodes, 500 edges each.
    p4 = plan(loop="cluster", algorithm="near-far", config=LaunchConfig(loop="cluster", cluster=4))
    assert (p4.cluster, p4.cluster_mb) == (4, 500) and p4.params.cluster == 4
    assert p4.grid_blocks("tree", 0) == -(-N * kernels.CLUSTER_LANES // 256)


def test_cluster_fallbacks_and_their_reasons():
    old = plan(loop="cluster", algorithm="near-far", device=A100)
    assert old.loop == "persistent" and old.cluster == 0
    assert old.cluster_fallback == "thread-block clusters need sm_90 or newer (sm_80)"
    assert old.kernel_set_name == "nearfar" and old.buffer("d_qF") is not None
    # A million nodes: their distances alone pass 16 blocks' shared memory.
    big = facts("u32", n=10**6, degree=0)
    p = plan(loop="cluster", algorithm="near-far", graph=big)
    assert p.loop == "persistent"
    assert p.cluster_fallback == (
        "1000000 nodes and 0 edges do not fit in the shared memory of 16 blocks of 232448 bytes"
    )
    assert p.buffer("d_pushed") is not None and p.buffer("d_infar") is not None
    portable = DeviceFacts((9, 0), 132, 232448, 233472, non_portable_clusters=False)
    p8 = plan(loop="cluster", algorithm="near-far", graph=big, device=portable)
    assert p8.cluster_fallback.endswith("of 8 blocks of 232448 bytes")


def test_fused_cluster_loop_asks_the_graph_for_its_bands_only_when_it_can_run():
    order = np.arange(N)[::-1].copy()
    asked = []

    def bands(fused: bool):
        def get() -> Bands:
            asked.append(fused)
            return Bands(order, lambda blocks: (fused, f"gate at {blocks} blocks"))

        return get

    fuse = LaunchConfig(loop="cluster", fuse=True)
    p = plan(algorithm="near-far", config=fuse, bands=bands(True))
    assert p.cluster_lq == kernels.CLUSTER_LOCAL_QUEUE and p.fusion_detail == "gate at 1 blocks"
    place, slots = p.placement
    assert np.array_equal(place, kernels.cluster_placement(order, p.cluster)[0])
    assert size(p, "d_place") == 4 * N and size(p, "d_slots") == 4 * p.cluster * p.nb
    assert p.local_smem == kernels.cluster_smem_bytes(
        N, p.cluster, mb=p.cluster_mb, lq=kernels.CLUSTER_LOCAL_QUEUE
    )
    gated = plan(algorithm="near-far", config=fuse, bands=bands(False))
    assert gated.loop == "cluster" and gated.cluster_lq == 0 and gated.placement is None
    assert gated.fusion_detail == "gate at 1 blocks" and gated.buffer("d_place") is None
    assert asked == [True, False]
    plan(algorithm="near-far", config=fuse, bands=bands(True), device=A100)  # falls back first
    plan("u64", algorithm="near-far", config=fuse, bands=bands(True))
    assert asked == [True, False]
    with pytest.raises(ValueError, match="bands"):
        plan(algorithm="near-far", config=fuse)


def test_fused_across_blocks_keeps_its_queues_without_bands():
    """fuse=2 (local work across blocks): in bands where the gate allows, else with the nodes
    spread v % C, and its queues in both cases; fuse=1 keeps its spread flag off."""
    order = np.arange(N)[::-1].copy()

    def bands(ok: bool):
        return lambda: Bands(
            order,
            lambda c: (
                ok,
                f"band locality x at {c} blocks: fused"
                if ok
                else f"band locality x at {c} blocks: ran unfused",
            ),
        )

    across = LaunchConfig(loop="cluster", fuse=2)
    budget = H200.smem_per_block_optin - kernels.CLUSTER_STATIC_SMEM
    p = plan(algorithm="near-far", config=across, bands=bands(True))
    # A step runs a bucket: the queue takes all the shared memory the layout leaves.
    room = kernels.cluster_queue_room(
        N, p.cluster, p.cluster_mb, kernels.CLUSTER_LOCAL_QUEUE, budget
    )
    assert p.cluster_spread and p.cluster_lq == room > kernels.CLUSTER_LOCAL_QUEUE
    assert 0 <= budget - p.local_smem < kernels.CLUSTER_QUEUE_ENTRY_BYTES
    assert p.placement is not None and p.fusion_detail.endswith("in bands, fused across blocks")
    q = plan(algorithm="near-far", config=across, bands=bands(False))
    assert q.cluster_spread and q.cluster_lq > kernels.CLUSTER_LOCAL_QUEUE and q.placement is None
    assert q.fusion_detail.endswith("nodes spread v % C, fused across blocks")
    assert q.local_smem == kernels.cluster_smem_bytes(
        N, q.cluster, mb=q.cluster_mb, lq=q.cluster_lq
    )
    assert 0 <= budget - q.local_smem < kernels.CLUSTER_QUEUE_ENTRY_BYTES
    # A graph whose distances fill the blocks: the queue takes what is left, never less than
    # the per-block queue's capacity.
    road = np.full(435_000, 2)
    c, mb = kernels.cluster_layout(road, budget, lq=kernels.CLUSTER_LOCAL_QUEUE)
    room = kernels.cluster_queue_room(road.size, c, mb, kernels.CLUSTER_LOCAL_QUEUE, budget)
    assert kernels.CLUSTER_LOCAL_QUEUE <= room < kernels.CLUSTER_MAX_QUEUE
    assert kernels.cluster_smem_bytes(road.size, c, mb=mb, lq=room) <= budget
    assert kernels.cluster_smem_bytes(road.size, c, mb=mb, lq=room + 1) > budget
    assert kernels.cluster_queue_room(road.size, c, mb, 10**6, budget) == 10**6  # never shrinks
    one = plan(algorithm="near-far", config=LaunchConfig(loop="cluster", fuse=1), bands=bands(True))
    assert not one.cluster_spread and one.cluster_lq > 0
    grid = plan(loop="persistent", algorithm="near-far")
    assert not grid.cluster_spread
    # The batch kernel follows: bands where the gate allows, else v % C, queues in both.
    small = facts("u32")
    b = plan_batch(p, small, H200, bands=bands(True))
    assert b.spread and b.placement is not None and "across blocks" in b.detail
    b = plan_batch(p, small, H200, bands=bands(False))
    assert b.spread and b.lq == kernels.CLUSTER_LOCAL_QUEUE and b.placement is None
    assert not plan_batch(one, small, H200, bands=bands(True)).spread


def test_fused_across_blocks_runs_across_the_grid_where_no_cluster_holds_the_graph():
    """fuse=2 on a graph whose distances pass a cluster's shared memory (or on a device without
    clusters): near-far across the grid (sssp_nf_async, a barrier per bucket) with its queued
    bits; 64-bit distances and the other fusion levels keep the step loop."""

    def bands(n: int):
        return lambda: Bands(np.arange(n), lambda c: (True, f"band locality 1 at {c}: fused"))

    across = LaunchConfig(loop="cluster", fuse=2)
    big = facts("u32", n=10**6, degree=2)
    p = plan(algorithm="near-far", config=across, graph=big, bands=bands(10**6))
    assert p.loop == "persistent" and p.grid_async and p.cluster == 0
    assert p.cluster_fallback.startswith("1000000 nodes")
    assert size(p, "d_qbits") == 4 * kernels.nearfar_flag_words(10**6)
    assert size(p, "d_async") == 4 * kernels.async_words(132 * kernels.ASYNC_MAX_BLOCKS_PER_SM)
    assert size(p, "d_qF") == 8 * 10**6  # the queue: n 64-bit entries
    assert "async" in p.kernel_set and p.kernel_configs["async"] == across.relax
    old = plan(algorithm="near-far", config=across, device=A100, bands=bands(N))
    assert old.grid_async and old.cluster == 0
    fused = LaunchConfig(loop="cluster", fuse=1)
    for other in (
        plan(algorithm="near-far", config=fused, graph=big, bands=bands(10**6)),
        plan(loop="cluster", algorithm="near-far", graph=big),
        plan("u64", algorithm="near-far", config=across, bands=bands(N)),
    ):
        assert other.loop == "persistent" and not other.grid_async
        assert other.buffer("d_qbits") is None and other.buffer("d_async") is None
    small = plan(algorithm="near-far", config=across, bands=bands(N))
    assert small.loop == "cluster" and not small.grid_async


def test_fused_plan_on_a_real_graph():
    graph = sssp.generate("grid", size=4096, seed=2)
    cfg = LaunchConfig(loop="cluster", fuse=True)
    p = plan_engine(
        GraphFacts.of(graph),
        cfg,
        "near-far",
        "successors",
        None,
        H200,
        bands=lambda: graph_bands(graph),
    )
    assert p.loop == "cluster" and p.fusion_detail.startswith("band locality")
    assert (p.cluster_lq > 0) is p.fusion_detail.endswith(": fused")


# -- the wide loop ------------------------------------------------------------------------------
def test_batch_plan_takes_the_fewest_blocks_that_hold_the_distances():
    """The batch kernel (many sources a launch) runs near-far on whatever loop the single solves
    take, on the fewest blocks whose shared memory holds the distances, the graph too where it
    fits at that size."""
    budget = H200.smem_per_block_optin - kernels.CLUSTER_STATIC_SMEM
    small = facts("u32")
    for loop in ("persistent", "cluster", "wide", "phast"):
        p = plan(loop=loop, algorithm="near-far", graph=small)
        b = plan_batch(p, small, H200)
        assert (b.cluster, b.mb, b.lq, b.placement) == (1, 2 * N, 0, None), loop
        assert b.params == kernels.EngineParams(
            32, 32, False, "out", kernels.CLUSTER_LANES, False, 1, True
        )
        assert b.params.key.endswith("-c1-many") and "-DSSSP_NF_MANY=1" in b.params.nvcc_flags()
        assert b.smem == kernels.cluster_smem_bytes(N, 1, mb=2 * N) <= budget
        assert b.delta_bits == p.delta_bits and b.limit == kernels.nearfar_step_limit(N)
        assert b.block == 1024 and "1 block(s) of 1024 threads" in b.detail
    # 30 000 nodes: one block holds their distances (not the edges); 40 000 need two.
    for n, want in ((30_000, (1, 0)), (40_000, (2, 0))):
        f = facts("u32", n=n, degree=8)
        b = plan_batch(plan(algorithm="near-far", graph=f), f, H200)
        assert (b.cluster, b.mb) == want, n
        assert kernels.cluster_smem_bytes(n, b.cluster) <= budget
        if b.cluster > 1:
            assert kernels.cluster_smem_bytes(n, b.cluster // 2) > budget
    # Asked for a size: exactly that one, the graph in shared memory where it fits.
    b4 = plan_batch(plan(algorithm="near-far"), small, H200, cluster=4, block=256)
    assert (b4.cluster, b4.mb, b4.block, b4.nb) == (4, 500, 256, kernels.cluster_slots(N, 4))


def test_batch_plan_reasons_and_bad_options():
    small = facts("u32")
    assert plan_batch(plan(algorithm="crauser"), small, H200) == (
        "the batch kernel runs near-far, not crauser"
    )
    wide = facts("u64")
    assert plan_batch(plan("u64", algorithm="near-far", graph=wide), wide, H200) == (
        "the batch kernel keeps 32-bit integer distances"
    )
    p = plan(algorithm="near-far")
    assert plan_batch(p, small, A100) == "thread-block clusters need sm_90 or newer (sm_80)"
    big = facts("u32", n=10**6, degree=0)
    assert plan_batch(plan(algorithm="near-far", graph=big), big, H200) == (
        "1000000 nodes do not fit in the shared memory of 16 blocks of 232448 bytes"
    )
    portable = DeviceFacts((9, 0), 132, 232448, 233472, non_portable_clusters=False)
    why = plan_batch(plan(algorithm="near-far", graph=big), big, portable)
    assert why.endswith("of 8 blocks of 232448 bytes")
    with pytest.raises(ValueError, match="batch cluster 3"):
        plan_batch(p, small, H200, cluster=3)
    for block in (16, 100, 2048):
        with pytest.raises(ValueError, match=f"batch block {block}"):
            plan_batch(p, small, H200, block=block)


def test_batch_plan_fuses_where_the_gate_allows():
    order = np.arange(N)[::-1].copy()
    fuse = LaunchConfig(loop="cluster", fuse=True)
    p = plan(algorithm="near-far", config=fuse, bands=lambda: Bands(order, lambda c: (True, "")))
    small = facts("u32")
    calls = []

    def bands(ok: bool):
        def get() -> Bands:
            calls.append(ok)
            return Bands(order, lambda c: (ok, f"gate at {c}"))

        return get

    b = plan_batch(p, small, H200, bands=bands(True))
    assert b.lq == kernels.CLUSTER_LOCAL_QUEUE and b.cluster == 1
    assert np.array_equal(b.placement[0], kernels.cluster_placement(order, 1)[0])
    assert b.smem == kernels.cluster_smem_bytes(N, 1, mb=b.mb, lq=kernels.CLUSTER_LOCAL_QUEUE)
    assert "local work" in b.detail
    nb = plan_batch(p, small, H200, bands=bands(False))
    assert nb.lq == 0 and nb.placement is None
    # A configuration that does not ask for fusion never asks for the bands.
    plain = plan_batch(plan(algorithm="near-far"), small, H200, bands=bands(True))
    assert plain.lq == 0 and calls == [True, False]


def test_wide_loop_buffers_and_params():
    deg = np.full(N, 2, np.int64)
    deg[:3] = (300, 3000, 2)  # two hubs past 256 edges: 1 and 3 chunks of 1024
    g = facts("u32", degrees=deg)
    p = plan(loop="wide", algorithm="near-far", graph=g)
    assert p.wide == kernels.WideParams()
    assert size(p, "d_hubs") == 16 * 4 and size(p, "d_w") == 4 * kernels.WIDE_WORDS
    small = kernels.WideParams(hub_degree=1024, chunk=4096)
    q = plan(loop="wide", algorithm="near-far", graph=g, wide=small)
    assert q.wide == small and size(q, "d_hubs") == 16 * 1
    assert hub_entries(np.array([3, 2])) == 1  # never an empty allocation
    assert p.split_rows and size(p, "d_light") == 4 * N  # the split is the default


def test_the_split_partitions_rows_only_below_an_infinite_delta():
    """The light/heavy split keeps a count of light edges per row (its rows are partitioned at
    set-up); with Δ at infinity every edge is light, and there is nothing to partition."""
    g = facts("u32")
    split = kernels.WideParams(split=True)
    p = plan(loop="wide", algorithm="near-far", graph=g, wide=split, delta=40)
    assert p.split_rows and size(p, "d_light") == 4 * N
    assert p.buffers[-1].name == "d_light" and p.buffers[-1].fill == "none"
    for delta in (float("inf"), 2**32):
        q = plan(loop="wide", algorithm="near-far", graph=g, wide=split, delta=delta)
        assert not q.split_rows and size(q, "d_light") is None, delta
    other = plan(loop="persistent", algorithm="near-far", graph=g, wide=split, delta=40)
    assert not other.split_rows and other.wide is None
    whole = plan(loop="wide", algorithm="near-far", graph=g, wide=replace(split, split=False))
    assert not whole.split_rows and size(whole, "d_light") is None


# -- shared memory, launch counts and the result pass -------------------------------------------
def test_local_queues_and_persistent_blocks():
    p = plan()
    assert p.local_limit == 8 * 256
    assert p.local_cap == kernels.local_queue_capacity(2048)
    assert p.local_smem == kernels.local_queue_bytes(p.local_cap, 4)
    assert plan("u64").local_smem == kernels.local_queue_bytes(p.local_cap, 8)
    assert plan(variant="predecessors").local_limit == 0
    nf = plan(algorithm="near-far")
    assert nf.local_limit == 2048 and nf.local_cap == 0 and nf.local_smem == 0
    assert plan(config=LaunchConfig(local_limit=0)).local_smem == 0
    assert p.degree == 2
    with pytest.raises(InvalidGraphError, match="does not fit at 256 threads per block"):
        p.persistent_per_sm(0)
    assert p.persistent_per_sm(5) == 2  # the configuration's blocks_per_sm
    assert plan(config=LaunchConfig(blocks_per_sm=0)).persistent_per_sm(5) == 5
    need = 2 * (100 + p.local_smem + 1024)
    assert p.persistent_carveout(2, 100) == ("PREFER_NONE", -(-100 * need // H200.smem_per_sm))
    shared = LaunchConfig(relax=KernelConfig(256, "S"))
    assert plan(config=shared).persistent_carveout(2, 100) == ("PREFER_SHARED", 100)


def test_grid_blocks_follow_the_contract():
    lanes = LaunchConfig(relax=KernelConfig(128, "N", lanes=4))
    p = plan(config=lanes)
    assert p.grid_blocks("relax", 8) == min(-(-N * 4 // 128), 132 * 8)
    assert p.grid_blocks("tree", 8) == -(-N * 4 // 128)  # not strided: not capped
    assert p.grid_blocks("sort", 1) == min(N, 132)
    assert p.kernel_configs["sort"] == KernelConfig(kernels.SORT_BLOCK, "N")
    assert p.kernel_configs["init"] == KernelConfig(128, "N")


def test_result_pass_and_host_mapping():
    p = plan()
    assert p.mapped and p.result_grid == (
        (kernels.result_blocks(N, 132), 1, 1),
        (kernels.RESULT_BLOCK, 1, 1),
    )
    assert size(p, "d_result_scratch") == 8 * kernels.RESULT_SCRATCH_WORDS
    assert p.buffer("d_result_scratch").fill == "zero"
    unmapped = DeviceFacts((9, 0), 132, 232448, 233472, can_map_host=False)
    for q in (
        plan(device=unmapped),
        plan(host_mapped=False),
        plan(device=unmapped, host_mapped=True),
    ):
        assert not q.mapped
        assert (size(q, "d_out_dist"), size(q, "d_out_pred")) == (8 * N, 4 * N)
        assert size(q, "d_info") == 4 * kernels.RESULT_WORDS
        assert q.device_bytes == p.device_bytes + 12 * N + 4 * kernels.RESULT_WORDS


def test_empty_arrays_still_get_an_allocation():
    g = GraphFacts(5, 0, 0, "int32", np.zeros(5, np.int64))
    p = plan(graph=g)
    assert size(p, "d_indices") == 0 and p.buffer("d_indices").alloc_bytes == MIN_ALLOC_BYTES
    assert not p.sort_rows and p.degree == 1


def test_plan_from_a_real_graph_matches_its_arrays():
    graph = sssp.generate("random", size=3000, degree=5, seed=7)
    p = plan_engine(GraphFacts.of(graph), None, "crauser-inout", "predecessors", None, H200)
    rev = graph.reverse()
    assert size(p, "d_indptr") == rev.indptr.astype(np.int64).nbytes
    assert size(p, "d_indices") == rev.indices.astype(np.int32).nbytes
    assert size(p, "d_weights") == graph.m * np.dtype(p.dtypes[2]).itemsize


# -- imports ------------------------------------------------------------------------------------
def test_plan_imports_without_any_cuda_binding():
    code = (
        "import sys, numpy as np\n"
        "from sssp.gpu.plan import DeviceFacts, GraphFacts, plan_engine\n"
        "f = GraphFacts(4, 4, 3, 'int32', np.ones(4, np.int64), 6.0)\n"
        "p = plan_engine(f, None, 'near-far', 'successors', None, DeviceFacts((9, 0), 1, 1 << 17, 1 << 17))\n"
        "assert p.loop == 'persistent'\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pycuda', 'cuda', 'kernel_tuner')\n"
        "             or m in ('sssp.gpu.engine', 'sssp.gpu.runtime', 'sssp.gpu.cudagraph'))\n"
        "print('LOADED:' + ','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "LOADED:\n" in out.stdout, out.stdout


def _gpu_imports() -> dict[str, set[str]]:
    """sssp.gpu module -> the sssp.gpu modules it imports at run time (module level or in a
    function; imports under ``if TYPE_CHECKING:`` are annotations only)."""
    root = Path(sssp.__file__).parent / "gpu"
    graph: dict[str, set[str]] = {}
    for path in sorted(root.glob("*.py")):
        name = path.stem
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for stmt in block.body
            for node in ast.walk(stmt)
        }
        found = set()
        for node in ast.walk(tree):
            if id(node) in typing_only or not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1:
                found |= {alias.name for alias in node.names}
            elif node.module and node.module.startswith("sssp.gpu."):
                found.add(node.module.split(".")[2])
        graph[name] = found - {name}
    return graph


def test_the_gpu_layer_has_no_import_cycle():
    graph = _gpu_imports()
    assert "plan" in graph and not graph["plan"], graph["plan"]  # the plan imports no sibling
    for low in ("runtime", "cudagraph", "wide", "base"):
        assert "engine" not in graph[low] and "factory" not in graph[low], (low, graph[low])
    assert "runtime" not in graph["engine"]
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, "import cycle: " + " -> ".join((*path, node))
        if node in done:
            return
        for nxt in graph.get(node, ()):
            visit(nxt, (*path, node))
        done.add(node)

    for module in graph:
        if module != "__init__":  # the package's lazy attributes point down into it
            visit(module, ())


def test_make_solver_stays_at_the_package():
    import sssp.gpu
    from sssp.gpu.factory import make_solver

    assert sssp.gpu.make_solver is make_solver


# -- the executor follows its plan (a stand-in driver, no GPU) ----------------------------------
class _Names:
    """An enum stand-in: every attribute is its own name."""

    def __getattr__(self, name: str) -> str:
        return name

    def __call__(self, value: int) -> str:
        return f"#{value}"


class _Func:
    def __init__(self, name: str) -> None:
        self.name, self.attrs, self.calls = name, {"NUM_REGS": 32, "SHARED_SIZE_BYTES": 128}, []

    def prepare(self, fmt: str) -> None:
        self.fmt = fmt

    def set_cache_config(self, pref: str) -> None:
        self.pref = pref

    def set_attribute(self, attr: str, value: int) -> None:
        self.attrs[attr] = value

    def get_attribute(self, attr: str) -> int:
        return self.attrs.get(attr, 0)

    def prepared_call(self, *args, **kw) -> None:
        self.calls.append(args)

    prepared_async_call = prepared_call


class _Buf(int):
    freed: list[int]

    def free(self) -> None:
        self.freed.append(int(self))


class _Driver:
    """What :class:`sssp.gpu.engine.EngineSolver` calls of ``pycuda.driver``, recorded."""

    device_attribute = function_attribute = func_cache = host_alloc_flags = _Names()
    DEVICE = {
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448,
        "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 233472,
        "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536,
        "MAX_THREADS_PER_MULTIPROCESSOR": 2048,
        "MAX_BLOCKS_PER_MULTIPROCESSOR": 32,
        "CAN_MAP_HOST_MEMORY": 0,  # the pool then takes plain page-locked blocks
        "UNIFIED_ADDRESSING": 1,
    }

    def __init__(self) -> None:
        self.allocs: list[int] = []
        self.uploads: list[int] = []
        self.copies: list[int] = []  # device-to-device bytes
        self.freed: list[int] = []
        self.functions: dict[str, _Func] = {}
        self.Context = SimpleNamespace(synchronize=lambda: None)

    def Device(self, ordinal: int):  # noqa: N802 - pycuda's name
        return SimpleNamespace(get_attribute=lambda a: self.DEVICE[a])

    def mem_alloc(self, nbytes: int) -> _Buf:
        self.allocs.append(nbytes)
        buf = _Buf(0x1000 * len(self.allocs))
        buf.freed = self.freed
        return buf

    def memcpy_htod(self, buf, array) -> None:
        self.uploads.append(array.nbytes)

    def memset_d8(self, buf, byte, nbytes) -> None:
        pass

    def memset_d32_async(self, buf, word, count, stream=None) -> None:
        pass

    def memcpy_dtod(self, dst, src, nbytes) -> None:
        self.copies.append(nbytes)

    def pagelocked_empty(self, n, dtype, mem_flags=None):
        return np.empty(n, dtype)

    def pagelocked_zeros(self, n, dtype, mem_flags=None):
        return np.zeros(n, dtype)

    def module_from_buffer(self, cubin):
        def get_function(name: str) -> _Func:
            return self.functions.setdefault(name, _Func(name))

        return SimpleNamespace(get_function=get_function)

    def Stream(self):  # noqa: N802
        return SimpleNamespace(handle=0)

    def Event(self):  # noqa: N802
        return SimpleNamespace(
            record=lambda stream=None: None,
            synchronize=lambda: None,
            time_since=lambda other: 0.25,  # ms
        )

    def memcpy_htod_async(self, buf, array, stream=None) -> None:
        pass

    def memcpy_dtoh_async(self, array, buf, stream=None) -> None:
        pass


@pytest.fixture
def fake_driver(monkeypatch):
    import sssp.gpu.base
    import sssp.gpu.batch
    import sssp.gpu.cudagraph
    import sssp.gpu.engine
    import sssp.gpu.wide
    from sssp.gpu.device import DeviceInfo

    drv = _Driver()
    info = DeviceInfo(0, "stand-in H200", "GPU-0", (9, 0), 132, 1 << 37, "0", "13.0", "0:0")
    for module in (sssp.gpu.engine, sssp.gpu.base):
        monkeypatch.setattr(module, "driver", lambda: drv)
    monkeypatch.setattr(sssp.gpu.engine, "activate", lambda ordinal: None)
    monkeypatch.setattr(sssp.gpu.engine, "device_info", lambda ordinal: info)
    for module in (sssp.gpu.engine, sssp.gpu.wide, sssp.gpu.cudagraph, sssp.gpu.batch):
        monkeypatch.setattr(module, "compile_cubin", lambda params, arch: b"")
    monkeypatch.setattr(sssp.gpu.cudagraph, "occupancy", lambda *a: None)
    monkeypatch.setattr(
        sssp.gpu.cudagraph, "PhaseGraph", lambda solver: SimpleNamespace(close=lambda: None)
    )
    return drv


@pytest.mark.parametrize(
    ("loop", "algorithm", "variant", "weights"),
    [
        ("persistent", "crauser", "successors", "int"),
        ("graph", "crauser-inout", "predecessors", "int"),
        ("host", "martin", "successors", "float"),
        ("persistent", "near-far", "successors", "float"),
        ("cluster", "near-far", "successors", "int"),
        ("cluster", "near-far", "successors", "float"),  # falls back to persistent
        ("wide", "near-far", "successors", "int"),
        ("wide", "near-far", "successors", "float"),  # falls back to persistent
    ],
)
def test_engine_solver_executes_its_plan(fake_driver, loop, algorithm, variant, weights):
    from sssp.gpu.engine import EngineSolver

    graph = sssp.generate("random", size=3000, degree=4, seed=5)
    if weights == "float":
        graph = sssp.Graph(graph.indptr, graph.indices, graph.weights.astype(np.float64) / 3)
    with EngineSolver(
        graph, algorithm=algorithm, variant=variant, config=LaunchConfig(loop=loop)
    ) as solver:
        p = solver.plan
        assert p == plan_engine(
            GraphFacts.of(graph), LaunchConfig(loop=loop), algorithm, variant, None, H200,
            host_mapped=False,
        )  # fmt: skip
        # The wide loop's split partitions the rows once, through two scratch buffers.
        scratch = [4 * p.m, 4 * p.m] if p.split_rows else []
        assert fake_driver.allocs == [b.alloc_bytes for b in p.buffers] + scratch
        assert fake_driver.copies == scratch and len(fake_driver.freed) == len(scratch)
        partition = fake_driver.functions.get("sssp_w_partition")
        assert (len(partition.calls) if partition else 0) == int(p.split_rows)
        assert fake_driver.uploads == [
            b.nbytes for b in p.buffers if b.fill == "upload" and b.nbytes
        ]
        assert solver.memory_bytes() == p.device_bytes
        for name in BUFFER_NAMES:
            assert (getattr(solver, name) is None) == (p.buffer(name) is None), name
        assert list(solver.ctrl0) == list(p.ctrl0) and solver.rows_sorted is p.sort_rows
        assert (solver.loop, solver.cluster, solver.params, solver.delta) == (
            p.loop, p.cluster, p.params, p.delta,
        )  # fmt: skip
        assert solver._lane0.d_key is solver.d_key and not solver.mapped
        assert (solver._wide is not None) is (p.loop == "wide")
        assert set(solver._shapes) == set(p.kernel_set)
        stats = solver._static_stats()
        assert stats["loop"] == p.loop and stats["memory_bytes"] == p.device_bytes
        assert stats.get("cluster_fallback", "") == p.cluster_fallback
        assert stats.get("loop_fallback", "") == p.loop_fallback
        if p.loop == "cluster":
            assert stats["cluster_blocks"] == p.cluster and stats["cluster_resident"]
        if p.sort_rows:
            assert fake_driver.functions["sssp_e_sort_rows"].calls  # sorted once at set-up
        # The first results' blocks are free in the pool: one slab per array kind, as many as
        # SLAB_BYTES holds (a 3000-node graph: hundreds), within held_results; beside them the
        # solver's own block of each kind (the spare), made with them.
        free = {size: len(blocks) for size, blocks in solver._host._free.items()}
        item = solver._dist_dtype.itemsize
        for size in (3000 * item, 3000 * 4):
            want = min(solver.held_results, max(solver.HELD_RESULTS_MIN, solver.SLAB_BYTES // size))
            assert free[size] == want > solver.HELD_RESULTS_MIN, (size, free)
            assert solver._host._live[size] == want + 1, size
        assert {k: a.nbytes for k, (a, _) in solver._spares.items()} == {
            solver._dist_dtype.name: 3000 * item,
            "int32": 3000 * 4,
        }


@pytest.mark.parametrize(
    ("loop", "algorithm"),
    [
        ("persistent", "crauser"),
        ("graph", "crauser"),
        ("host", "martin"),
        ("cluster", "near-far"),
        ("wide", "near-far"),
    ],
)
def test_a_closed_solver_is_freed_without_the_cycle_collector(fake_driver, loop, algorithm):
    """After ``close()`` nothing holds the solver in a reference cycle (the batch kernel and
    the wide loop hold it while it is open): dropping it frees it, with its modules, streams
    and events, at once in the caller's thread. Freed by a collector run in another thread,
    pycuda cannot release them there (it warns and leaks them). A closed solver refuses to
    solve."""
    import gc
    import weakref

    from sssp.errors import SolverError
    from sssp.gpu.engine import EngineSolver

    graph = sssp.generate("random", size=3000, degree=4, seed=5)
    gc.disable()
    try:
        solver = EngineSolver(graph, algorithm=algorithm, config=LaunchConfig(loop=loop))
        assert solver.loop == loop
        if loop == "cluster":
            assert solver.batch() is not None  # made: it holds the solver
        solver.close()
        with pytest.raises(SolverError, match="closed"):
            solver.solve(0)
        with pytest.raises(SolverError, match="closed"):
            solver.solve_rows(np.array([0]), np.empty((1, graph.n), np.int64))
        alive = weakref.ref(solver)
        del solver
        assert alive() is None
    finally:
        gc.enable()


def test_a_solve_hands_over_statistics_that_do_not_hold_the_solver(fake_driver):
    """The statistics are decoded from a copy of the summary words when first read, and the
    result keeps no reference to the solver (its device memory is not held by a result)."""
    import gc
    import weakref

    import kernels
    from sssp.gpu.engine import EngineSolver
    from sssp.result import LazyStats

    graph = sssp.generate("random", size=3000, degree=4, seed=5)
    solver = EngineSolver(graph, algorithm="near-far", config=LaunchConfig(loop="cluster"))
    info = solver.h_info  # what the result pass would write: done after 7 steps, 1234 reached
    info[:] = 0
    info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
    info[kernels.RES_CTRL + kernels.CTRL_PHASE] = 8
    solver._info64[kernels.RES_REACHED // 2] = 1234
    res = solver.solve(3)
    assert isinstance(res.stats, LazyStats) and res.iterations == 7
    info[:] = 0  # the next solve's words: the result's statistics are its own
    alive = weakref.ref(solver)
    solver.close()
    del solver
    gc.collect()
    assert alive() is None
    assert res.stats["reached"] == 1234 and res.stats["loop"] == "cluster"
    assert res.stats["phase_us"] == pytest.approx(1e3 * 0.25 / 7)


@pytest.mark.parametrize("loop", ["cluster", "persistent", "wide"])
def test_a_solve_takes_its_result_blocks_while_the_device_works(fake_driver, loop):
    """The host work before a solve's first command is only the checks: the result's blocks
    (and a poisoned fill) are taken after the solve is queued, before the result pass that
    writes them."""
    import kernels
    from sssp.gpu.engine import EngineSolver

    graph = sssp.generate("random", size=3000, degree=4, seed=5)
    solver = EngineSolver(graph, algorithm="near-far", config=LaunchConfig(loop=loop))
    solver.h_info[:] = 0
    solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
    solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = 4
    log: list[str] = []
    for func in fake_driver.functions.values():
        calls = func.calls
        func.prepared_async_call = lambda *a, _n=func.name, _c=calls, **k: (
            log.append(_n),
            _c.append(a),
        )
    take = solver._host.take
    solver._host.take = lambda *a, **k: (log.append("take"), take(*a, **k))[1]
    res = solver.solve(3)
    assert res.pred is not None and log.count("take") == 2
    first_take = log.index("take")
    result_pass = log.index(solver._result_func.name)
    assert 0 < first_take < result_pass and "take" not in log[result_pass:]
    assert log[first_take - 1] != "take"  # the solve's own commands came first
    solver.close()


def test_the_pool_grows_only_the_kind_a_held_result_lacks(fake_driver, monkeypatch):
    """A slab holds twice as many tree blocks as distance blocks; once the distance blocks are
    all held, a solve whose device time covers one distance block's allocation (not both kinds')
    grows that kind, so the next held results are still written in place, not copied."""
    import kernels
    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.hostmem import _Lease

    n = 3000
    monkeypatch.setattr(EngineSolver, "SLAB_BYTES", 6 * n * 8)  # 6 distance, 12 tree blocks
    monkeypatch.setattr(EngineSolver, "PIN_SECONDS", (0.2e-3, 0.0))  # the stand-in: 0.25 ms
    graph = sssp.generate("random", size=n, degree=4, seed=5)
    solver = EngineSolver(graph, algorithm="near-far", config=LaunchConfig(loop="cluster"))
    solver.h_info[:] = 0
    solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
    solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = 4
    pool = solver._host
    assert (pool.free_blocks(n, np.int64), pool.free_blocks(n, np.int32)) == (6, 12)
    held = [solver.solve(s) for s in range(12)]  # the tree blocks last for twelve
    # Each written in place (a lease on a block of the pool), in a block of its own.
    assert all(isinstance(r.dist.base, _Lease) for r in held)
    assert len({r.dist.ctypes.data for r in held}) == 12
    assert pool.free_blocks(n, np.int32) == 0
    # Now both kinds are short and their price (0.4 ms) passes the device time: a copy.
    held.append(solver.solve(12))
    assert not isinstance(held[-1].dist.base, _Lease) and held[-1].dist.base is None
    spares = {a.ctypes.data for a, _ in solver._spares.values()}
    assert held[-1].dist.ctypes.data not in {r.dist.ctypes.data for r in held[:-1]} | spares
    solver.close()


def test_the_wall_clock_stops_after_the_result_is_built(fake_driver, monkeypatch):
    """``timings["wall"]`` covers the result's construction (the caller waits for it too), and
    the host's share is split into before and after the device's work. The result is built
    while the device works (its blocks from the pool), so ``host_after`` holds only the reading
    of the device's words, and the iterations and statistics known after the wait are the
    solve's."""
    import time

    import kernels
    from sssp.gpu.engine import EngineSolver
    from sssp.result import SSSPResult

    graph = sssp.generate("random", size=3000, degree=4, seed=5)
    solver = EngineSolver(graph, algorithm="near-far", config=LaunchConfig(loop="cluster"))
    solver.h_info[:] = 0
    solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
    solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = 4
    build = SSSPResult.assembled

    def slow(**kw):
        time.sleep(0.02)
        return build(**kw)

    monkeypatch.setattr(SSSPResult, "assembled", staticmethod(slow))
    r = solver.solve(3)
    t = r.timings
    assert set(t) == {"gpu", "loop", "host_before", "host_after", "wall", "total"}
    assert t["wall"] == t["total"] >= 0.02 > t["host_after"] >= 0
    assert t["wall"] >= t["host_before"] + t["host_after"] + 0.02
    assert r.iterations == 3 and r.stats["dist_bits"] in (32, 64)
    with pytest.raises(AttributeError):
        r.iterations = 4  # frozen once returned
    solver.close()


def test_the_batch_kernel_follows_the_configuration_and_says_how_rows_run(fake_driver):
    """``batch()`` plans the batch kernel from the configuration's many-source choices (a
    probe's ``batch_options`` over them), loads it once, and ``many_stats`` says which path a
    batch takes and why."""
    from sssp.gpu.engine import EngineSolver

    graph = sssp.generate("random", size=3000, degree=4, seed=5)
    cfg = LaunchConfig(loop="cluster", batch_cluster=4, batch_block=256)
    with EngineSolver(graph, algorithm="near-far", config=cfg) as solver:
        batch = solver.batch()
        assert (batch.plan.cluster, batch.plan.block) == (4, 256) and solver.batch() is batch
        func = fake_driver.functions["sssp_nfc_many"]
        assert func.fmt == kernels.CLUSTER_BATCH_KERNEL.arg_format
        # Resident clusters from threads, registers and shared memory: 32 registers at 256
        # threads, so shared memory decides.
        per_sm = min(8, 233472 // (batch.plan.smem + 128 + 1024))
        assert batch.clusters == 132 * per_sm // 4
        stats = solver.many_stats(False)
        assert stats["lanes"] == batch.clusters and "4 block(s) of 256 threads" in stats["batch"]
        tree = solver.many_stats(True)
        assert tree["batch"] == "a launch per source (predecessors asked for)"
        solver.batch_options = {"cluster": 2}
        solver._batch = None
        assert (solver.batch().plan.cluster, solver.batch().plan.block) == (2, 256)
    with EngineSolver(graph, algorithm="crauser") as crauser:
        assert crauser.batch() is None
        assert crauser.many_stats(False) == {
            "lanes": 1,
            "batch": "a launch per source (the batch kernel runs near-far, not crauser)",
        }


@pytest.mark.parametrize("loop", ["persistent", "cluster"])
def test_a_solver_with_shortcuts_relaxes_the_copy_and_walks_the_graph_in_its_tree(
    fake_driver, loop
):
    """``LaunchConfig.shortcuts``: the plan is the augmented graph's (Δ from the graph's own
    rule), the loops' buffers hold the copy, the graph's own CSR is uploaded beside them, and
    the predecessor pass gets its pointers in place of the copy's; the batch kernel plans for the
    copy's edges. Crauser takes none and says why."""
    from sssp.cpu.nearfar import delta_rule, weight_total
    from sssp.gpu.engine import EngineSolver
    from sssp.shortcuts import with_shortcuts

    graph = sssp.generate("grid", size=3600, seed=5)
    config = LaunchConfig(loop=loop, shortcuts=16)
    facts = GraphFacts.of(graph)
    rho, cap, why = shortcut_choice(facts, config, "near-far")
    assert (rho, why) == (16, "") and cap is not None
    copy = with_shortcuts(graph, rho, max_weight=cap)
    delta = delta_rule(graph.n, graph.m, weight_total(graph), False)
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        p = solver.plan
        assert solver.relax_graph.m == copy.m > 2 * graph.m
        assert p == plan_engine(
            GraphFacts.of(copy), config, "near-far", "successors", delta, H200, host_mapped=False,
            bands=lambda: graph_bands(copy),
        )  # fmt: skip
        own = [graph.indptr.nbytes, graph.m * 4, graph.m * np.dtype(solver.weight_dtype).itemsize]
        assert (
            fake_driver.uploads
            == [b.nbytes for b in p.buffers if b.fill == "upload" and b.nbytes] + own
        )
        assert p.buffer("d_indices").nbytes == copy.m * 4
        stats = solver._static_stats()
        assert stats["shortcuts"]["rho"] == 16 and stats["shortcuts"]["edges"] == copy.m - graph.m
        assert "shortcut_fallback" not in stats and stats["delta"] == delta
        solver.h_info[:] = 0
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = 4
        solver.solve(3)
        tree = fake_driver.functions["sssp_nf_tree"].calls[-1][3:]  # after grid, block, stream
        assert tuple(tree[:3]) == solver._tree_csr and tree[3:] == solver.args()[3:]
        assert solver._tree_csr[0] != solver.d_indptr
        batch = solver.batch()
        if loop == "cluster":
            assert batch is not None
            assert batch.plan == plan_batch(
                p, GraphFacts.of(copy), H200, bands=lambda: graph_bands(copy)
            )
    uploads = len(fake_driver.uploads)
    crauser = LaunchConfig(shortcuts=16)  # the persistent loop (the cluster's is near-far's)
    with EngineSolver(graph, algorithm="crauser", config=crauser) as solver:
        stats = solver._static_stats()
        assert "shortcuts" not in stats and "near-far only" in stats["shortcut_fallback"]
        assert solver.relax_graph is graph and solver._tree_csr is None
    assert len(fake_driver.uploads) - uploads == len(
        [b for b in solver.plan.buffers if b.fill == "upload" and b.nbytes]
    )


def _sweep_like_the_kernel(
    order, level_ptr, down_ptr, down_pos, down_w, seeds, small, top_room, staged=0
):
    """What sssp_ph_sweep computes, from the arrays a solver uploads and the seeds it copies:
    block 0's top levels (every in-edge from a top position; the first ``staged`` of them read
    from the copies the kernel stages: the first ``down_ptr[level_ptr[staged]]`` edges and the
    row offsets of positions ``level_ptr[0]`` to ``level_ptr[staged]``), then a level at a
    time; keys by node (int64, UNREACHABLE for none)."""
    n = order.size
    inf = np.iinfo(down_w.dtype).max
    top = int(level_ptr[small])
    assert top <= top_room
    first, pst = int(level_ptr[0]), int(level_ptr[staged])
    est = int(down_ptr[pst])
    sptr = down_ptr[first : pst + 1].astype(np.int32)  # int, by position less `first`
    spos, sw = down_pos[:est].copy(), down_w[:est].copy()
    pdist = np.full(n, inf, dtype=np.uint64)
    pos, d = seeds
    pdist[pos] = d
    for level in range(level_ptr.size - 1):
        for p in range(level_ptr[level], level_ptr[level + 1]):
            if level < staged:
                b, e = int(sptr[p - first]), int(sptr[p - first + 1])
                assert 0 <= b <= e <= est
                tails, weights = spos[b:e], sw[b:e]
            else:
                b, e = int(down_ptr[p]), int(down_ptr[p + 1])
                assert 0 <= b <= e <= down_pos.size
                tails, weights = down_pos[b:e], down_w[b:e]
            assert np.all(tails < level_ptr[level])  # every tail is on a level swept before
            if level < small:
                assert np.all(tails < top)
            live = pdist[tails] != inf
            cand = pdist[tails][live] + weights[live]
            if cand.size:
                pdist[p] = min(pdist[p], cand.min())
    out = np.full(n, sssp.UNREACHABLE, dtype=np.int64)
    reached = pdist != inf
    out[order[reached]] = pdist[reached].astype(np.int64)
    return out


def _pull_like_the_result_pass(tptr, tsrc, tw, dist):
    """The result pass's predecessors from the reverse CSR (``sssp_res_pull``), a node at a
    time: the smallest tail u of v's incoming edges with d(u) < d(v) and d(u) + w == d(v)."""
    pred = np.full(dist.size, -1, dtype=np.int64)
    for v in range(dist.size):
        if dist[v] == sssp.UNREACHABLE:
            continue
        best = -1
        for e in range(int(tptr[v]), int(tptr[v + 1])):
            u = int(tsrc[e])
            du = dist[u]
            if du != sssp.UNREACHABLE and du < dist[v] and du + int(tw[e]) == dist[v]:
                best = u if best < 0 else min(best, u)
        pred[v] = best
    return pred


def test_a_solver_on_the_phast_loop_uploads_a_hierarchy_and_sweeps_it(fake_driver, monkeypatch):
    """``LaunchConfig(loop="phast")``: no queues or piles; the hierarchy uploaded by sweep
    position after the plan's buffers; a solve queues no init kernel, copies the upward
    search's seeds and launches the sweep with the contract's arguments (a new generation each
    solve), then the result pass, which finds the predecessors from the reverse graph's CSR
    (uploaded before the hierarchy; no tree pass). The arrays and seeds it hands the kernel,
    swept as the kernel sweeps them, give SciPy's distances, and the reverse CSR pulled as the
    result pass pulls it the tree rule's predecessors; past ``PULL_TREE_MAX_MEAN_DEGREE`` edges
    a node the tree pass runs. Real weights run the persistent loop and say why; Crauser is
    refused."""
    from sssp.cpu.reference import dijkstra
    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.phast import PhastSweep

    monkeypatch.setattr(PhastSweep, "stage_edges", False)  # staged: the next test
    monkeypatch.setattr(PhastSweep, "labels", False)  # the host searches
    monkeypatch.setattr(EngineSolver, "RESULT_PASS_TREE", True)
    graph = sssp.generate("road", size=3000, seed=4)
    uploaded: list[np.ndarray] = []
    record = fake_driver.memcpy_htod

    def keep(buf, array) -> None:
        uploaded.append(np.array(array, copy=True))
        record(buf, array)

    fake_driver.memcpy_htod = keep
    config = LaunchConfig(loop="phast")
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        p, ph = solver.plan, solver._phast
        assert ph is not None and p.loop == "phast" and p.kernel_set_name == "phast"
        names = {b.name for b in p.buffers}
        assert not names & {"d_qF", "d_qR", "d_thr", "d_pushed", "d_infar"}
        h = ph.hierarchy
        plan_uploads = len([b for b in p.buffers if b.fill == "upload" and b.nbytes])
        tptr, tsrc, tw, order, level_ptr, down_ptr, down_pos, down_w = uploaded[plan_uploads:]
        np.testing.assert_array_equal(order, h.order)
        rev = graph.reverse()
        np.testing.assert_array_equal(tptr, rev.indptr)
        np.testing.assert_array_equal(tsrc, rev.indices)
        np.testing.assert_array_equal(tw, rev.weights)
        assert solver._static_stats()["tree"] == "result pass"
        assert level_ptr.dtype == np.int32 and level_ptr[-1] == graph.n
        assert down_w.dtype == solver.val_dtype and down_pos.size == h.down_src.size
        stats = solver._static_stats()["phast"]
        assert stats["levels"] == h.levels and stats["top_levels"] == ph.small
        room = (232448 - 128) // np.dtype(solver.val_dtype).itemsize
        assert ph.small == kernels.phast_top_levels(np.diff(h.level_ptr), 4, 232448 - 132, 1024)
        assert ph.staged == 0 and stats["staged_levels"] == 0
        assert ph.smem == kernels.phast_smem_bytes(h.level_ptr, h.down_ptr, ph.small, 0, 4)
        assert "loop=phast" in str(solver.config) and "local<=-1" in str(solver.config)
        solver.h_info[:] = 0
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = h.levels + 1
        for gen, source in enumerate((0, 1234, 2999), start=1):
            solver.solve(source)
            sweep = fake_driver.functions["sssp_ph_sweep"].calls[-1]
            args = sweep[3:]
            assert len(args) == len(kernels.PHAST_ARGS)
            a = dict(zip(kernels.PHAST_ARGS, args, strict=True))
            count = int(a["nseeds"])
            assert (int(a["gen"]), int(a["levels"]), int(a["small"])) == (gen, h.levels, ph.small)
            assert int(a["staged"]) == ph.staged and int(a["width"]) == config.relax.lanes == 1
            assert int(a["nap"]) == PhastSweep.nap_ns
            assert a["key"] == solver.d_key and a["ctrl"] == solver.d_ctrl
            # 32-bit distances: the stamp is the published word's upper half, no array of its own
            assert a["pgen"] == a["pword"] == ph.d_pword and a["seed_gen"] == ph.d_seed_gen
            seeds = tuple(a.copy() for a in ph.sent_seeds())
            # One copy: the distances, then the positions right after them
            assert seeds[0].size == seeds[1].size == count
            assert int(a["seed_d"]) == int(ph.d_seeds)
            assert int(a["seed_pos"]) == int(ph.d_seeds) + seeds[1].nbytes
            got = _sweep_like_the_kernel(
                order, level_ptr, down_ptr, down_pos, down_w, seeds, ph.small, room
            )
            np.testing.assert_array_equal(got, dijkstra(graph, source).dist)
            res = dict(
                zip(
                    kernels.RESULT_ARGS,
                    fake_driver.functions["sssp_result"].calls[-1][3:],
                    strict=True,
                )
            )
            assert (res["tree_ptr"], res["tree_src"], res["tree_w"]) == solver._pull_tree[:3]
            assert int(res["tree_w_bytes"]) == solver.weight_dtype.itemsize
            pred = _pull_like_the_result_pass(tptr, tsrc, tw, got)
            src, dst, w = graph.edges()
            tight = (got[src] != sssp.UNREACHABLE) & (got[src] < got[dst])
            tight &= got[src] + w == got[dst]
            want = np.full(graph.n, np.iinfo(np.int64).max)
            np.minimum.at(want, dst[tight], src[tight])
            want[want == np.iinfo(np.int64).max] = -1
            np.testing.assert_array_equal(pred, want)
            assert pred[source] == -1 and np.count_nonzero(pred >= 0) > graph.n // 2
        assert "sssp_nf_init" not in fake_driver.functions or not (
            fake_driver.functions["sssp_nf_init"].calls
        )
        assert not fake_driver.functions["sssp_nf_tree"].calls  # the result pass pulls
        # Many sources: the batch kernel without trees (as on every loop), else sweep by sweep.
        assert solver.batch() is not None and "batch kernel" in solver.many_stats(False)["batch"]
        assert solver.many_stats(True)["lanes"] == 1
    monkeypatch.setattr(EngineSolver, "RESULT_PASS_TREE", False)  # off: the tree pass
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        assert solver._pull_tree is None and solver._static_stats()["tree"] == "tree pass"
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = solver._phast.hierarchy.levels + 1
        solver.solve(5)
        assert len(fake_driver.functions["sssp_nf_tree"].calls) == 1
        res = dict(
            zip(
                kernels.RESULT_ARGS, fake_driver.functions["sssp_result"].calls[-1][3:], strict=True
            )
        )
        assert int(res["tree_ptr"]) == 0 and int(res["tree_w_bytes"]) == 0
    # A graph of more edges a node than the pull's limit keeps the tree pass (its lanes).
    monkeypatch.setattr(EngineSolver, "RESULT_PASS_TREE", True)
    monkeypatch.setattr(EngineSolver, "PULL_TREE_MAX_MEAN_DEGREE", graph.m / graph.n - 0.01)
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        assert solver._pull_tree is None and solver._static_stats()["tree"] == "tree pass"
    monkeypatch.setattr(EngineSolver, "PULL_TREE_MAX_MEAN_DEGREE", graph.m / graph.n)
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        assert solver._static_stats()["tree"] == "result pass"
    default_small = ph.small
    for limit in (0, 32768):  # no level in block 0; wider levels in several passes
        wider = replace(config, local_limit=limit)
        with EngineSolver(graph, algorithm="near-far", config=wider) as solver:
            ph = solver._phast
            assert ph is not None
            sizes = np.diff(ph.hierarchy.level_ptr)
            assert ph.small == kernels.phast_top_levels(sizes, 4, 232448 - 132, limit)
            assert ph.small == 0 if limit == 0 else ph.small >= default_small
            assert ph.smem == 4 * int(ph.hierarchy.level_ptr[ph.small]) + 4
    real = sssp.Graph.from_edges(4, [0, 1, 2], [1, 2, 3], np.array([0.5, 1.5, 2.0]))
    with EngineSolver(real, algorithm="near-far", config=config) as solver:
        assert solver.loop == "persistent" and solver._phast is None
        assert "integer weights" in solver._static_stats()["loop_fallback"]
    with pytest.raises(InvalidGraphError, match="near-far only"):
        EngineSolver(graph, algorithm="crauser", config=config)


def test_phast_staging_fits_beside_the_distances_at_the_same_occupancy(fake_driver, monkeypatch):
    """With ``PhastSweep.stage_edges`` (the default) block 0 stages the in-edges of as many top levels as fit
    in what the multiprocessor leaves at the unstaged sweep's occupancy; the layout's bytes are
    the kernel's (distances, weights, row offsets, tails), one more level would not fit, the
    sweep gets the count, and the arrays it reads still sweep to SciPy's distances."""
    from sssp.cpu.reference import dijkstra
    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.phast import PhastSweep

    graph = sssp.generate("road", size=3000, seed=4)
    assert PhastSweep.stage_edges
    with EngineSolver(graph, algorithm="near-far", config=LaunchConfig(loop="phast")) as solver:
        ph = solver._phast
        assert ph is not None
        h = ph.hierarchy
        lp, dp = h.level_ptr, h.down_ptr
        assert 0 < ph.staged <= ph.small
        assert ph.smem == kernels.phast_smem_bytes(lp, dp, ph.small, ph.staged, 4)
        top, pst = int(lp[ph.small]), int(lp[ph.staged])
        assert ph.smem == 4 * (top + int(dp[pst])) + 4 * (pst + 1 + int(dp[pst]))
        fits = ph.grid[0][0] // 132
        assert fits >= 1 and ph.smem <= 233472 // fits - 1024 - 128
        if ph.staged < ph.small:
            more = kernels.phast_smem_bytes(lp, dp, ph.small, ph.staged + 1, 4)
            assert more > 233472 // fits - 1024 - 128
        assert solver._static_stats()["phast"]["staged_levels"] == ph.staged
        solver.h_info[:] = 0
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = h.levels + 1
        solver.solve(17)
        args = fake_driver.functions["sssp_ph_sweep"].calls[-1][3:]
        a = dict(zip(kernels.PHAST_ARGS, args, strict=True))
        assert int(a["small"]) == ph.small and int(a["staged"]) == ph.staged
        seeds = tuple(a.copy() for a in ph.sent_seeds())
        assert seeds[0].size == int(a["nseeds"])
        got = _sweep_like_the_kernel(
            h.order, lp, dp, h.down_src, h.down_w.astype(np.int32), seeds, ph.small, 232448
        )
        np.testing.assert_array_equal(got, dijkstra(graph, 17).dist)


def test_phast_seed_buffers_are_reused_only_after_their_copy(fake_driver, monkeypatch):
    """Many sources queue sweep after sweep without waiting for the device: a solve's seeds
    are written into one of two page-locked buffers in turn, and into one whose copy was
    queued only after that copy's event has been waited for, so a queued copy never sends the
    next source's seeds; each copy sends the seeds of its own sweep (distances, then
    positions)."""
    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.phast import PhastSweep

    monkeypatch.setattr(PhastSweep, "labels", False)  # the host searches

    log: list[tuple] = []
    guards: dict = {}  # event -> (the buffer, the bytes its copy sent)

    class Event:
        def record(self, stream=None) -> None:
            log.append(("record", self))
            last = [e for e in log if e[0] == "copy"][-1]
            guards[self] = (last[1], last[2])

        def synchronize(self) -> None:
            log.append(("wait", self))
            buf, sent = guards[self]  # not written since its copy was queued
            np.testing.assert_array_equal(buf[: sent.size], sent)

        def time_since(self, other) -> float:
            return 0.25

    def copy(buf, array, stream=None) -> None:
        log.append(("copy", array.base if array.base is not None else array, array.copy()))

    fake_driver.Event = Event
    fake_driver.memcpy_htod_async = copy
    graph = sssp.generate("road", size=3000, seed=4)
    with EngineSolver(graph, algorithm="near-far", config=LaunchConfig(loop="phast")) as solver:
        ph = solver._phast
        assert ph is not None
        lane = solver._lane0
        sent = []
        for source in (0, 1234, 2999, 7):
            del log[:]
            ph.run(lane, source)
            copies = [e for e in log if e[0] == "copy"]
            assert len(copies) == 1  # one copy a sweep
            pos, d = ph.sent_seeds()
            np.testing.assert_array_equal(
                copies[0][2], np.concatenate((d.view(np.uint8), pos.view(np.uint8)))
            )
            sent.append((copies[0][1], [e for e in log if e[0] == "wait"], log.index(copies[0])))
            records = [e for e in log if e[0] == "record"]
            assert len(records) == 1 and log.index(records[0]) > log.index(copies[0])
            sent[-1] = (*sent[-1], records[0][1])
        bufs = [b for b, *_ in sent]
        assert bufs[0] is bufs[2] and bufs[1] is bufs[3] and bufs[0] is not bufs[1]
        assert sent[0][1] == [] and sent[1][1] == []  # fresh buffers: nothing to wait for
        for j in (2, 3):  # the wait for the copy two sweeps back, before the buffer is written
            assert [e[1] for e in sent[j][1]] == [sent[j - 2][3]]


class _Mapped(np.ndarray):
    """A page-locked array mapped into the device, stand-in: ``base.get_device_pointer()``."""

    def __array_finalize__(self, obj) -> None:
        self.holder = getattr(obj, "holder", None)

    @property
    def base(self):  # noqa: D401 - pycuda's host allocation
        return self.holder


def _map_host_memory(fake_driver) -> None:
    """The stand-in device maps host memory: page-locked arrays with a device pointer each."""
    fake_driver.DEVICE = {**fake_driver.DEVICE, "CAN_MAP_HOST_MEMORY": 1}
    pointers = iter(range(0x7000_0000, 0x8000_0000, 0x100_0000))

    def pagelocked_empty(n, dtype, mem_flags=None):
        arr = np.zeros(n, dtype).view(_Mapped)
        pointer = next(pointers)
        arr.holder = SimpleNamespace(get_device_pointer=lambda: pointer)
        return arr

    fake_driver.pagelocked_empty = pagelocked_empty


def test_phast_early_launch_sweeps_while_the_host_searches(fake_driver, monkeypatch):
    """``PhastSweep.early_launch`` on a device that maps host memory: a single solve launches
    the sweep before the upward search, with no seed count and no copy, and points the kernel
    at the mapped buffer (the distances, the positions at a fixed offset) and its two words;
    the search then writes the seeds there, the count into the second word and the generation
    into the first, last. Those seeds sweep to SciPy's distances, from sources below and in
    the core. A search that fails still releases the launch (count 0) and the error reaches
    the caller; many sources copy their seeds as before."""
    from sssp.cpu.reference import dijkstra
    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.phast import PhastSweep

    monkeypatch.setattr(PhastSweep, "device_search", False)  # the host searches
    monkeypatch.setattr(PhastSweep, "labels", False)

    _map_host_memory(fake_driver)
    log: list[str] = []
    copies: list[int] = []
    fake_driver.memcpy_htod_async = lambda buf, array, stream=None: copies.append(array.nbytes)
    monkeypatch.setattr(PhastSweep, "early_launch", True)
    graph = sssp.generate("road", size=3000, seed=4)
    with EngineSolver(
        graph, algorithm="near-far", config=LaunchConfig(loop="phast", core=256)
    ) as solver:
        ph = solver._phast
        assert ph is not None and solver.mapped and ph._flag is not None
        h = ph.hierarchy
        sweep = fake_driver.functions["sssp_ph_sweep"]
        launch = sweep.prepared_async_call
        sweep.prepared_async_call = lambda *a, **k: (log.append("launch"), launch(*a, **k))
        upward = h.upward

        def search(*a, **k):
            log.append("search")
            return upward(*a, **k)

        object.__setattr__(h, "upward", search)
        solver.h_info[:] = 0
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = 2
        val = np.dtype(solver.val_dtype).itemsize
        for i, source in enumerate((0, 1234, int(h.order[0]), 2999)):
            del log[:], copies[:]
            solver.solve(source)
            # The control words' copy before the lane's first sweep only, no seeds' copy.
            assert log == ["launch", "search"] and copies == [solver.ctrl0.nbytes][: 1 - min(i, 1)]
            a = dict(zip(kernels.PHAST_ARGS, sweep.calls[-1][3:], strict=True))
            assert int(a["nseeds"]) == 0 and int(a["seed_flag"]) == int(ph.d_flag)
            assert int(a["seed_d"]) == int(ph.d_mapped_d)
            assert int(a["seed_pos"]) == int(ph.d_mapped_d) + val * h.n == int(ph.d_mapped_pos)
            assert int(a["seed_flag"]) == int(ph.d_mapped_d) + (val + 4) * h.n
            pos, d = ph.sent_seeds()
            assert ph._flag.tolist() == [ph.gen, pos.size] and pos.size > ph.core.nodes - 1
            np.testing.assert_array_equal(
                ph._mapped[val * h.n : val * h.n + 4 * pos.size].view(np.int32), pos
            )
            k = ph.core.levels
            lp, first = h.level_ptr[k:], int(h.down_ptr[ph.core.nodes])
            got = _sweep_like_the_kernel(
                h.order,
                lp,
                h.down_ptr - first,
                h.down_src[first:],
                h.down_w[first:].astype(np.int32),
                (pos.copy(), d.copy()),
                ph.small,
                232448,
            )
            np.testing.assert_array_equal(got, dijkstra(graph, source).dist)

        def broken(*a, **k):
            raise KeyboardInterrupt

        object.__setattr__(h, "upward", broken)
        with pytest.raises(KeyboardInterrupt):
            solver.solve(5)
        assert ph._flag.tolist() == [ph.gen, 0]  # released, no seeds
        object.__setattr__(h, "upward", upward)
        del copies[:]
        for source in (0, 7):  # as the many sources' chunks queue them: on a given lane
            solver.start(source, solver._lane0)
            solver.run_phases(solver._lane0)
            a = dict(zip(kernels.PHAST_ARGS, sweep.calls[-1][3:], strict=True))
            assert int(a["seed_flag"]) == 0 and int(a["nseeds"]) == ph.sent_seeds()[0].size
        assert len(copies) == 2  # the seeds, each (the control words are ready)


def _road_and_a_path(wide: bool) -> sssp.Graph:
    """A road-like graph of 3 000 nodes and a path of 100 nodes of its own (no edge between
    them); ``wide``: weights past 32-bit distances."""
    road = sssp.generate("road", size=3000, seed=4)
    tails = np.concatenate(
        (np.repeat(np.arange(3000), np.diff(road.indptr)), np.arange(3000, 3099))
    )
    heads = np.concatenate((road.indices, np.arange(3001, 3100)))
    weights = np.concatenate((road.weights, np.full(99, 7))).astype(np.int64) << (33 if wide else 0)
    return sssp.Graph.from_edges(3100, tails, heads, weights)


@pytest.mark.parametrize(("nodes", "wide"), [(300, False), (4096, False), (300, True)])
def test_phast_core_table_seeds_the_sweep_below_it(fake_driver, monkeypatch, nodes, wide):
    """``LaunchConfig.core``: the host keeps the distances between the nodes of the top
    levels of at most that many nodes (:func:`sssp.hierarchy.core_table`) and the device only
    the hierarchy below them: ``level_ptr`` from the core's end, the in-edges below it with
    their offsets from the first of them; the top and staged levels counted below the core with
    the core's distances in block 0's shared memory; seeds the core's positions with their
    distances, then the upward search's below it. Those arrays, swept as the kernel sweeps
    them (staged edges from the copies it stages), give SciPy's distances from sources below
    and in the core, and from a source in a component of its own, which reaches no core node
    (the kernel's infinity for them: with 64-bit distances, ``wide``, every bit set, past
    int64's). A core as large as the graph leaves the device no level to sweep. Off (the
    default): no core. The core's distances take at most a quarter of block 0's shared
    memory."""
    from sssp.cpu.reference import dijkstra
    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.phast import PhastSweep

    monkeypatch.setattr(PhastSweep, "device_search", False)  # the host searches
    monkeypatch.setattr(PhastSweep, "labels", False)

    graph = _road_and_a_path(wide)
    assert LaunchConfig(loop="phast").core == 0
    with EngineSolver(graph, algorithm="near-far", config=LaunchConfig(loop="phast")) as solver:
        assert solver._phast is not None and solver._phast.core.nodes == 0
    uploaded: list[np.ndarray] = []
    upload = EngineSolver._upload

    def keep(self, array):
        uploaded.append(np.array(array, copy=True))  # empty ones too (no copy is made)
        return upload(self, array)

    monkeypatch.setattr(EngineSolver, "_upload", keep)
    config = LaunchConfig(loop="phast", core=nodes)
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        ph = solver._phast
        assert ph is not None
        h, core = ph.hierarchy, ph.core
        k, top = core.levels, core.nodes
        width = 8 if wide else 4  # the distances' bytes
        assert 0 < top <= min(nodes, 232320 // 4 // (width + 4)) and top == h.level_ptr[k]
        assert k == h.levels if nodes > graph.n else 0 < k < h.levels
        first = int(h.down_ptr[top])
        order, level_ptr, down_ptr, down_pos, down_w = uploaded[-5:]
        np.testing.assert_array_equal(order, h.order)
        np.testing.assert_array_equal(level_ptr, h.level_ptr[k:])
        np.testing.assert_array_equal(down_ptr, h.down_ptr - first)
        np.testing.assert_array_equal(down_pos, h.down_src[first:])
        np.testing.assert_array_equal(down_w, h.down_w[first:])
        lp = h.level_ptr[k:]
        room = 232448 - 128
        rest = room - width * top - 4  # the core's distances and one row offset
        assert ph.small == kernels.phast_top_levels(np.diff(lp), width, rest, 1024)
        assert ph.staged <= ph.small and (ph.staged > 0 or k == h.levels)
        assert ph.smem == kernels.phast_smem_bytes(lp, down_ptr, ph.small, ph.staged, width) <= room
        stats = solver._static_stats()["phast"]
        assert (stats["core_levels"], stats["core_nodes"]) == (k, top)
        solver.h_info[:] = 0
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = h.levels - k + 1
        assert solver.val_dtype == (np.uint64 if wide else np.uint32)
        for source in (0, 1234, 2999, int(h.order[0]), int(h.order[top - 1]), 3050):
            r = solver.solve(source)
            args = fake_driver.functions["sssp_ph_sweep"].calls[-1][3:]
            a = dict(zip(kernels.PHAST_ARGS, args, strict=True))
            assert (int(a["levels"]), int(a["small"]), int(a["staged"])) == (
                h.levels - k,
                ph.small,
                ph.staged,
            )
            assert r.iterations == h.levels - k
            count = int(a["nseeds"])
            seeds = tuple(a.copy() for a in ph.sent_seeds())
            np.testing.assert_array_equal(seeds[0][:top], np.arange(top))
            assert np.all(seeds[0][top:] >= top) and count - top == ph.seeds
            got = _sweep_like_the_kernel(
                order, level_ptr, down_ptr, down_pos, down_w, seeds, ph.small, room, ph.staged
            )
            np.testing.assert_array_equal(got, dijkstra(graph, source).dist)


def _record_uploads_and_copies(fake_driver, monkeypatch):
    """The stand-in device maps host memory; returns what the solvers made next upload (a copy
    of each array by its buffer's address) and the bytes of each asynchronous host-to-device
    copy, both filled as they run."""
    from sssp.gpu.engine import EngineSolver

    _map_host_memory(fake_driver)
    arrays: dict[int, np.ndarray] = {}
    upload = EngineSolver._upload

    def keep(self, array):
        buf = upload(self, array)
        arrays[int(buf)] = np.array(array, copy=True)
        return buf

    monkeypatch.setattr(EngineSolver, "_upload", keep)
    copies: list[int] = []
    fake_driver.memcpy_htod_async = lambda buf, array, stream=None: copies.append(array.nbytes)
    return arrays, copies


def _search_like_the_kernel(a, arrays, rng):
    """What sssp_ph_search computes (the device's upward search), from a launch's arguments
    ``a`` and the arrays behind its pointers: the seeds (position, distance) it leaves, the
    core's positions first, as the host's search hands them over. Each level's list is handled
    in a random order (one of the block's interleavings: a stall check sees what the nodes
    before it lowered). Also checks that every search word is back to all ones at the end."""
    lp, dptr, dpos, dw = (
        arrays[int(a[k])] for k in ("level_ptr", "down_ptr", "down_pos", "down_w")
    )
    uptr, upos, uw, slevel = (arrays[int(a[k])] for k in ("up_ptr", "up_pos", "up_w", "slevel"))
    k, levels, source = int(a["ncore"]), int(a["nlev"]), int(a["source"])
    table = arrays[int(a["table"])].reshape(k, k) if k else np.empty((0, 0), dw.dtype)
    none, inf = 2**64 - 1, int(np.iinfo(dw.dtype).max)
    cap = inf - 1 if dw.dtype == np.uint32 else 2**63 - 1
    n = slevel.size
    sdist = [none] * n
    core = np.full(k, inf, dtype=object)
    seeds: dict[int, int] = {}
    if slevel[source] < 0:
        core[:] = [int(t) for t in table[source]]
    else:
        lists: list[list[int]] = [[] for _ in range(levels + 1)]
        sdist[source] = 0
        lists[slevel[source]].append(source)
        for level in range(int(slevel[source]), -1, -1):
            assert len(lists[level]) <= lp[level + 1] - lp[level]  # its slots
            for u in rng.permutation(lists[level]):
                d = sdist[u]
                tails = range(int(dptr[u]), int(dptr[u + 1]))
                if any(sdist[dpos[j]] != none and sdist[dpos[j]] + int(dw[j]) < d for j in tails):
                    continue
                seeds[int(u)] = d
                for j in range(int(uptr[u]), int(uptr[u + 1])):
                    x, nd = int(upos[j]), d + int(uw[j])
                    assert slevel[x] < slevel[u]  # every upward edge climbs
                    if nd > cap:
                        continue
                    if sdist[x] == none:
                        lists[slevel[x] if slevel[x] >= 0 else levels].append(x)
                    sdist[x] = min(sdist[x], nd)
        entries = lists[levels]
        assert len(entries) <= k and all(0 <= e < k for e in entries)
        for c in range(k):
            best = min(
                (sdist[e] + int(table[e, c]) for e in entries if int(table[e, c]) != inf),
                default=none,
            )
            core[c] = inf if best > cap else best
        for level_list in lists:  # sssp_ph_forget
            for x in level_list:
                sdist[x] = none
    assert all(v == none for v in sdist)
    pos = np.array([*range(k), *seeds], dtype=np.int32)
    d = np.array([*core, *seeds.values()], dtype=np.uint64)
    return pos, d


@pytest.mark.parametrize(("nodes", "wide"), [(0, False), (300, False), (300, True), (4096, False)])
def test_phast_device_search_seeds_the_sweep(fake_driver, monkeypatch, nodes, wide):
    """``PhastSweep.device_search`` under a core table: the sweep searches upward itself
    (without a core the host does, as before). The solver uploads the
    upward edges by tail position (weights in the distance type, capped at its infinity), each
    position's level counted below the core, the core table in the distance type (infinity for
    no path), makes the search's words (all ones) and lists, and gives block 0's shared memory
    a count per level below the core and one for the core. A solve sends no seeds (no copy,
    no mapped buffer), only the source's position. The kernel's search, run over those arrays
    as it runs (levels from the source's up, each list in any order), then the sweep, gives
    SciPy's distances, from sources below and in the core, and in a component that reaches
    no core node; 64-bit distances too (``wide``); many sources launch the same way."""
    from sssp.cpu.reference import dijkstra
    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.phast import PhastSweep

    monkeypatch.setattr(PhastSweep, "device_search", True)
    monkeypatch.setattr(PhastSweep, "labels", False)  # without a core the host searches
    graph = _road_and_a_path(wide)
    arrays, copies = _record_uploads_and_copies(fake_driver, monkeypatch)
    rng = np.random.default_rng(7)
    config = LaunchConfig(loop="phast", core=nodes)
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        ph = solver._phast
        assert ph is not None and ph.searching == (nodes > 0)
        if not nodes:  # no core: the host searches, the kernel is told no source
            solver.h_info[:] = 0
            solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
            solver.solve(5)
            args = fake_driver.functions["sssp_ph_sweep"].calls[-1][3:]
            a = dict(zip(kernels.PHAST_ARGS, args, strict=True))
            assert int(a["source"]) == -1 and int(a["up_ptr"]) == 0 and ph._mapped is not None
            return
        assert ph._mapped is None
        h, core = ph.hierarchy, ph.core
        k, top = core.levels, core.nodes
        width = 8 if wide else 4
        np.testing.assert_array_equal(arrays[int(ph.d_up_ptr)], h.up_ptr)
        np.testing.assert_array_equal(arrays[int(ph.d_up_pos)], h.up_dst)
        up_w = arrays[int(ph.d_up_w)]
        assert up_w.dtype == solver.val_dtype
        np.testing.assert_array_equal(up_w, np.minimum(h.up_w, ph._inf))
        np.testing.assert_array_equal(arrays[int(ph.d_slevel)], h.sweep_level - k)
        table = arrays[int(ph.d_table)].reshape(top, top)
        assert table.dtype == solver.val_dtype
        np.testing.assert_array_equal(table == ph._no_path, core.dist < 0)
        assert ph.counters == h.levels - k + 1 and solver._static_stats()["phast"]["device_search"]
        lp = h.level_ptr[k:]
        down_ptr = h.down_ptr - int(h.down_ptr[top])
        assert ph.smem == kernels.phast_smem_bytes(
            lp, down_ptr, ph.small, ph.staged, width, ph.counters
        )
        assert ph.smem - kernels.phast_smem_bytes(lp, down_ptr, ph.small, ph.staged, width) == (
            4 * ph.counters
        )
        solver.h_info[:] = 0
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = h.levels - k + 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_SEEDS] = 17
        sweep = fake_driver.functions["sssp_ph_sweep"]
        for source in (0, 1234, 2999, int(h.order[0]), int(h.order[max(top, 1) - 1]), 3050):
            r = solver.solve(source)
            a = dict(zip(kernels.PHAST_ARGS, sweep.calls[-1][3:], strict=True))
            assert int(a["source"]) == h.position[source] and int(a["seed_flag"]) == 0
            assert int(a["nseeds"]) == 0 and int(a["ncore"]) == top
            assert int(a["nlev"]) == int(a["levels"]) == h.levels - k
            assert int(a["sdist"]) == int(ph.d_sdist) and int(a["bag"]) == int(ph.d_bag)
            assert r.stats["upward_settled"] == 17
            arrays[int(a["sdist"])] = np.full(h.n, 2**64 - 1, np.uint64)
            seeds = _search_like_the_kernel(a, arrays, rng)
            got = _sweep_like_the_kernel(
                h.order,
                lp,
                down_ptr,
                h.down_src[int(h.down_ptr[top]) :],
                np.minimum(h.down_w[int(h.down_ptr[top]) :], ph._inf).astype(solver.val_dtype),
                seeds,
                ph.small,
                232448,
                ph.staged,
            )
            np.testing.assert_array_equal(got, dijkstra(graph, source).dist)
        assert copies == [solver.ctrl0.nbytes]  # the control words before the first: no seeds
        for source in (0, 7):  # as the many sources' chunks queue them: on a given lane
            solver.start(source, solver._lane0)
            solver.run_phases(solver._lane0)
            a = dict(zip(kernels.PHAST_ARGS, sweep.calls[-1][3:], strict=True))
            assert int(a["source"]) == h.position[source] and int(a["nseeds"]) == 0


def _label_like_the_kernel(a, arrays, base_pos, base_d):
    """What block 0 takes from a label (``nentries`` > 0, or seeds with none): the launch's
    seeds read from the uploaded labels at the addresses ``a`` names, the first ``nentries``
    entries whose table rows give the core's distances (64-bit sums, as the kernel adds), the
    others seeds. Returns (positions, distances): the core's positions first."""
    pos_all, d_all = arrays[base_pos], arrays[base_d]
    w = d_all.dtype.itemsize
    at = (int(a["seed_pos"]) - base_pos) // 4
    assert int(a["seed_d"]) - base_d == w * at  # both arrays at the label's first item
    count, ne, k = int(a["nseeds"]), int(a["nentries"]), int(a["ncore"])
    pos, d = pos_all[at : at + count], d_all[at : at + count]
    inf = int(np.iinfo(d_all.dtype).max)
    cap = inf - 1 if d_all.dtype == np.uint32 else 2**63 - 1
    core = np.full(k, inf, dtype=object)
    if ne:
        table = arrays[int(a["table"])].reshape(k, k)
        assert np.all(pos[:ne] < k)  # entries are core nodes
        for c in range(k):
            best = min(
                (int(d[i]) + int(table[pos[i], c]) for i in range(ne) if table[pos[i], c] != inf),
                default=cap + 1,
            )
            core[c] = inf if best > cap else best
    assert np.all(pos[ne:] >= k)  # seeds lie below the core
    return (
        np.concatenate((np.arange(k), pos[ne:])).astype(np.int32),
        np.concatenate((core, d[ne:])).astype(np.uint64),
    )


@pytest.mark.parametrize(("nodes", "wide"), [(0, False), (300, False), (300, True), (4096, False)])
def test_phast_labels_seed_the_sweep(fake_driver, monkeypatch, nodes, wide):
    """``PhastSweep.labels``: the solver uploads every position's upward search
    (:func:`sssp.hierarchy.upward_labels`, distances in the distance type capped at its
    infinity) and, under a core, the core table in the distance type. A solve searches
    nothing and sends nothing (no seeds' copy, no mapped buffer): the sweep's seeds point at
    the source's label on the device, with its count and its entries' count. Those seeds,
    taken as block 0 takes them (the entries through the table, then the sweep), give SciPy's
    distances from sources below and in the core and in a component of its own (the other's
    core nodes unreachable); 64-bit distances too (``wide``); many sources launch the same
    way. A graph whose
    labels would exceed the items allowed falls back to the host's search."""
    from sssp.cpu.reference import dijkstra
    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.phast import PhastSweep

    monkeypatch.setattr(PhastSweep, "labels", True)
    monkeypatch.setattr(PhastSweep, "device_search", False)
    graph = _road_and_a_path(wide)
    arrays, copies = _record_uploads_and_copies(fake_driver, monkeypatch)
    config = LaunchConfig(loop="phast", core=nodes)
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        ph = solver._phast
        assert ph is not None and ph._labels is not None and not ph.host_search
        assert ph._mapped is None and not hasattr(ph, "_h_seeds")  # nothing to send
        h, core, lab = ph.hierarchy, ph.core, ph._labels
        k, top = core.levels, core.nodes
        assert lab.core is core and lab.ptr[-1] == lab.items == lab.pos.size
        stats = solver._static_stats()["phast"]
        assert stats["labels"] and stats["label_items"] == lab.items
        np.testing.assert_array_equal(arrays[int(ph.d_label_pos)], lab.pos)
        label_d = arrays[int(ph.d_label_d)]
        assert label_d.dtype == solver.val_dtype
        np.testing.assert_array_equal(label_d, np.minimum(lab.dist, ph._inf))
        if top:
            table = arrays[int(ph.d_table)].reshape(top, top)
            np.testing.assert_array_equal(table == ph._no_path, core.dist < 0)
        lp = h.level_ptr[k:]
        first = int(h.down_ptr[top])
        width = 8 if wide else 4
        # With no top level in block 0 the grid merges the core: no core distance in block
        # 0's shared memory, only the one row offset of no staged level.
        assert ph.grid_core == (top > 0 and ph.small == 0)
        assert ph.smem == kernels.phast_smem_bytes(
            lp, h.down_ptr - first, ph.small, ph.staged, width, grid_core=ph.grid_core
        )
        if ph.grid_core:
            assert ph.smem == 4
        elif top:
            assert ph.smem >= width * top
        down_w = np.minimum(h.down_w[first:], ph._inf).astype(solver.val_dtype)
        solver.h_info[:] = 0
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_DONE] = 1
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_PHASE] = h.levels - k + 1
        sweep = fake_driver.functions["sssp_ph_sweep"]
        sources = [0, 1234, 2999, int(h.order[0]), int(h.order[max(top, 1) - 1]), 3050]
        for source in sources:
            r = solver.solve(source)
            a = dict(zip(kernels.PHAST_ARGS, sweep.calls[-1][3:], strict=True))
            p = int(h.position[source])
            assert int(a["source"]) == -1 and int(a["seed_flag"]) == 0
            assert int(a["nseeds"]) == lab.ptr[p + 1] - lab.ptr[p]
            # The table with every label: one with no entries publishes the core as no path.
            assert int(a["nentries"]) == lab.entries[p] and int(a["ncore"]) == top
            assert r.stats["upward_settled"] == int(a["nseeds"]) - int(a["nentries"])
            seeds = _label_like_the_kernel(a, arrays, int(ph.d_label_pos), int(ph.d_label_d))
            got = _sweep_like_the_kernel(
                h.order, lp, h.down_ptr - first, h.down_src[first:], down_w, seeds,
                ph.small, 232448, ph.staged,
            )  # fmt: skip
            np.testing.assert_array_equal(got, dijkstra(graph, source).dist)
        assert copies == [solver.ctrl0.nbytes]  # the control words before the first: no seeds
        for source in (0, 7):  # as the many sources' chunks queue them: on a given lane
            solver.start(source, solver._lane0)
            solver.run_phases(solver._lane0)
            a = dict(zip(kernels.PHAST_ARGS, sweep.calls[-1][3:], strict=True))
            p = int(h.position[source])
            assert int(a["nseeds"]) == lab.ptr[p + 1] - lab.ptr[p]
        assert copies == [solver.ctrl0.nbytes]
        # An aborted sweep leaves its abort word set: the next solve copies the words again.
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_ABORT] = 1
        with pytest.raises(sssp.SolverError, match="timed out"):
            solver.solve(0)
        solver.h_info[kernels.RES_CTRL + kernels.CTRL_ABORT] = 0
        solver.solve(0)
        assert copies == [solver.ctrl0.nbytes] * 2
    monkeypatch.setattr(sssp.hierarchy, "LABEL_ITEMS_MAX", 100)
    with EngineSolver(graph, algorithm="near-far", config=config) as solver:
        ph = solver._phast
        assert ph is not None and ph._labels is None and ph.host_search
        assert not solver._static_stats()["phast"]["labels"]


def test_phast_shared_memory_rules():
    """``phast_smem_bytes`` counts the kernel's layout; ``phast_staged_levels`` is the most
    levels whose layout fits the budget, never more than the top levels."""
    level_ptr = np.array([0, 1, 3, 7, 15])
    down_ptr = np.concatenate(([0, 0], np.cumsum([2] * 14)))  # two in-edges below the top
    assert kernels.phast_smem_bytes(level_ptr, down_ptr, 0, 0, 4) == 4
    assert kernels.phast_smem_bytes(level_ptr, down_ptr, 3, 0, 4) == 4 * 7 + 4
    # 2 staged levels: 3 positions, 4 edges: 4 * (7 + 4) + 4 * (3 + 1 + 4)
    assert kernels.phast_smem_bytes(level_ptr, down_ptr, 3, 2, 4) == 76
    assert kernels.phast_smem_bytes(level_ptr, down_ptr, 3, 2, 8) == 8 * 11 + 32
    for budget in range(0, 200, 7):
        staged = kernels.phast_staged_levels(level_ptr, down_ptr, 3, 4, budget)
        assert 0 <= staged <= 3
        if staged:
            assert kernels.phast_smem_bytes(level_ptr, down_ptr, 3, staged, 4) <= budget
        if staged < 3:
            assert kernels.phast_smem_bytes(level_ptr, down_ptr, 3, staged + 1, 4) > budget
    # Under a core of 5 positions (level_ptr from the core's end; its positions' offsets,
    # below the first in-edge under it, are not read): its distances kept in block 0, but no
    # row offset of its positions; none of it where the grid merges a label's core.
    cored = level_ptr + 5
    cored_ptr = np.concatenate(([-9] * 5, down_ptr))
    assert kernels.phast_smem_bytes(cored, cored_ptr, 0, 0, 4) == 4 * 5 + 4
    assert kernels.phast_smem_bytes(cored, cored_ptr, 0, 0, 4, grid_core=True) == 4
    assert kernels.phast_smem_bytes(cored, cored_ptr, 0, 0, 8, 3, grid_core=True) == 4 * 4
    assert kernels.phast_smem_bytes(cored, cored_ptr, 3, 2, 4) == 4 * (5 + 7 + 4) + 4 * (3 + 1 + 4)
    with pytest.raises(kernels.KernelContractError, match="small=3"):
        kernels.phast_smem_bytes(cored, cored_ptr, 3, 0, 4, grid_core=True)


def test_a_tuned_phast_pick_waits_for_its_background_build(fake_driver, monkeypatch, tmp_path):
    """``Solver(tuned=True)`` whose record picks the phast loop, the graph's hierarchy not in
    the cache (``hierarchy="auto"``): the record's fallback runs and a background build is
    started for the cache file; the first solve after the build ends runs the phast pick on a
    new device solver (the fallback's closed), with the built hierarchy and a detail that says
    so. With ``hierarchy="build"`` the pick runs from the start."""
    import sssp.gpu
    import sssp.gpu.phast
    import sssp.hierarchy
    import sssp.tuned
    from sssp.config import ConfigSource
    from sssp.gpu.engine import EngineSolver
    from sssp.tuned import TunedChoice, TunedFallback

    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path))
    monkeypatch.setattr(sssp.gpu, "is_available", lambda: True)
    monkeypatch.setattr(sssp.gpu, "device_info", sssp.gpu.engine.device_info)
    monkeypatch.setattr(EngineSolver, "solve", lambda self, source, **kw: (self, source))
    phast = LaunchConfig(KernelConfig(1024, "N", 4), loop="phast")
    fallback = TunedFallback(LaunchConfig(loop="persistent"), "near-far", 2.0, 9.0)

    class Provider:
        def lookup(self, query):
            return TunedChoice(
                phast, ConfigSource.TUNED_EXACT, "near-far", 1.0, "stored", None, fallback
            )

        def state(self, db):
            return None

    builds: list = []

    class Build:  # the background process, finished when the test says so
        def __init__(self, graph, path) -> None:
            self.graph, self.path, self.ready = graph, path, False
            builds.append(self)

        def result(self):
            return sssp.hierarchy.build_hierarchy(self.graph) if self.ready else None

    monkeypatch.setattr(sssp.hierarchy, "BackgroundBuild", Build)
    provider = Provider()
    sssp.tuned.register_provider(provider)
    try:
        graph = sssp.generate("road", size=3000, seed=4)
        with sssp.Solver(graph, tuned=True) as sv:
            assert sv.config == fallback.config and sv.algorithm == "near-far"
            assert "background process builds it" in sv.config_detail
            [build] = builds
            assert build.path == sssp.hierarchy.cache_path(graph)
            first = sv._gpu
            assert sv.solve(5) == (first, 5) and first._phast is None
            build.ready = True
            engine, source = sv.solve(7)
            assert source == 7 and engine is not first and engine is sv._gpu
            assert engine._phast is not None and sv.config.loop == "phast"
            assert "built in the background" in sv.config_detail
            assert first._closed
            assert sv._waiting is None and sv.solve(9)[0] is engine
        with sssp.Solver(graph, tuned=True, hierarchy="build") as sv:
            assert sv.config.loop == "phast" and sv._waiting is None and len(builds) == 1
        # A pick that cannot be taken (here: the device refuses the sweep's solver) leaves the
        # fallback answering, and says why (a cache without the hierarchy "build" kept).
        monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path / "other"))
        with sssp.Solver(graph, tuned=True) as sv:
            fallback_solver = sv._gpu
            builds[-1].ready = True
            monkeypatch.setattr(
                sssp.gpu.phast.PhastSweep,
                "__init__",
                lambda *a, **k: (_ for _ in ()).throw(SolverError("no room for the sweep")),
            )
            assert sv.solve(4)[0] is fallback_solver and sv._waiting is None
            assert "could not be taken (no room for the sweep)" in sv.config_detail
    finally:
        sssp.tuned.unregister_provider(provider)


def test_packed_launch_writes_what_a_fresh_pack_would():
    """``PackedLaunch``: the arguments set so far, in the layout of a pack of the whole list
    (each field at a multiple of its size, as pycuda packs ``prepared_async_call``'s), sent
    by the function's ``_launch_kernel`` where it has one, else by ``prepared_async_call``;
    an argument set again replaces its bytes only, by name or through a writer."""
    import struct

    from sssp.gpu.base import PackedLaunch

    spec = kernels.PHAST_KERNELS["sweep"]
    rng = np.random.default_rng(3)
    values = {
        name: int(rng.integers(0, 2**40)) if code == "P" else int(rng.integers(-(2**31), 2**31))
        for name, code in zip(spec.args, spec.arg_format, strict=True)
    }
    values["gen"] = 2**32 - 1  # the one unsigned 32-bit argument
    packed = PackedLaunch(spec.args, spec.arg_format)
    packed.set(**{k: np.uintp(v) if spec.arg_format[i] == "P" else v
                  for i, (k, v) in enumerate(values.items())})  # fmt: skip
    assert packed.buffer == struct.pack("@" + spec.arg_format, *values.values())
    sent: list = []

    class Direct:
        def _launch_kernel(self, grid, block, buf, shared, stream):
            sent.append((grid, block, bytes(buf), shared, stream))

    packed.set(nseeds=7, source=-1)
    packed.launch(Direct(), (132, 1, 1), (1024, 1, 1), "stream", 4096)
    values.update(nseeds=7, source=-1)
    assert sent == [
        ((132, 1, 1), (1024, 1, 1), struct.pack("@" + spec.arg_format, *values.values()), 4096,
         "stream"),
    ]  # fmt: skip
    fallback = _Func("sweep")
    packed.launch(fallback, (1, 1, 1), (32, 1, 1), None)
    assert [int(a) for a in fallback.calls[-1][3:]] == list(values.values())
    # A writer: the same bytes as a fresh pack, for neighbours merged into one struct write
    # (padding included) and for names out of order.
    every = packed.writer(*spec.args)
    values = {k: v + 1 if k != "gen" else 5 for k, v in values.items()}
    every(*values.values())
    assert packed.buffer == struct.pack("@" + spec.arg_format, *values.values())
    some = packed.writer("nentries", "seed_pos", "seed_d", "nseeds", "gen", "source")
    some(6, 11, 12, 13, 14, -2)
    values.update(nentries=6, seed_pos=11, seed_d=12, nseeds=13, gen=14, source=-2)
    assert packed.buffer == struct.pack("@" + spec.arg_format, *values.values())
    with pytest.raises(sssp.SolverError, match="argument names"):
        PackedLaunch(spec.args, spec.arg_format + "i")


@pytest.mark.parametrize(
    ("loop", "labels"),
    [("persistent", True), ("wide", True), ("cluster", True), ("phast", True), ("phast", False)],
)
def test_a_closed_solver_is_freed_by_its_last_reference(fake_driver, monkeypatch, loop, labels):
    """A solver and its helpers (the phast sweep, the wide loop, the batch kernel) form no
    reference cycle: with the garbage collector off, dropping the last reference frees it, so
    pycuda frees its streams, events, modules and page-locked memory then, in the caller's
    thread (a cycle left them to a collection in any thread, where pycuda warns that it cannot
    clean them up and leaks them). A helper kept past its solver says so in one error."""
    import gc
    import weakref

    from sssp.gpu.engine import EngineSolver
    from sssp.gpu.phast import PhastSweep

    monkeypatch.setattr(PhastSweep, "labels", labels)
    graph = (
        _road_and_a_path(False)
        if loop == "phast"
        else sssp.generate("random", size=3000, degree=4, seed=5)
    )
    gc.collect()
    gc.disable()
    try:
        solver = EngineSolver(graph, algorithm="near-far", config=LaunchConfig(loop=loop))
        helper = {"phast": solver._phast, "wide": solver._wide}.get(loop)
        if loop == "cluster":
            helper = solver.batch()
        assert (helper is not None) is (loop != "persistent")
        if loop == "phast":
            assert solver._phast is not None and (solver._phast._labels is not None) is labels
        ref = weakref.ref(solver)
        solver.close()
        del solver
        assert ref() is None
    finally:
        gc.enable()
    if helper is not None:
        owner = "_solver" if loop == "cluster" else "solver"
        with pytest.raises(sssp.SolverError, match="solver that owned this .* is gone"):
            getattr(helper, owner)
