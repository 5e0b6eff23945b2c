"""The plan of an engine-2 solver: what to compile, allocate and launch, decided without a GPU.

:func:`plan_engine` turns plain facts (:class:`GraphFacts`: the graph's size, weights and
degrees; :class:`DeviceFacts`: the device's compute capability, multiprocessors, shared memory
and whether it maps host memory) and the request (launch configuration, algorithm, variant, Δ)
into a frozen :class:`EnginePlan`: the loop that runs after the fallbacks and why, the module's
compile-time parameters, the kernels, the cluster layout, every device buffer with its size, the
control words' initial values, the shared-memory budgets, the result pass's layout and Δ. The
executor (:class:`sssp.gpu.engine.EngineSolver`) reads the real device's facts, executes the plan
(compile, upload, allocate) and computes only what needs a loaded function: how many blocks of
it are resident per multiprocessor (from its registers), which :meth:`EnginePlan.grid_blocks`,
:meth:`EnginePlan.persistent_per_sm` and :meth:`EnginePlan.persistent_carveout` turn into launch
shapes and the carveout.

One decision needs the graph itself, not its facts: the fused cluster loop places the nodes in a
bandwidth-reducing order and runs fused only where that order keeps edges local. That work is
:func:`graph_bands`, handed to :func:`plan_engine` as a callable it calls only when the fused
loop is asked for and possible.

This module imports no CUDA binding and nothing of the executor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

import kernels
from kernels import (
    CLUSTER_KERNELS,
    ENGINE_KERNELS,
    NEARFAR_KERNELS,
    PHAST_KERNELS,
    EngineParams,
    KernelSpec,
)

from ..config import L1_STATES, KernelConfig, LaunchConfig
from ..errors import BackendUnavailableError, InvalidArgumentError, InvalidGraphError

if TYPE_CHECKING:
    from ..graph import Graph

log = logging.getLogger(__name__)

CRITERION = {
    "crauser": "out",
    "crauser-in": "in",
    "crauser-inout": "inout",
    "martin": "martin",
    "near-far": "out",
}
"""GPU algorithm name -> settling criterion of engine 2 (near-far has none; its kernels sit in
every module, so it takes the Crauser build's)."""

KERNEL_SETS: dict[str, dict[str, KernelSpec]] = {
    "engine": ENGINE_KERNELS,
    "nearfar": NEARFAR_KERNELS,
    "cluster": CLUSTER_KERNELS,
    "phast": PHAST_KERNELS,
}
"""The kernel sets a plan can load, by :attr:`EnginePlan.kernel_set_name`."""

MIN_ALLOC_BYTES = 8
"""The smallest device allocation (an empty array still gets a valid address)."""

BUFFER_NAMES = (
    "d_indptr",
    "d_indices",
    "d_weights",
    "d_omega",
    "d_iota",
    "d_settled",
    "d_key",
    "d_pred",
    "d_qF",
    "d_qR",
    "d_cnt",
    "d_thr",
    "d_ctrl",
    "d_place",
    "d_slots",
    "d_pushed",
    "d_infar",
    "d_result_scratch",
    "d_out_dist",
    "d_out_pred",
    "d_info",
    "d_hubs",
    "d_w",
    "d_light",
    "d_qbits",
    "d_async",
)
"""Every buffer a plan can hold, by the solver attribute it becomes (None where a plan has none):
the graph (row starts, targets, weights), the criterion's node minima (ω, ι), the node state
(settled phase, keys, predecessors), the frontier and fringe queues, the per-phase history
(counts, thresholds), the control words, the fused cluster loop's placement, near-far's pushed
distances and far flags, the result pass's scratch and (without mapped host memory) its output
staging, the wide loop's hub queue, words and light edges per row, and near-far across the grid's
queued bits and words."""

SMEM_RESERVED_PER_BLOCK = 1024
"""Shared memory the device reserves per resident block (the occupancy rule counts it)."""


@dataclass(frozen=True)
class GraphFacts:
    """What the plan needs to know of a graph.

    Parameters
    ----------
    n, m : int
        Nodes and edges.
    max_weight : int or float
        The largest weight (0 without edges).
    weight_dtype : str
        The weights' numpy dtype name (``"int32"``, ``"int64"``, ``"float32"``, ``"float64"``).
    degrees : ndarray of int, shape (n,)
        Out-degrees (the cluster layout's block edges, the hub queue's chunks, the sort gate).
    weight_sum : float, optional
        The weights summed in float64, for near-far's default Δ; None when not needed.
    """

    n: int
    m: int
    max_weight: int | float
    weight_dtype: str
    degrees: np.ndarray = field(repr=False, compare=False)
    weight_sum: float | None = None

    def __post_init__(self) -> None:
        if len(self.degrees) != self.n or int(np.sum(self.degrees)) != self.m:
            raise InvalidArgumentError(
                f"graph facts: {len(self.degrees)} degrees summing to {int(np.sum(self.degrees))} "
                f"for n = {self.n}, m = {self.m}"
            )

    @property
    def is_float(self) -> bool:
        return np.dtype(self.weight_dtype).kind == "f"

    @property
    def max_degree(self) -> int:
        return int(self.degrees.max()) if self.n else 0

    @classmethod
    def of(cls, graph: Graph, *, weight_sum: bool = True) -> GraphFacts:
        """The facts of ``graph`` (``weight_sum``: also sum the weights, an O(m) pass)."""
        from ..cpu.nearfar import weight_total

        return cls(
            n=graph.n,
            m=graph.m,
            max_weight=graph.max_weight,
            weight_dtype=graph.weights.dtype.name,
            degrees=graph.out_degree(),
            weight_sum=weight_total(graph) if weight_sum else None,
        )


@dataclass(frozen=True)
class DeviceFacts:
    """What the plan needs to know of a device (the executor reads them from the driver).

    Parameters
    ----------
    compute_capability : (int, int)
    sm_count : int
        Multiprocessors.
    smem_per_block_optin : int
        Shared memory a block may opt in to (bytes).
    smem_per_sm : int
        Shared memory per multiprocessor (bytes).
    can_map_host : bool
        Whether the device maps page-locked host memory into its address space (and addresses
        memory uniformly).
    non_portable_clusters : bool
        Whether clusters beyond the portable 8 blocks can be asked for (the binding can name the
        function attribute).
    """

    compute_capability: tuple[int, int]
    sm_count: int
    smem_per_block_optin: int
    smem_per_sm: int
    can_map_host: bool = True
    non_portable_clusters: bool = True

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"


@dataclass(frozen=True)
class Bands:
    """The graph-dependent part of the fused cluster loop's choice (:func:`graph_bands`).

    Parameters
    ----------
    order : ndarray of int64, shape (n,)
        A bandwidth-reducing order of the nodes.
    gate : callable
        ``gate(blocks) -> (fused, why)``: whether the fused loop runs on the graph cut into
        ``blocks`` bands of ``order`` (:func:`sssp.bands.fusion_gate`).
    """

    order: np.ndarray = field(repr=False)
    gate: Callable[[int], tuple[bool, str]] = field(repr=False)


def graph_bands(graph: Graph) -> Bands:
    """The bands of ``graph`` (reverse Cuthill-McKee order and the locality gate): the one step
    of the plan that reads the graph's edges."""
    from ..bands import band_order, fusion_gate

    order = band_order(graph)
    return Bands(order, lambda blocks: fusion_gate(graph, blocks, order))


@dataclass(frozen=True)
class Buffer:
    """One device buffer of a plan: its solver attribute, its size, and what fills it.

    ``fill`` is ``"none"`` (the kernels write it), ``"zero"`` (zeroed once after allocation) or
    ``"upload"`` (a host array of exactly ``nbytes`` is copied in: the graph, node minima,
    the cluster placement)."""

    name: str
    nbytes: int
    fill: str = "none"

    @property
    def alloc_bytes(self) -> int:
        """What the allocation takes (at least :data:`MIN_ALLOC_BYTES`)."""
        return max(int(self.nbytes), MIN_ALLOC_BYTES)


@dataclass(frozen=True)
class EnginePlan:
    """Every decision an engine-2 solver makes before touching the device (:func:`plan_engine`).

    The executor copies the scalar fields onto the solver under the same names (``loop``,
    ``params``, ``cluster``, ``local_limit``, ...)."""

    n: int
    m: int
    algorithm: str
    variant: str
    config: LaunchConfig
    requested_loop: str
    """The loop the configuration asked for."""
    loop: str
    """The loop that runs (after the fallbacks below)."""
    loop_fallback: str
    """Why the wide loop asked for runs as another ("" when it does not)."""
    cluster_fallback: str
    """Why the cluster loop asked for runs as the persistent loop ("" when it does not)."""
    fusion_detail: str
    """Why a cluster configuration that asks for fusion ran fused or not ("" otherwise)."""
    params: EngineParams
    kernel_set_name: str
    """A key of :data:`KERNEL_SETS`."""
    kernel_configs: dict[str, KernelConfig]
    """The launch configuration of each kernel of the set (block size, L1 state)."""
    delta: int | float | None
    """Near-far's Δ as the solver uses it (None for the other algorithms)."""
    delta_bits: int
    """Δ as the kernels' 64-bit argument (0 for the other algorithms)."""
    cluster: int
    cluster_mb: int
    cluster_lq: int
    cluster_spread: bool
    """Whether the cluster's local work crosses blocks (``LaunchConfig.fuse == 2``)."""
    grid_async: bool
    """Whether near-far runs across the grid with a barrier per bucket (``sssp_nf_async``: a
    configuration fused across blocks whose graph no cluster holds)."""
    nb: int
    """Node slots per block of the cluster (0 on the other loops)."""
    placement: tuple[np.ndarray, np.ndarray] | None = field(repr=False, compare=False)
    """The fused cluster loop's ``place`` and ``slots`` arrays (:func:`kernels.cluster_placement`)."""
    local_limit: int
    local_cap: int
    local_smem: int
    """Dynamic shared memory of the persistent kernel (or the cluster kernel) per block."""
    degree: int
    """Mean out-degree, rounded up (the persistent kernel's argument)."""
    sort_rows: bool
    """Whether the rows are sorted by weight once after the upload (``CTRL_SORTED``)."""
    ctrl0: tuple[int, ...]
    """The control words every solve starts from (:data:`kernels.CTRL_WORDS`)."""
    history_len: int
    counters: int
    layout: int
    tree_pass: bool
    """Whether the predecessors need a tree pass (packed Crauser keys carry them already)."""
    dist_dtype: str
    """The dtype of the distances a result holds (``"int64"`` or ``"float64"``)."""
    out_kind: int
    mapped: bool
    """Whether the result pass writes mapped host memory (else device buffers and copies)."""
    result_grid: tuple[tuple[int, int, int], tuple[int, int, int]]
    wide: kernels.WideParams | None
    """The wide loop's compile-time parameters (None on the other loops)."""
    split_rows: bool
    """Whether the wide loop's rows are partitioned into light and heavy edges once, at set-up
    (its light/heavy split with Δ below 2**32 - 1): ``d_light`` holds each row's light edges,
    and the partition needs ``8 * m`` bytes of device memory more while it runs."""
    buffers: tuple[Buffer, ...]
    """The device buffers in allocation order."""
    sm_count: int
    smem_per_sm: int

    # -- derived -----------------------------------------------------------------------------
    @property
    def nearfar(self) -> bool:
        return self.algorithm == "near-far"

    @property
    def kernel_set(self) -> dict[str, KernelSpec]:
        return KERNEL_SETS[self.kernel_set_name]

    @property
    def dtypes(self) -> tuple[np.dtype, np.dtype, np.dtype]:
        """(stored key, distance value, weight) dtypes on the device."""
        key, val, w = (np.dtype(t) for t in self.params.dtypes())
        return key, val, w

    def buffer(self, name: str) -> Buffer | None:
        """The buffer of that attribute name, or None when the plan allocates none."""
        return next((b for b in self.buffers if b.name == name), None)

    @property
    def device_bytes(self) -> int:
        """Device memory the plan's buffers take (a solver's ``memory_bytes()`` after set-up)."""
        return sum(b.alloc_bytes for b in self.buffers)

    def grid_blocks(self, name: str, fits: int) -> int:
        """Blocks of kernel ``name``'s grid, given ``fits`` blocks of it resident per
        multiprocessor (the executor's occupancy count from the loaded function); not for the
        persistent kernel (:meth:`persistent_per_sm`) or the cluster loop's solve."""
        spec = self.kernel_set[name]
        kc = self.kernel_configs[name]
        if self.cluster:
            return kernels.blocks_for(spec, self.n, kc.block_size, kernels.CLUSTER_LANES)
        return kernels.blocks_for(
            spec,
            self.n,
            kc.block_size,
            kc.lanes if name in ("relax", "tree") else 1,
            resident=self.sm_count * max(fits, 1),
        )

    def persistent_per_sm(self, fits: int) -> int:
        """Blocks per multiprocessor of the persistent kernel from the ``fits`` that are
        resident: all of them, or the configuration's ``blocks_per_sm`` if fewer.

        Raises
        ------
        InvalidGraphError
            None fits.
        """
        if fits == 0:
            raise InvalidGraphError(
                f"the persistent kernel does not fit at "
                f"{self.kernel_configs['persistent'].block_size} threads per block"
            )
        cap = self.config.blocks_per_sm
        return fits if cap == 0 else min(fits, cap)

    def persistent_carveout(self, per_sm: int, static_smem: int) -> tuple[str, int]:
        """(cache preference, carveout percent) of the persistent kernel: the grid barrier
        deadlocks on a block that is not resident and the L1 states shrink the shared memory
        per multiprocessor, so the carveout holds ``per_sm`` blocks' shared memory (``static_smem``
        static bytes each plus :attr:`local_smem`): "N" and "A" the least that does (the most
        L1), "S" all of it."""
        need = per_sm * (static_smem + self.local_smem + SMEM_RESERVED_PER_BLOCK)
        pct = min(100, -(-100 * need // self.smem_per_sm))
        l1 = self.kernel_configs["persistent"].l1
        return L1_STATES[l1][0], 100 if l1 == "S" else pct


# -- the pure rules ---------------------------------------------------------------------------
def engine_params_for(facts: GraphFacts, algorithm: str, variant: str, lanes: int) -> EngineParams:
    """Compile-time parameters for a graph: the distance type from the weights (see
    :func:`kernels.widths_for`), the criterion from the algorithm."""
    if algorithm not in CRITERION:
        raise BackendUnavailableError("gpu", f"algorithm {algorithm!r} has no GPU version", hint="")
    if facts.is_float:
        dist_bits, weight_bits = kernels.widths_for_float(facts.weight_dtype)
        floating = True
    else:
        try:
            dist_bits, weight_bits = kernels.widths_for(facts.n, facts.max_weight)
        except kernels.KernelContractError as err:
            raise InvalidGraphError(str(err)) from err
        floating = False
    return EngineParams(
        dist_bits, weight_bits, floating, CRITERION[algorithm], lanes, variant == "predecessors"
    )


def shortcut_choice(
    facts: GraphFacts, config: LaunchConfig | None, algorithm: str
) -> tuple[int, int | None, str]:
    """(shortcuts per node, their largest weight or None for no bound beyond int64's, why none)
    for a configuration's ``shortcuts`` (:func:`sssp.shortcuts.with_shortcuts`). Near-far only,
    integer weights only; a graph with 32-bit distances keeps them (the shortcuts are capped
    below ``kernels.UINT32_INF / (n + 1)``)."""
    rho = config.shortcuts if config is not None else 0
    if not rho:
        return 0, None, ""
    if algorithm != "near-far":
        return 0, None, f"shortcuts run with near-far only, not {algorithm}: none added"
    if facts.is_float:
        return 0, None, "real weights: no shortcuts (their sums would round differently)"
    bits, _ = kernels.widths_for(facts.n, facts.max_weight)
    if bits == 32:
        return rho, max(int(facts.max_weight), (kernels.UINT32_INF - 1) // (facts.n + 1)), ""
    return rho, None, ""


def kernel_config(config: LaunchConfig, name: str) -> KernelConfig:
    """The launch configuration of engine-2 kernel ``name`` under ``config``."""
    if name == "sort":  # once per graph, not part of a solve: not tuned
        return KernelConfig(kernels.SORT_BLOCK, "N")
    if name == "sweep":  # a block sweeps a top level in one pass (sssp.gpu.phast)
        return KernelConfig(kernels.PHAST_BLOCK, "N")
    if name in ("relax", "tree", "persistent", "init", "solve", "async"):
        kc = config.relax
        return kc if name != "init" else KernelConfig(kc.block_size, "N")
    return config.update  # settle: update with the threshold folded in


def hub_entries(degrees: np.ndarray, params: kernels.WideParams | None = None) -> int:
    """Hub-queue entries one step of the wide loop can need: each node with more than
    ``params.hub_degree`` out-edges once (a step lists a node at most once), in chunks of
    ``params.chunk`` edges; at least one."""
    params = params or kernels.WideParams()
    deg = np.asarray(degrees, dtype=np.int64)
    hubs = deg[deg > params.hub_degree]
    return max(1, int(((hubs + params.chunk - 1) // params.chunk).sum()))


def check_request(n: int, variant: str, config: LaunchConfig) -> None:
    """The checks that come before the device is touched (the executor runs them first, so a
    bad request is reported as such on a machine without CUDA too). The variant, Δ and sources
    were checked by the front door's request (:mod:`sssp.request`): asserted here."""
    assert variant in ("successors", "predecessors"), variant
    if n == 0:
        raise InvalidGraphError("the graph has no nodes")
    if config.loop == "legacy":
        raise InvalidGraphError("loop 'legacy' runs on sssp.gpu.runtime.GPUSolver, not engine 2")


@dataclass(frozen=True)
class _ClusterChoice:
    cluster: int = 0
    mb: int = 0
    lq: int = 0
    order: np.ndarray | None = None
    fallback: str = ""
    fusion_detail: str = ""
    spread: bool = False


def _choose_cluster(
    facts: GraphFacts,
    config: LaunchConfig,
    params: EngineParams,
    device: DeviceFacts,
    bands: Callable[[], Bands] | None,
) -> _ClusterChoice:
    """The cluster's size and whether the graph itself stays in shared memory
    (:func:`kernels.cluster_layout`), or the reason the persistent loop runs instead (wider
    distances, too many edges, or distances that do not fit)."""
    if device.compute_capability[0] < 9:
        return _ClusterChoice(fallback=f"thread-block clusters need sm_90 or newer ({device.arch})")
    if not params.packed:
        return _ClusterChoice(fallback="the cluster solver keeps 32-bit integer distances")
    optin = device.smem_per_block_optin
    largest = kernels.CLUSTER_SIZES[-1] if device.non_portable_clusters else 8
    lq, order, gate = 0, None, None
    if config.fuse:
        if bands is None:
            raise InvalidArgumentError(
                "the fused cluster loop needs the graph's bands (graph_bands)"
            )
        got = bands()
        lq, order, gate = kernels.CLUSTER_LOCAL_QUEUE, got.order, got.gate

    def fit(lq: int, order: np.ndarray | None) -> tuple[int, int] | None:
        return kernels.cluster_layout(
            facts.degrees,
            optin - kernels.CLUSTER_STATIC_SMEM,
            at_least=max(1, config.cluster),
            largest=largest,
            lq=lq,
            order=order,
        )

    # Fused across blocks (fuse=2) works with any placement: without bands it keeps its queues
    # and spreads the nodes v % C.
    spread = config.fuse == 2
    detail = ""
    layout = fit(lq, order)
    if layout is not None and order is not None:
        assert gate is not None  # set with the order
        fused, detail = gate(layout[0])
        if fused and spread:
            detail = detail.replace(": fused", ": in bands, fused across blocks")
        if not fused:
            if spread:
                detail = detail.replace("ran unfused", "nodes spread v % C, fused across blocks")
            log.info("fused cluster loop: %s", detail)
            lq, order = (lq if spread else 0), None
            layout = fit(lq, order)
    if layout is None:
        return _ClusterChoice(
            fallback=(
                f"{facts.n} nodes and {facts.m} edges do not fit in the shared memory "
                f"of {largest} blocks of {optin} bytes"
            ),
            fusion_detail=detail,
        )
    lq = lq if order is not None or spread else 0
    if spread and lq:  # a step runs a bucket: the queues take what shared memory is left
        lq = kernels.cluster_queue_room(
            facts.n, layout[0], layout[1], lq, optin - kernels.CLUSTER_STATIC_SMEM
        )
    return _ClusterChoice(layout[0], layout[1], lq, order, "", detail, spread and lq > 0)


def plan_engine(
    facts: GraphFacts,
    config: LaunchConfig | None,
    algorithm: str,
    variant: str,
    delta: int | float | None,
    device: DeviceFacts,
    *,
    wide: kernels.WideParams | None = None,
    host_mapped: bool | None = None,
    bands: Callable[[], Bands] | None = None,
) -> EnginePlan:
    """The plan of an engine-2 solver (see the module docstring).

    Parameters
    ----------
    facts : GraphFacts
    config : LaunchConfig, optional
        Default :meth:`LaunchConfig.default`.
    algorithm : {"crauser", "crauser-in", "crauser-inout", "martin", "near-far"}
    variant : {"successors", "predecessors"}
    delta : int or float, optional
        Near-far's bucket width, checked by the request (default
        :func:`sssp.cpu.nearfar.default_delta`, from ``facts.weight_sum``).
    device : DeviceFacts
    wide : kernels.WideParams, optional
        The wide loop's compile-time parameters (default: the contract's).
    host_mapped : bool, optional
        Whether the result pass should write mapped host memory (default: where the device can).
    bands : callable, optional
        ``bands() -> Bands`` (:func:`graph_bands`), called only when the fused cluster loop is
        asked for and possible.

    Raises
    ------
    InvalidGraphError
        A combination engine 2 does not run, or distances that do not fit in 64 bits.
    BackendUnavailableError
        An algorithm without a GPU version.
    """
    config = config or LaunchConfig.default()
    n, m = facts.n, facts.m
    check_request(n, variant, config)
    requested = loop = config.loop
    nearfar = algorithm == "near-far"
    if loop == "cluster" and not nearfar:
        raise InvalidGraphError(f"loop 'cluster' runs near-far only, not {algorithm!r}")
    eff_delta: int | float | None = None
    if nearfar:
        from ..cpu.nearfar import delta_rule, round_delta

        assert variant == "successors", variant
        if loop not in ("persistent", "cluster", "wide", "phast"):
            raise InvalidGraphError(
                f"near-far runs on the persistent, cluster, wide or phast loop, not {loop!r}"
            )
        if delta is None:
            if facts.weight_sum is None:
                raise InvalidArgumentError("the default delta needs the graph facts' weight_sum")
            eff_delta = delta_rule(n, m, facts.weight_sum, facts.is_float)
        else:
            eff_delta = round_delta(delta, facts.is_float)
    else:
        assert delta is None, delta
    if loop in ("wide", "phast") and not nearfar:
        raise InvalidGraphError(f"loop {loop!r} runs near-far only, not {algorithm!r}")
    params = engine_params_for(facts, algorithm, variant, config.relax.lanes)
    loop_fallback = ""
    if loop == "wide" and not params.packed:
        loop_fallback = "the wide loop takes 32-bit integer distances: persistent loop"
        loop = "persistent"
    if loop == "phast" and params.floating:
        loop_fallback = (
            "the phast loop takes integer weights (a contraction hierarchy's shortcut is an exact "
            "integer sum): persistent loop"
        )
        loop = "persistent"
    phast = loop == "phast"
    set_name = "phast" if phast else "nearfar" if nearfar else "engine"
    grid_async = False
    choice = _ClusterChoice()
    placement = None
    if loop == "cluster":
        choice = _choose_cluster(facts, config, params, device, bands)
        if choice.fallback:
            loop = "persistent"
            # Fused across blocks where no cluster holds the graph: the grid's version of it
            # (sssp_nf_async: a grid barrier per bucket), on 32-bit distances.
            grid_async = config.fuse == 2 and params.packed
            log.info(
                "cluster loop: %s; running %s",
                choice.fallback,
                "near-far across the grid" if grid_async else "the persistent loop",
            )
        else:
            set_name = "cluster"
            params = replace(params, relax_lanes=kernels.CLUSTER_LANES, cluster=choice.cluster)
            if choice.order is not None:
                placement = kernels.cluster_placement(choice.order, choice.cluster)
    cluster = choice.cluster if loop == "cluster" else 0
    kernel_set = KERNEL_SETS[set_name]
    key_dt, val_dt, w_dt = (np.dtype(t) for t in params.dtypes())

    # Shared memory and the persistent kernel's arguments.
    nb = 0
    if phast:  # the sweep's shared memory is its own (sssp.gpu.phast)
        local_limit = local_cap = local_smem = 0
    elif cluster:
        local_limit = local_cap = 0
        nb = kernels.cluster_slots(n, cluster)
        local_smem = kernels.cluster_smem_bytes(n, cluster, mb=choice.mb, lq=choice.lq)
    else:
        limit = config.local_limit
        local_limit = 8 * config.relax.block_size if limit < 0 else limit
        if variant == "predecessors":
            local_limit = 0  # pull scans every node each phase: one block would crawl
        # Near-far's block-local steps keep their lists in global memory: no shared queues.
        local_cap = 0 if nearfar else kernels.local_queue_capacity(local_limit)
        local_smem = kernels.local_queue_bytes(local_cap, val_dt.itemsize)
    degree = max(1, -(-m // n))
    sort_rows = "sort" in kernel_set and m > 0 and kernels.sorts_rows(params, facts.max_degree)

    ctrl0 = [0] * kernels.CTRL_WORDS
    ctrl0[kernels.CTRL_PHASE] = 1
    ctrl0[kernels.CTRL_LIMIT] = (
        kernels.nearfar_step_limit(n) if nearfar else kernels.engine_phase_limit(n)
    )
    ctrl0[kernels.CTRL_SORTED] = int(sort_rows)

    mapped = (
        device.can_map_host if host_mapped is None else bool(host_mapped) and device.can_map_host
    )
    wide_params = (wide or kernels.WideParams()) if loop == "wide" else None
    delta_bits = (
        kernels.nearfar_delta_bits(eff_delta, params.floating)
        if nearfar and eff_delta is not None
        else 0
    )
    split_rows = wide_params is not None and wide_params.split and delta_bits < kernels.UINT32_INF
    hist = kernels.NEARFAR_WORDS if nearfar else kernels.engine_history_len(n)

    # The buffers, in the order the executor allocates them. The predecessors variant walks the
    # reverse graph (the same sizes). Near-far: its counter rings only; the cluster loop keeps
    # its node state in shared memory (the keys and counters only).
    crit = None if nearfar else params.criterion
    grid_nf = nearfar and not cluster and not phast
    bufs: list[Buffer] = [
        Buffer("d_indptr", 8 * (n + 1), "upload"),
        Buffer("d_indices", 4 * m, "upload"),
        Buffer("d_weights", w_dt.itemsize * m, "upload"),
    ]
    if crit in ("out", "inout"):
        bufs.append(Buffer("d_omega", val_dt.itemsize * n, "upload"))
    if crit in ("in", "inout"):
        bufs.append(Buffer("d_iota", val_dt.itemsize * n, "upload"))
    # Near-far with packed keys keeps its step stamps in the keys' low words (sssp_nf_lower).
    if not (nearfar and params.packed):
        bufs.append(Buffer("d_settled", 4 * n))
    bufs.append(Buffer("d_key", key_dt.itemsize * n))
    if not params.packed:
        bufs.append(Buffer("d_pred", 4 * n))
    if not (cluster or phast):
        bufs += [Buffer("d_qF", 8 * n), Buffer("d_qR", 8 * n)]
    bufs.append(Buffer("d_cnt", 4 * hist))
    if not (cluster or phast):
        bufs.append(Buffer("d_thr", (val_dt.itemsize if not params.floating else 8) * hist))
    bufs.append(Buffer("d_ctrl", 4 * kernels.CTRL_WORDS))
    if placement is not None:  # each node's slot, and each slot's node
        bufs += [
            Buffer("d_place", placement[0].nbytes, "upload"),
            Buffer("d_slots", placement[1].nbytes, "upload"),
        ]
    if grid_async:  # a queued bit per node, and the words of every block the grid can hold
        blocks = device.sm_count * kernels.ASYNC_MAX_BLOCKS_PER_SM
        bufs += [
            Buffer("d_qbits", 4 * kernels.nearfar_flag_words(n)),
            Buffer("d_async", 4 * kernels.async_words(blocks)),
        ]
    if grid_nf:  # the distance each node last pushed with, and its far-pile flags (bits)
        bufs += [
            Buffer("d_pushed", val_dt.itemsize * n),
            Buffer("d_infar", 4 * kernels.nearfar_flag_words(n)),
        ]
    bufs.append(Buffer("d_result_scratch", 8 * kernels.RESULT_SCRATCH_WORDS, "zero"))
    if not mapped:  # the result pass writes device buffers, and copies follow it
        bufs += [
            Buffer("d_out_dist", 8 * n),
            Buffer("d_out_pred", 4 * n),
            Buffer("d_info", 4 * kernels.RESULT_WORDS),
        ]
    if wide_params is not None:
        bufs += [
            Buffer("d_hubs", 16 * hub_entries(facts.degrees, wide_params)),
            Buffer("d_w", 4 * kernels.WIDE_WORDS),
        ]
    if split_rows:
        bufs.append(Buffer("d_light", 4 * n))

    return EnginePlan(
        n=n,
        m=m,
        algorithm=algorithm,
        variant=variant,
        config=config,
        requested_loop=requested,
        loop=loop,
        loop_fallback=loop_fallback,
        cluster_fallback=choice.fallback,
        fusion_detail=choice.fusion_detail,
        params=params,
        kernel_set_name=set_name,
        kernel_configs={name: kernel_config(config, name) for name in kernel_set},
        delta=eff_delta,
        delta_bits=delta_bits,
        cluster=cluster,
        cluster_mb=choice.mb if cluster else 0,
        cluster_lq=choice.lq if cluster else 0,
        cluster_spread=choice.spread if cluster else False,
        grid_async=grid_async,
        nb=nb,
        placement=placement,
        local_limit=local_limit,
        local_cap=local_cap,
        local_smem=local_smem,
        degree=degree,
        sort_rows=sort_rows,
        ctrl0=tuple(ctrl0),
        history_len=hist,
        counters=kernels.RES_COUNTERS_NEARFAR if nearfar else kernels.RES_COUNTERS_PHASES,
        layout=(
            kernels.RES_PACKED
            if params.packed
            else kernels.RES_F64
            if params.floating
            else kernels.RES_U64
        ),
        # Packed Crauser keys carry the predecessor already; the others build it in a tree pass.
        tree_pass=nearfar or not params.packed,
        dist_dtype="float64" if params.floating else "int64",
        out_kind=kernels.OUT_F64 if params.floating else kernels.OUT_I64,
        mapped=mapped,
        result_grid=(
            (kernels.result_blocks(n, device.sm_count), 1, 1),
            (kernels.RESULT_BLOCK, 1, 1),
        ),
        wide=wide_params,
        split_rows=split_rows,
        buffers=tuple(bufs),
        sm_count=device.sm_count,
        smem_per_sm=device.smem_per_sm,
    )


# -- many sources at once ------------------------------------------------------------------------
BATCH_BLOCK = 1024
"""Threads per block of the batch kernel unless asked otherwise."""


@dataclass(frozen=True)
class BatchPlan:
    """The cluster solver's batch kernel for one solver (:func:`plan_batch`): every cluster of
    its grid solves source after source, so a batch of sources costs one launch and fills the
    device with as many sources as its multiprocessors hold."""

    params: EngineParams
    """The ``many`` build of the cluster solver."""
    cluster: int
    """Blocks per source (the fewest whose shared memory holds the distances)."""
    mb: int
    """Edges per block kept in shared memory (0: read from global memory)."""
    lq: int
    """The local queue's capacity (0: no local work)."""
    spread: bool
    """Whether the local work crosses blocks (the solver's ``fuse == 2``)."""
    nb: int
    smem: int
    """Dynamic shared memory per block."""
    block: int
    placement: tuple[np.ndarray, np.ndarray] | None = field(repr=False, compare=False)
    delta_bits: int
    limit: int
    """The step guard of each solve."""

    @property
    def detail(self) -> str:
        kind = "graph in shared memory" if self.mb else "graph in global memory"
        fused = (", local work across blocks" if self.spread else ", local work") if self.lq else ""
        return (
            f"batch kernel: {self.cluster} block(s) of {self.block} threads a source, {kind}{fused}"
        )


def plan_batch(
    plan: EnginePlan,
    facts: GraphFacts,
    device: DeviceFacts,
    *,
    bands: Callable[[], Bands] | None = None,
    cluster: int = 0,
    block: int = 0,
) -> BatchPlan | str:
    """The batch kernel's plan for the solver of ``plan``, or why it cannot run one.

    It runs near-far with the solver's Δ and 32-bit distances on sm_90 or newer, whatever
    loop the solver's single solves take, on the fewest blocks of a cluster whose shared memory
    holds the distances (``cluster``: exactly that many). With ``bands`` and a configuration that
    asks for fusion, it places the nodes in bands and works locally where the gate allows.
    ``block``: threads per block (default :data:`BATCH_BLOCK`)."""
    if not plan.nearfar:
        return f"the batch kernel runs near-far, not {plan.algorithm}"
    if device.compute_capability[0] < 9:
        return f"thread-block clusters need sm_90 or newer ({device.arch})"
    if not plan.params.packed:
        return "the batch kernel keeps 32-bit integer distances"
    largest = kernels.CLUSTER_SIZES[-1] if device.non_portable_clusters else 8
    sizes = [c for c in kernels.CLUSTER_SIZES if c <= largest and (not cluster or c == cluster)]
    if not sizes:
        raise InvalidArgumentError(f"batch cluster {cluster}: use one of {kernels.CLUSTER_SIZES}")
    block = block or BATCH_BLOCK
    if block % 32 or not 32 <= block <= 1024:
        raise InvalidArgumentError(f"batch block {block}: a multiple of 32 from 32 to 1024")
    budget = device.smem_per_block_optin - kernels.CLUSTER_STATIC_SMEM
    layout = kernels.batch_layout(facts.degrees, budget, sizes)
    lq, placement = 0, None
    if layout is not None and plan.config.fuse and bands is not None:
        got = bands()
        fused_layout = kernels.batch_layout(
            facts.degrees, budget, sizes, lq=kernels.CLUSTER_LOCAL_QUEUE, order=got.order
        )
        if fused_layout is not None and got.gate(fused_layout[0])[0]:
            layout, lq = fused_layout, kernels.CLUSTER_LOCAL_QUEUE
            placement = kernels.cluster_placement(got.order, layout[0])
    spread = plan.config.fuse == 2
    if layout is not None and spread and not lq:  # across blocks without bands: nodes v % C
        spread_layout = kernels.batch_layout(
            facts.degrees, budget, sizes, lq=kernels.CLUSTER_LOCAL_QUEUE
        )
        if spread_layout is not None:
            layout, lq = spread_layout, kernels.CLUSTER_LOCAL_QUEUE
    if layout is None:
        return (
            f"{facts.n} nodes do not fit in the shared memory of "
            f"{sizes[-1]} blocks of {device.smem_per_block_optin} bytes"
        )
    c, mb = layout
    params = replace(plan.params, relax_lanes=kernels.CLUSTER_LANES, cluster=c, many=True)
    return BatchPlan(
        params=params,
        cluster=c,
        mb=mb,
        lq=lq,
        spread=spread and lq > 0,
        nb=kernels.cluster_slots(facts.n, c),
        smem=kernels.cluster_smem_bytes(facts.n, c, mb=mb, lq=lq),
        block=block,
        placement=placement,
        delta_bits=plan.delta_bits,
        limit=plan.ctrl0[kernels.CTRL_LIMIT],
    )
