"""Engine 2 (``kernels/sssp_engine.cu``): device-resident phases on frontier and fringe queues.

One solver object holds the graph on the device and runs the phase loop in one of three ways
(:data:`sssp.config.LOOPS`): a persistent kernel with a grid barrier, a CUDA graph WHILE node
(:mod:`sssp.gpu.cudagraph`, the one module that uses NVIDIA's ``cuda-bindings``), or host
launches that poll the device every few phases. All three run the same relax and settle steps,
so they give the same distances, predecessors and phase counts.

Near-far runs on the persistent loop, on the cluster loop: one thread-block cluster whose
shared memory holds every distance (``kernels/sssp_cluster.cu``), when the graph fits, or on the
wide loop (:mod:`sssp.gpu.wide`).

What to compile, allocate and launch is decided by :func:`sssp.gpu.plan.plan_engine` from the
graph's and the device's facts; :class:`EngineSolver` executes that plan.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

import kernels

from ..config import ConfigSource, KernelConfig, LaunchConfig
from ..errors import InvalidGraphError, SolverError
from ..graph import Graph
from ..result import LazyStats, SSSPResult, completed
from .base import DeviceBuffers, PackedLaunch, apply_l1, compile_cubin
from .batch import BatchKernel
from .device import DeviceInfo, activate, device_info, driver
from .hostmem import HostArrays
from .plan import (
    BUFFER_NAMES,
    DeviceFacts,
    EnginePlan,
    GraphFacts,
    check_request,
    graph_bands,
    kernel_config,
    plan_batch,
    plan_engine,
    shortcut_choice,
)
from .wide import WideLoop

if TYPE_CHECKING:
    from ..hierarchy import Hierarchy
    from .phast import PhastSweep

log = logging.getLogger(__name__)


@dataclass
class _Lane:
    """The state of one solve in flight: its stream and the device buffers a solve writes.
    Lane 0 is the solver's own; the cluster loop adds lanes so that several sources, each in
    one thread-block cluster, run at once (:meth:`EngineSolver.solve_rows`)."""

    stream: Any
    d_key: Any
    d_pred: Any
    d_cnt: Any
    d_ctrl: Any
    d_scratch: Any
    args: tuple | None = None
    """The contract's argument list with this lane's buffers (:meth:`EngineSolver.args`), built
    at its first launch: the buffers do not change while the solver lives."""
    ctrl_ready: bool = False
    """Whether the control words hold what a phast sweep needs of them (the initial words, no
    abort): the sweep writes every word a solve reads, so they are copied only before the
    lane's first sweep and after an abort."""
    result_launch: Any = None
    """The result pass's arguments with this lane's buffers, packed at its first result pass
    (:meth:`EngineSolver._result_pass`), and the function that writes the ones that change."""


def min_weights(indptr: np.ndarray, weights: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(has edges, minimum weight per row) of a CSR; rows without edges get 0 in the second."""
    deg = np.diff(indptr)
    has = deg > 0
    out = np.zeros(n, dtype=weights.dtype if weights.size else np.int64)
    if weights.size and has.any():
        out[has] = np.minimum.reduceat(weights, indptr[:-1][has])
    return has, out


def _device_facts(cuda: Any, info: DeviceInfo, non_portable: Any) -> DeviceFacts:
    """What the plan needs of device ``info`` (pycuda's ``driver`` as ``cuda``)."""
    dev = cuda.Device(info.ordinal)
    a = cuda.device_attribute
    return DeviceFacts(
        compute_capability=info.compute_capability,
        sm_count=info.sm_count,
        smem_per_block_optin=dev.get_attribute(a.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
        smem_per_sm=dev.get_attribute(a.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
        can_map_host=bool(dev.get_attribute(a.CAN_MAP_HOST_MEMORY))
        and bool(dev.get_attribute(a.UNIFIED_ADDRESSING)),
        non_portable_clusters=non_portable is not None,
    )


def resident_blocks(
    func: Any, info: DeviceInfo, block: int, cuda: Any, dynamic_smem: int = 0
) -> int:
    """Blocks of ``func`` (``block`` threads each) that fit on one multiprocessor at once, from
    its registers and static shared memory and the device's limits (the occupancy rule; the
    persistent loop's grid barrier deadlocks on a grid that is not resident at once)."""
    dev = cuda.Device(info.ordinal)
    a = cuda.device_attribute
    regs_sm = dev.get_attribute(a.MAX_REGISTERS_PER_MULTIPROCESSOR)
    threads_sm = dev.get_attribute(a.MAX_THREADS_PER_MULTIPROCESSOR)
    smem_sm = dev.get_attribute(a.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
    blocks_sm = dev.get_attribute(a.MAX_BLOCKS_PER_MULTIPROCESSOR)
    fa = cuda.function_attribute
    regs = max(1, func.get_attribute(fa.NUM_REGS))
    smem = func.get_attribute(fa.SHARED_SIZE_BYTES) + dynamic_smem
    warps = -(-block // 32)
    regs_per_warp = -(-(regs * 32) // 256) * 256  # registers are allocated per warp in 256s
    by_regs = regs_sm // (regs_per_warp * warps)
    by_threads = threads_sm // block
    by_smem = smem_sm // (smem + 1024) if smem_sm else blocks_sm  # 1 KB reserved per block
    return max(0, min(blocks_sm, by_regs, by_threads, by_smem))


class EngineSolver(DeviceBuffers):
    """Engine-2 solver on one CUDA device, for many sources.

    Construction builds the plan (:func:`sssp.gpu.plan.plan_engine`, kept as ``plan``) from the
    graph's and the device's facts and executes it: compile, upload, allocate, launch shapes.

    Parameters
    ----------
    graph : Graph
    algorithm : {"crauser", "crauser-in", "crauser-inout", "martin", "near-far"}
        ``"near-far"`` is Δ-stepping (``kernels.NEARFAR_KERNELS``): successors variant, on the
        persistent or the cluster loop (``kernels.CLUSTER_KERNELS``; a graph whose distances do
        not fit in one cluster's shared memory, or that needs wider distances, runs on the
        persistent loop, and the result's ``stats["cluster_fallback"]`` says why).
    variant : {"successors", "predecessors"}
    config : LaunchConfig
        ``config.loop`` picks the loop mechanism (not ``"legacy"``: that is
        :class:`sssp.gpu.runtime.GPUSolver`).
    config_source : ConfigSource
    device : int
    sync_every : int
        Host loop: phases launched between two polls of the done flag.
    delta : int or float, optional
        Near-far's bucket width (default :func:`sssp.cpu.nearfar.default_delta`).
    host_mapped : bool, optional
        Whether the result pass writes the result arrays in host memory directly (page-locked
        and mapped into the device's address space); False writes device buffers and copies
        them. Default: where the device can map host memory.
    wide : kernels.WideParams, optional
        The wide loop's compile-time parameters (default: the contract's).
    hierarchy : sssp.hierarchy.Hierarchy, optional
        The phast loop's contraction hierarchy of ``graph`` where the caller has it (default:
        read from the cache or built, :func:`sssp.hierarchy.hierarchy_for`).
    """

    _stats: dict[str, Any] | None = None
    """What every result reports beside its own counts (:meth:`_static_stats`), built once."""

    # Device buffers, set from the plan (sssp.gpu.plan.BUFFER_NAMES; None where it has none).
    d_indptr: Any
    d_indices: Any
    d_weights: Any
    d_omega: Any
    d_iota: Any
    d_settled: Any
    d_key: Any
    d_pred: Any
    d_qF: Any
    d_qR: Any
    d_cnt: Any
    d_thr: Any
    d_ctrl: Any
    d_place: Any
    d_slots: Any
    d_pushed: Any
    d_infar: Any
    d_result_scratch: Any
    d_out_dist: Any
    d_out_pred: Any
    d_info: Any
    d_hubs: Any
    d_w: Any
    d_light: Any
    d_qbits: Any
    d_async: Any

    def __init__(
        self,
        graph: Graph,
        *,
        algorithm: str = "crauser",
        variant: str = "successors",
        config: LaunchConfig | None = None,
        config_source: ConfigSource = ConfigSource.DEFAULT,
        device: int = 0,
        sync_every: int = 16,
        delta: int | float | None = None,
        host_mapped: bool | None = None,
        wide: kernels.WideParams | None = None,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        # The plan decides (sssp.gpu.plan); this executes it. The checks that need no device
        # come first, so that a bad request reads the same without CUDA.
        check_request(graph.n, variant, config or LaunchConfig.default())
        self.cuda = driver()
        self.context = activate(device)  # what it allocates belongs to this (sssp.gpu.device.adopt)
        self.info: DeviceInfo = device_info(device)
        self._non_portable = _non_portable_clusters(self.cuda)
        self.device_facts = _device_facts(self.cuda, self.info, self._non_portable)
        # Shortcuts (LaunchConfig.shortcuts): the loops relax ``relax_graph``, a copy with them;
        # Δ's rule and the predecessor tree stay those of the graph itself.
        facts = GraphFacts.of(graph, weight_sum=algorithm == "near-far" and delta is None)
        rho, cap, self.shortcut_fallback = shortcut_choice(facts, config, algorithm)
        self.relax_graph = graph
        if rho:
            from ..cpu.nearfar import delta_rule
            from ..shortcuts import with_shortcuts

            if delta is None:
                assert facts.weight_sum is not None  # summed above for near-far's rule
                delta = delta_rule(facts.n, facts.m, facts.weight_sum, facts.is_float)
            self.relax_graph = with_shortcuts(graph, rho, max_weight=cap)
            facts = GraphFacts.of(self.relax_graph, weight_sum=False)
        relax_graph = self.relax_graph
        self.plan: EnginePlan = plan_engine(
            facts,
            config,
            algorithm,
            variant,
            delta,
            self.device_facts,
            wide=wide,
            host_mapped=host_mapped,
            bands=lambda: graph_bands(relax_graph),
        )
        self.graph, self.algorithm, self.variant = graph, algorithm, variant
        self.config_source = config_source
        self.sync_every = max(1, int(sync_every))
        self._adopt(self.plan)
        self._compile()
        self._allocate()
        cuda = self.cuda
        self.h_ctrl = cuda.pagelocked_empty(kernels.CTRL_WORDS, np.uint32)  # the host loop's polls
        self.ctrl0 = cuda.pagelocked_zeros(
            kernels.CTRL_WORDS, np.uint32
        )  # an async copy, no staging
        self.ctrl0[:] = self.plan.ctrl0
        self.stream = cuda.Stream()
        self._shapes = self._launch_shapes()
        self.rows_sorted = self._sort_rows()
        self._spares: dict[str, tuple[np.ndarray, int]] = {}  # the solver's own result blocks
        self._setup_result_pass()
        self._lane0 = _Lane(
            self.stream, self.d_key, self.d_pred, self.d_cnt, self.d_ctrl, self.d_result_scratch
        )
        self._lanes: list[_Lane] | None = None
        self._cluster_tail: tuple | None = None
        self._last_gpu_s = 0.0  # the last solve's device time (the pool grows behind longer ones)
        self._step_limit = (
            kernels.nearfar_step_limit(self.n)
            if self.nearfar
            else kernels.engine_phase_limit(self.n)
        )
        self._copy_stream: Any = None
        self._stage_cache: dict[tuple, list[dict[str, Any]]] = {}
        self._copier: Any = None
        self._events = (
            cuda.Event(),
            cuda.Event(),
            cuda.Event(),
        )  # start, loop done, result in host memory
        self._closed = False
        self._batch: BatchKernel | str | None = None  # made at the first batch (or why none)
        self.batch_options: dict[str, int] = {}
        """``cluster`` and ``block`` of the batch kernel (:func:`sssp.gpu.plan.plan_batch`) over
        the configuration's ``batch_cluster`` and ``batch_block``, read when it is made (probes
        set them, then drop ``_batch``)."""
        self._wide: WideLoop | None = None
        if self.loop == "wide":
            self._wide = WideLoop(
                self,
                lambda func, block: resident_blocks(func, self.info, block, cuda),
                self.plan.wide,
            )
        # The reverse CSR first: the hierarchy's arrays are the solver's last uploads.
        self._pull_tree = self._setup_pull_tree() if self.loop == "phast" else None
        # The result pass's tree arguments where it finds the predecessors (as ints).
        tree = self._pull_tree or (0, 0, 0, 0)
        self._tree_args = tuple(int(x) for x in tree)
        self._phast: PhastSweep | None = None
        if self.loop == "phast":
            from .phast import PhastSweep

            self._phast = PhastSweep(
                self,
                lambda func, block, dyn: resident_blocks(func, self.info, block, cuda, dyn),
                hierarchy,
            )
        self._graph = None
        if self.loop == "graph":
            from .cudagraph import PhaseGraph

            self._graph = PhaseGraph(self)
        self.config_detail = ""
        """Why this configuration (set by :class:`sssp.Solver` after a tuned look-up); results
        carry it as ``stats["config_detail"]``."""

    # -- executing the plan --------------------------------------------------------------------
    def _adopt(self, plan: EnginePlan) -> None:
        """The plan's decisions as the solver's attributes (what the solve, the statistics and
        the tools read)."""
        self.config = plan.config
        self.loop = plan.loop
        self.nearfar = plan.nearfar
        self.kernel_set = plan.kernel_set
        self.delta: int | float | None = plan.delta
        self.params = plan.params
        self.cluster, self.cluster_mb, self.cluster_lq = (
            plan.cluster,
            plan.cluster_mb,
            plan.cluster_lq,
        )
        self.cluster_spread = plan.cluster_spread
        self.grid_async = plan.grid_async
        self.nb = plan.nb
        self._placement = plan.placement
        self.cluster_fallback = plan.cluster_fallback
        self.fusion_detail = plan.fusion_detail  # why a configuration asking for fusion ran so
        self.loop_fallback = plan.loop_fallback  # why a configuration asking for wide runs another
        self.key_dtype, self.val_dtype, self.weight_dtype = plan.dtypes
        self.n = plan.n
        self.local_limit, self.local_cap = plan.local_limit, plan.local_cap
        self.local_smem, self.degree = plan.local_smem, plan.degree
        self._delta_bits = plan.delta_bits

    def _compile(self) -> None:
        """Load the plan's module and kernels, each with its L1 state."""
        cuda, variant = self.cuda, self.variant
        self.module = cuda.module_from_buffer(compile_cubin(self.params, self.info.arch))
        self.funcs: dict[str, Any] = {}
        self.l1_applied: dict[str, str] = {}
        for name, spec in self.kernel_set.items():
            func = self.module.get_function(spec.cuda_name(variant))
            func.prepare(spec.arg_format)
            self.l1_applied[name] = apply_l1(func, self.plan.kernel_configs[name].l1)
            self.funcs[name] = func

    def _allocate(self) -> None:
        """The plan's device buffers, in its order, as attributes of their names (None for the
        names it has none of); uploads from the graph (the predecessors variant walks the
        reverse graph), the node minima of the criterion and the cluster placement."""
        graph, plan = self.graph, self.plan
        g = self.relax_graph if self.variant == "successors" else graph.reverse()
        inf_val = np.inf if self.params.floating else np.iinfo(self.val_dtype).max
        host = {
            "d_indptr": lambda: g.indptr.astype(np.int64, copy=False),
            "d_indices": lambda: g.indices.astype(np.int32, copy=False),
            "d_weights": lambda: g.weights.astype(self.weight_dtype),
            "d_omega": lambda: self._node_minima(graph, inf_val),
            "d_iota": lambda: self._node_minima(graph.reverse(), inf_val),
            "d_place": lambda: _placement(plan)[0],
            "d_slots": lambda: _placement(plan)[1],
        }
        self._buffers: list[Any] = []
        self._nbytes = 0
        for name in BUFFER_NAMES:
            setattr(self, name, None)
        for buf in plan.buffers:
            if buf.fill == "upload":
                array = np.ascontiguousarray(host[buf.name]())
                assert array.nbytes == buf.nbytes, (buf.name, array.nbytes, buf.nbytes)
                dev = self._upload(array)
            else:
                dev = self._alloc(buf.nbytes)
                if buf.fill == "zero":
                    self.cuda.memset_d8(dev, 0, buf.nbytes)
            setattr(self, buf.name, dev)
        self._tree_csr: tuple[Any, Any, Any] | None = None
        if self.relax_graph is not graph:  # the tree walks the graph's own edges
            self._tree_csr = (
                self._upload(graph.indptr.astype(np.int64, copy=False)),
                self._upload(graph.indices.astype(np.int32, copy=False)),
                self._upload(graph.weights.astype(self.weight_dtype)),
            )

    RESULT_PASS_TREE = True
    """Whether a phast solver's result pass finds the predecessors itself
    (:meth:`_setup_pull_tree`); off, the tree pass does, after a cleared ``pred``. Both are
    tested on the GPU (``tests/test_gpu_nearfar.py``); ``benchmarks/tree_ab.py`` times the
    two."""
    PULL_TREE_MAX_IN_DEGREE = 1024
    """The most incoming edges a node may have for the result pass to find the predecessors
    itself (a thread a node, :meth:`_setup_pull_tree`); past it the tree pass runs."""
    PULL_TREE_MAX_MEAN_DEGREE = 64.0
    """The most edges a node on average for the result pass to find the predecessors: its
    thread reads a node's incoming edges four at a time, where the tree pass spreads a node's
    edges over the configuration's lanes. On an H100 the result pass saved about 10 us a solve
    of fe_body (7 edges a node, run 169); reading one edge at a time it cost 2-17 us of GPU time
    on vibrobox and bcsstk29 (27 and 43, run 168), four at a time it saved 3-6 (run 172).
    Denser graphs were not measured."""

    def _setup_pull_tree(self) -> tuple[Any, Any, Any, np.int32] | None:
        """The reverse graph's CSR on the device, for a result pass that finds each node's
        predecessor from its incoming edges (``kernels.RESULT_KERNEL``'s ``tree_ptr``): where the
        solve's last kernel writes every distance (the phast sweep), a solve then needs neither
        the tree pass nor a cleared ``pred`` (two commands and 4-14 us of a small graph's GPU
        time, ``benchmarks/results/h200/phast_probe_split_h100_run155.csv``), for 12 bytes an edge
        of device memory (16 with 64-bit weights). None for real weights (the pull compares
        integer sums), for a graph of more than :data:`PULL_TREE_MAX_MEAN_DEGREE` edges a node
        on average and for a node of more than :data:`PULL_TREE_MAX_IN_DEGREE` incoming edges."""
        graph = self.graph
        if not self.RESULT_PASS_TREE or self.params.floating or graph.n == 0:
            return None
        if graph.m > self.PULL_TREE_MAX_MEAN_DEGREE * graph.n:
            return None
        rev = graph.reverse()
        if rev.m and int(rev.out_degree().max()) > self.PULL_TREE_MAX_IN_DEGREE:
            return None
        return (
            self._upload(rev.indptr.astype(np.int64, copy=False)),
            self._upload(rev.indices.astype(np.int32, copy=False)),
            self._upload(rev.weights.astype(self.weight_dtype)),
            np.int32(self.weight_dtype.itemsize),
        )

    def _setup_result_pass(self) -> None:
        """The result pass (``kernels.RESULT_KERNEL``) and the host memory it writes: result
        arrays from a pool of page-locked blocks mapped into the device's address space, and a
        mapped summary of :data:`kernels.RESULT_WORDS` words. Where the plan does not map host
        memory, the pass writes the plan's device buffers and three copies follow it."""
        cuda, plan = self.cuda, self.plan
        self.result_module = cuda.module_from_buffer(
            compile_cubin(kernels.ResultParams(), self.info.arch)
        )
        self._result_func = self.result_module.get_function(kernels.RESULT_KERNEL.cuda_name())
        self._result_func.prepare(kernels.RESULT_KERNEL.arg_format)
        self.mapped = plan.mapped
        self._host = HostArrays(cuda, mapped=self.mapped, keep=None)
        self.h_info, info_ptr = self._host.take(kernels.RESULT_WORDS, np.uint32)
        self._info64 = self.h_info.view(np.uint64)
        if self.mapped:
            self._d_out = None
            self._d_info = info_ptr
        else:
            self._d_out = (self.d_out_dist, self.d_out_pred)
            self._d_info = self.d_info
        self._dist_dtype = np.dtype(plan.dist_dtype)
        self._layout = plan.layout
        self._counters = plan.counters
        self._history_len = plan.history_len
        self._result_grid = plan.result_grid
        self._tree_pass = plan.tree_pass
        self._poison_host: int | None = None
        n = self.n
        self.held_results = max(
            self.HELD_RESULTS_MIN,
            self.HELD_RESULT_BYTES // max(1, n * (self._dist_dtype.itemsize + 4)),
        )
        """Results of each kind that may be held in page-locked blocks at once; past them a solve
        returns a copy of the solver's own block."""
        # The first results' blocks and the solver's own (the spare a solve writes and copies out
        # of once the caller holds every block), allocated here rather than on a solve's way to
        # its result: one slab per array kind, as many blocks as SLAB_BYTES holds, at least
        # HELD_RESULTS_MIN and the spare. An allocation between the solve's launch and its
        # result pass stalls the device: 4.5 ms of a road-1M solve's 0.5 ms (run 205).
        for d in (self._dist_dtype, np.dtype(np.int32)):
            count = max(self.HELD_RESULTS_MIN, self.SLAB_BYTES // max(1, n * d.itemsize))
            self._host.reserve(n, d, limit=self.held_results + 1, count=count + 1)
            self._spares[d.name] = self._host.take(n, d)

    def _sort_rows(self) -> bool:
        """Sort the device copy of every row by weight once where the plan says so
        (``kernels.sorts_rows``; every solve is told by ``CTRL_SORTED`` in the plan's control
        words): Crauser's bounded relax then stops at a frontier node's first edge above the
        bound."""
        if not self.plan.sort_rows:
            return False
        grid, block = self._shapes["sort"]
        self.funcs["sort"].prepared_call(
            grid, block, self.d_indptr, self.d_indices, self.d_weights, np.int32(self.n)
        )
        self.cuda.Context.synchronize()
        return True

    def _kernel_config(self, name: str) -> KernelConfig:
        return kernel_config(self.config, name)

    def _node_minima(self, g: Graph, inf_val: float | int) -> np.ndarray:
        has, mins = min_weights(g.indptr, g.weights, g.n)
        out = mins.astype(self.val_dtype)
        out[~has] = inf_val
        return out

    def _launch_shapes(self) -> dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]]:
        if self.cluster:
            return self._cluster_shapes()
        if self.local_smem:  # static plus dynamic may pass the 48 KB default: always opt in
            self.funcs["persistent"].set_attribute(
                self.cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, self.local_smem
            )
        shapes = {}
        sms = self.info.sm_count
        for name in self.kernel_set:
            bs = self.plan.kernel_configs[name].block_size
            dyn = self.local_smem if name == "persistent" else 0
            fits = resident_blocks(self.funcs[name], self.info, bs, self.cuda, dyn)
            if name == "persistent":
                blocks = sms * self._persistent_blocks(fits, bs)
            else:
                blocks = self.plan.grid_blocks(name, fits)
            shapes[name] = ((blocks, 1, 1), (bs, 1, 1))
        return shapes

    def _cluster_shapes(self) -> dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]]:
        """One cluster of ``self.cluster`` blocks with its node state in shared memory (all of it
        asked for: carveout 100 %), and the predecessor pass over the whole device."""
        cuda, func = self.cuda, self.funcs["solve"]
        fa = cuda.function_attribute
        func.set_attribute(fa.MAX_DYNAMIC_SHARED_SIZE_BYTES, self.local_smem)
        func.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, 100)
        if self.cluster > 8:
            func.set_attribute(self._non_portable, 1)
        self.l1_applied["solve"] = f"shared {self.local_smem} B, carveout 100"
        bs = self.plan.kernel_configs["solve"].block_size
        tree_bs = self.plan.kernel_configs["tree"].block_size
        return {
            "solve": ((self.cluster, 1, 1), (bs, 1, 1)),
            "tree": ((self.plan.grid_blocks("tree", 0), 1, 1), (tree_bs, 1, 1)),
        }

    def _persistent_blocks(self, fits: int, block: int) -> int:
        """Blocks per multiprocessor of the persistent kernel, every one of them resident: the
        plan's count and carveout (:meth:`EnginePlan.persistent_carveout`) applied to the loaded
        function; the driver's occupancy calculator (cuda-bindings) confirms the count when it
        is installed."""
        per_sm = self.plan.persistent_per_sm(fits)
        cuda, func = self.cuda, self.funcs["persistent"]
        fa = cuda.function_attribute
        pref, carveout = self.plan.persistent_carveout(
            per_sm, func.get_attribute(fa.SHARED_SIZE_BYTES)
        )
        func.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, carveout)
        self.l1_applied["persistent"] = (
            f"{pref} carveout={func.get_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT)}"
        )
        from .cudagraph import occupancy

        driver_count = occupancy(
            compile_cubin(self.params, self.info.arch),
            self.kernel_set["persistent"].cuda_name(self.variant),
            block,
            self.local_smem,
            pref,
            carveout,
        )
        if driver_count is not None and driver_count < per_sm:
            log.warning(
                "occupancy calculator: %d resident blocks per SM, not %d", driver_count, per_sm
            )
            per_sm = driver_count
        if per_sm < 1:
            raise InvalidGraphError(
                f"the persistent kernel does not fit at {block} threads per block"
            )
        return per_sm

    def args(self, lane: _Lane | None = None) -> tuple:
        """The contract's common argument list (``kernels.ENGINE_ARGS``) for this solver, with
        the per-solve buffers of ``lane`` (default: the solver's own)."""
        ln = lane or self._lane0
        if ln.args is not None:
            return ln.args
        null = np.uintp(0)
        ln.args = (
            self.d_indptr,
            self.d_indices,
            self.d_weights,
            self.d_omega or null,
            self.d_iota or null,
            self.d_settled or null,
            ln.d_key,
            ln.d_pred or null,
            self.d_qF or null,
            self.d_qR or null,
            ln.d_cnt,
            self.d_thr or null,
            ln.d_ctrl,
            np.int32(self.n),
        )
        return ln.args

    def _launch(self, name: str, *extra: Any, lane: _Lane | None = None) -> None:
        grid, block = self._shapes[name]
        shared = self.local_smem if name in ("persistent", "solve") else 0
        ln = lane or self._lane0
        args = self.args(ln)
        if name == "tree" and self._tree_csr is not None:
            args = self._tree_csr + args[3:]
        self.funcs[name].prepared_async_call(
            grid, block, ln.stream, *args, *extra, shared_size=shared
        )

    def memory_bytes(self) -> int:
        """Device memory held by this solver (graph, node state, queues, per-phase history)."""
        return self._nbytes

    def poison(self, byte: int = 0xA5) -> None:
        """Fill the output buffers with a pattern (testing aid: the solve must overwrite them),
        the host arrays of the next result included."""
        self._poison_host = byte
        self.cuda.memset_d8(self.d_key, byte, self.n * self.key_dtype.itemsize)
        if self.d_settled is not None:
            self.cuda.memset_d8(self.d_settled, byte, self.n * 4)
        if self.d_pred is not None:
            self.cuda.memset_d8(self.d_pred, byte, self.n * 4)

    # -- the solve -----------------------------------------------------------------------------
    def start(self, source: int, lane: _Lane | None = None) -> None:
        """Queue the initialisation for ``source`` (control words and the init kernel)."""
        ln = lane or self._lane0
        self._source = source
        if self.cluster:  # the cluster kernel sets its own state and writes every control word
            return
        if self._phast is not None:
            # The sweep writes every key and every control word a solve reads (a copy is a few
            # microseconds of the host's before the launch); the tree pass lowers the
            # predecessors from none (64-bit keys keep them apart).
            if not ln.ctrl_ready:
                self.cuda.memcpy_htod_async(ln.d_ctrl, self.ctrl0, ln.stream)
                ln.ctrl_ready = True
            if ln.d_pred is not None and self._pull_tree is None:
                self.cuda.memset_d32_async(ln.d_pred, 0xFFFFFFFF, self.n, ln.stream)
            return
        self.cuda.memcpy_htod_async(ln.d_ctrl, self.ctrl0, ln.stream)
        if self._wide is not None:
            self._wide.start(ln, source)
        elif self.nearfar:
            self._launch("init", self.d_pushed, self.d_infar, np.int32(source), lane=ln)
        else:
            self._launch("init", np.int32(source), lane=ln)

    def run_phases(self, lane: _Lane | None = None) -> None:
        """Queue (or run) the phase loop with this solver's loop mechanism, for the source of
        the last :meth:`start` (the host and graph loops run on the solver's own lane only)."""
        cuda, stream = self.cuda, self.stream
        ln = lane or self._lane0
        if self.cluster:
            if self._cluster_tail is None:  # the arguments after the source, the same each solve
                self._cluster_tail = (
                    np.int32(self.nb),
                    np.int32(kernels.CLUSTER_LIST_CAP),
                    np.int32(self.ctrl0[kernels.CTRL_LIMIT]),
                    np.int32(self.cluster_mb),
                    np.int32(self.cluster_lq),
                    np.int32(self.cluster_spread),
                    self.d_place or np.uintp(0),
                    self.d_slots or np.uintp(0),
                )
            self._launch(
                "solve",
                np.uint64(self._delta_bits),
                np.int32(self._source),
                *self._cluster_tail,
                lane=ln,
            )
        elif self._wide is not None:
            self._wide.run(ln)
        elif self._phast is not None:
            self._phast.run(ln, self._source, alone=lane is None)
        elif self.grid_async:  # near-far across the grid: a barrier per bucket
            self._launch(
                "async",
                self.d_pushed,
                self.d_infar,
                np.uint64(self._delta_bits),
                self.d_qbits,
                self.d_async,
                lane=ln,
            )
        elif self.nearfar:
            self._launch(
                "persistent",
                self.d_pushed,
                self.d_infar,
                np.uint64(self._delta_bits),
                np.int32(self.local_limit),
                lane=ln,
            )
        elif self.loop == "persistent":
            self._launch(
                "persistent",
                np.int32(self.local_limit),
                np.int32(self.local_cap),
                np.int32(self.degree),
                lane=ln,
            )
        elif self.loop == "graph":
            assert self._graph is not None  # made at construction for this loop
            self._graph.launch(stream)
        else:
            limit = kernels.engine_phase_limit(self.n)
            launched = 0
            while True:
                for _ in range(self.sync_every):
                    self._launch("relax")
                    self._launch("settle", np.uint64(0))
                launched += self.sync_every
                cuda.memcpy_dtoh_async(self.h_ctrl, self.d_ctrl, stream)
                stream.synchronize()
                if self.h_ctrl[kernels.CTRL_DONE] or launched > limit:
                    break

    def solve(
        self,
        source: int,
        *,
        profile: bool = False,
        return_predecessors: bool = True,
        t0: float | None = None,
    ) -> SSSPResult:
        """Distances and, with ``return_predecessors``, the predecessor tree from ``source``.

        The result pass writes both straight into page-locked host arrays that the result owns
        (:mod:`sssp.gpu.hostmem`). ``timings["wall"]`` (also ``"total"``) runs from ``t0`` (the
        caller's clock at the call, default: entering this method) until the result is
        assembled; ``timings["gpu"]`` is CUDA-event time from the first initialisation command
        until the result is in host memory, ``timings["loop"]`` until the phase loop ended.
        ``profile`` is accepted for the other solvers' signature and changes nothing here.
        """
        t0 = time.perf_counter() if t0 is None else t0
        if self._closed:
            raise SolverError("this GPU solver is closed: make a new one")
        n = self.n
        source = int(source)
        assert 0 <= source < n, source
        stream = self.stream
        ev_start, ev_loop, ev_end = self._events
        ev_start.record(stream)
        t_queued = time.perf_counter()
        self.start(source)
        self.run_phases()
        ev_loop.record(stream)
        if return_predecessors and self._tree_pass and self._pull_tree is None:
            if self._wide is not None:
                self._wide.tree(self._lane0)
            else:
                self._launch("tree")
        # The result's blocks are taken while the device works on the solve: only the result
        # pass, queued next, needs them.
        fill, self._poison_host = self._poison_host, None
        dist, dist_ptr, dist_spare = self._result_array(n, self._dist_dtype, fill)
        pred, pred_ptr, pred_spare = (
            self._result_array(n, np.dtype(np.int32), fill)
            if return_predecessors
            else (None, 0, False)
        )
        self._deliver(source, dist, dist_ptr, pred, pred_ptr)
        ev_end.record(stream)
        # While the device works: the memory of a copy out of the solver's own block, faulted in
        # now, or the next solve's blocks where their allocation hides behind this solve.
        dist_copy = _faulted_in(dist) if dist_spare else None
        pred_copy = _faulted_in(pred) if pred_spare and pred is not None else None
        # Where the host's share of the wall time goes: before the first command was queued
        # (checks), and from the end of the device's work to the returned result. The result is
        # built now, while the device works, where it holds the arrays the device writes: after
        # the wait only the device's words are read (run 170: 7.6 us from the device's end to
        # the returned result on an H100's host). The wall time is stopped last (the result's
        # mapping of timings is a view of this dict).
        timings = {"host_before": t_queued - t0}
        result = None
        if not (dist_spare or pred_spare):
            self._grow_pool(return_predecessors)
            result = self._assembled(dist, pred, source, timings)
        ev_end.synchronize()
        t_done = time.perf_counter()
        gpu_ms, loop_ms = ev_end.time_since(ev_start), ev_loop.time_since(ev_start)
        self._last_gpu_s = timings["gpu"] = gpu_ms * 1e-3
        timings["loop"] = loop_ms * 1e-3
        info = self.h_info
        c = kernels.RES_CTRL
        if info[c + kernels.CTRL_ABORT]:
            self._lane0.ctrl_ready = False  # the next solve copies the initial words again
            wait = (
                "the phast sweep's wait for a published distance"
                if self._phast is not None
                else "the persistent loop's grid barrier"
            )
            raise SolverError(f"{wait} timed out: the grid was not resident")
        iterations = int(info[c + kernels.CTRL_PHASE]) - 1
        if not info[c + kernels.CTRL_DONE] or (self.nearfar and iterations >= self._step_limit):
            raise SolverError(f"no termination within {self._step_limit} steps (n = {n})")
        # No free block of the pool: the caller gets a copy of the solver's own.
        if dist_copy is not None:
            self._copy_rows(dist_copy, dist)
            dist = dist_copy
        if pred_copy is not None:
            assert pred is not None  # a spare only where a tree was asked for
            self._copy_rows(pred_copy, pred)
            pred = pred_copy
        # Nodes reached only through flat tight edges (zero weights, or real sums that round the
        # weight away) have no strict parent: the reference's level rule completes them.
        flat = int(self._info64[kernels.RES_FLAT // 2]) if self.nearfar and pred is not None else 0
        if flat:
            from ..cpu.nearfar import tight_tree

            pred = tight_tree(self.graph, dist, source)
            result = None
        if result is None:
            result = self._assembled(dist, pred, source, timings)
        # The statistics are decoded only if the caller reads them, from a copy of the counters
        # (the next solve overwrites the solver's own).
        # The function holds no reference to the solver, so a held result never keeps its
        # device memory alive.
        stats = functools.partial(
            _stats_of,
            info.copy(),
            iterations,
            loop_ms,
            flat,
            self._wide.rounds if self._wide is not None else None,
            self.n,
            self.nearfar,
            bool(self.cluster_lq),
            self._static_stats(),
            self._phast.seeds_of(info) if self._phast is not None else None,
        )
        completed(result, iterations=iterations, stats=LazyStats(stats))
        t_end = time.perf_counter()
        timings["host_after"] = t_end - t_done
        timings["total"] = timings["wall"] = t_end - t0
        return result

    def _assembled(
        self, dist: np.ndarray, pred: np.ndarray | None, source: int, timings: dict[str, float]
    ) -> SSSPResult:
        """This solver's result of ``source`` around its arrays and timings, to be
        :func:`~sssp.result.completed` with the solve's iterations and statistics."""
        return SSSPResult.assembled(
            dist=dist,
            pred=pred,
            source=source,
            algorithm=self.algorithm,
            variant=self.variant,
            backend="gpu",
            iterations=-1,
            timings=timings,
            config=self.config,
            config_source=self.config_source,
        )

    HELD_RESULT_BYTES = 128 << 20
    """Page-locked memory for results the caller still holds (one distance and one tree array a
    result), and at least :data:`HELD_RESULTS_MIN` results: past it a solve writes the solver's
    own block and returns a copy. Within it a result is written by the device where the caller
    reads it; the pool grows only behind solves long enough to hide the allocation
    (:meth:`_grow_pool`)."""
    HELD_RESULTS_MIN = 4
    """Results of each kind whose blocks a solver makes when it is built, however large the
    graph (with the spare, :meth:`_result_array`): holding up to this many costs no copy. With
    two, the third to fifth held result of road-1M cost 2.4-7 ms against 0.5 (run 205)."""
    SLAB_BYTES = 4 << 20
    """Page-locked memory per array kind for the results' blocks a solver makes when it is built,
    in one allocation each. On the H200's host one allocation took 0.94 ms at 0.2 and 0.8 MB and
    1.5 ms at 3.5 MB (``pinned_alloc_run69.csv``), so two 4 MB slabs (about 20 results of a
    25 000-node graph) cost about what four single blocks did."""

    def _result_array(
        self, n: int, dtype: np.dtype, fill: int | None
    ) -> tuple[np.ndarray, int, bool]:
        """(array, its device address, whether it is the solver's spare block and must be copied
        out before the next solve)."""
        got = self._host.take(n, dtype, fill=fill, limit=0)  # a free block, never a new one
        if got is not None:
            return got[0], got[1], False
        spare, ptr = self._spares[dtype.name]  # made with the pool (_setup_result_pass)
        if fill is not None:
            spare.view(np.uint8).fill(fill)
        return spare, ptr, True

    PIN_SECONDS = (1e-3, 0.5e-9)
    """What allocating a page-locked, mapped block costs on the host: seconds, plus seconds a
    byte (H200 host, ``benchmarks/pinned_alloc.py``: 0.94 ms for 0.2 and 0.8 MB, 1.5 ms for
    3.5 MB, 23 ms for 48 MB). Copying a result out of the solver's own block into fresh memory
    costs less at every size (0.04 ms for 0.8 MB, 20 ms for 48 MB with its page faults)."""

    def _grow_pool(self, with_tree: bool) -> None:
        """Allocate the next solve's blocks now, while the device works, where they cost less
        than the last solve's device time (so the allocation hides behind it); otherwise a
        caller holding its results gets copies, which cost less than new page-locked memory.
        Only the kinds with no free block count: a slab holds more tree blocks than distance
        blocks (4 and 8 bytes an element), and pricing both (3.57 ms) when only the 2 MB
        distance block (2.05 ms) was short kept a 262 144-node grid's 3.55 ms solves from
        growing: its held results became copies, the likely cause of its 632 us of host time in
        run 101."""
        n, (fixed, per_byte) = self.n, self.PIN_SECONDS
        kinds = [self._dist_dtype] + ([np.dtype(np.int32)] if with_tree else [])
        short = [d for d in kinds if self._host.free_blocks(n, d) == 0]
        if not short or sum(fixed + per_byte * n * d.itemsize for d in short) >= self._last_gpu_s:
            return
        for d in short:
            self._host.reserve(n, d, limit=self.held_results + 1)  # and the spare

    def _result_pass(
        self, lane: _Lane, source: int, d_dist: Any, d_pred: Any, d_info: Any, out_kind: int
    ) -> None:
        """Queue the result pass on ``lane``. Its arguments are packed once a lane and only the
        ones that change are written (:class:`~sssp.gpu.base.PackedLaunch`): packing all 18 at
        each call put about 10 us of the host's between a single solve's sweep and its result
        pass, while the device waited (run 207, an H100's host)."""
        if lane.result_launch is None:
            spec = kernels.RESULT_KERNEL
            packed = PackedLaunch(spec.args, spec.arg_format)
            packed.set(
                key=lane.d_key,
                pred_in=lane.d_pred or 0,
                cnt=lane.d_cnt,
                ctrl=lane.d_ctrl,
                scratch=lane.d_scratch,
                n=self.n,
                layout=self._layout,
                counters=self._counters,
                history_len=self._history_len,
            )
            put = packed.writer(
                "dist",
                "pred",
                "info",
                "source",
                "out_kind",
                "tree_ptr",
                "tree_src",
                "tree_w",
                "tree_w_bytes",
            )
            lane.result_launch = (packed, put)
        packed, put = lane.result_launch
        pred = int(d_pred)
        tree = self._tree_args if pred else (0, 0, 0, 0)
        put(int(d_dist), pred, int(d_info), source, out_kind, *tree)
        grid, block = self._result_grid
        packed.launch(self._result_func, grid, block, lane.stream)

    def _deliver(
        self, source: int, dist: np.ndarray, dist_ptr: int, pred: np.ndarray | None, pred_ptr: int
    ) -> None:
        """Queue the result pass (and, without mapped host memory, the copies after it)."""
        cuda, stream = self.cuda, self.stream
        null = np.uintp(0)
        if self._d_out is None:
            d_dist, d_pred = np.uintp(dist_ptr), np.uintp(pred_ptr)
        else:
            d_dist, d_pred = self._d_out[0], self._d_out[1] if pred is not None else null
        d_info = np.uintp(self._d_info) if self._d_out is None else self._d_info
        kind = kernels.OUT_F64 if self.params.floating else kernels.OUT_I64
        self._result_pass(self._lane0, source, d_dist, d_pred, d_info, kind)
        if self._d_out is not None:
            cuda.memcpy_dtoh_async(dist, self._d_out[0], stream)
            if pred is not None:
                cuda.memcpy_dtoh_async(pred, self._d_out[1], stream)
            cuda.memcpy_dtoh_async(self.h_info, self._d_info, stream)

    # -- many sources --------------------------------------------------------------------------
    STAGE_BYTES = 64 << 20
    """Page-locked staging per chunk of rows (three chunks in flight: one being solved, one being
    copied into the caller's array, one being queued)."""
    MAX_LANES = 32
    """Most sources in flight at once on the cluster loop."""

    def lanes(self) -> list[_Lane]:
        """The solves that can be in flight at once: on the cluster loop as many clusters as the
        multiprocessors hold together (each with its own keys, counters and control words, the
        graph shared), on the other loops one (their grid fills the device)."""
        if self._lanes is not None:
            return self._lanes
        lanes = [self._lane0]
        if self.cluster:
            cuda = self.cuda
            dev = cuda.Device(self.info.ordinal)
            smem_sm = dev.get_attribute(cuda.device_attribute.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
            func = self.funcs["solve"]
            per_block = (
                func.get_attribute(cuda.function_attribute.SHARED_SIZE_BYTES)
                + self.local_smem
                + 1024
            )
            per_sm = max(1, smem_sm // per_block)
            count = max(1, min(self.MAX_LANES, self.info.sm_count * per_sm // self.cluster))
            for _ in range(count - 1):
                scratch = self._alloc(8 * kernels.RESULT_SCRATCH_WORDS)
                cuda.memset_d8(scratch, 0, 8 * kernels.RESULT_SCRATCH_WORDS)
                lanes.append(
                    _Lane(
                        cuda.Stream(),
                        self._alloc(self.key_dtype.itemsize * self.n),
                        None,
                        self._alloc(4 * kernels.NEARFAR_WORDS),
                        self._alloc(4 * kernels.CTRL_WORDS),
                        scratch,
                    )
                )
            self._stats = None  # memory_bytes changed
        self._lanes = lanes
        return lanes

    def batch(self) -> BatchKernel | None:
        """The batch kernel (:mod:`sssp.gpu.batch`) that solves many sources a launch, made at
        the first call; None where the plan allows none (the reason is logged once)."""
        if self._batch is None:
            options = {
                "cluster": self.config.batch_cluster,
                "block": self.config.batch_block,
                **self.batch_options,
            }
            got = plan_batch(
                self.plan,
                GraphFacts.of(self.relax_graph, weight_sum=False),
                self.device_facts,
                bands=lambda: graph_bands(self.relax_graph),
                **options,
            )
            if isinstance(got, str):
                log.info("many sources without the batch kernel: %s", got)
                self._batch = got
            else:
                self._batch = BatchKernel(self, got)
                self._stats = None  # memory_bytes changed
        return self._batch if isinstance(self._batch, BatchKernel) else None

    def many_stats(self, want_pred: bool) -> dict[str, Any]:
        """How :meth:`solve_rows` runs a batch: ``lanes`` (sources in flight at once) and
        ``batch`` (the batch kernel's layout, or why the lanes run instead)."""
        batch = None if want_pred else self.batch()
        if batch is not None:
            return {"lanes": batch.clusters, "batch": batch.detail}
        why = "predecessors asked for" if want_pred else str(self._batch)
        if self.loop in ("host", "wide", "phast"):
            return {"lanes": 1, "batch": f"one source at a time ({why})"}
        return {"lanes": len(self.lanes()), "batch": f"a launch per source ({why})"}

    def solve_rows(
        self,
        sources: np.ndarray,
        dist_out: np.ndarray,
        pred_out: np.ndarray | None = None,
        iterations_out: np.ndarray | None = None,
    ) -> float:
        """Solve from every source and write row ``i`` of ``dist_out`` (and of ``pred_out``) for
        ``sources[i]``; ``iterations_out[i]`` gets its phases or steps.

        Parameters
        ----------
        sources : ndarray of int, shape (k,)
            Node ids in ``[0, n)`` (checked by the caller; duplicates are solved again).
        dist_out : ndarray, shape (k, n)
            int64, int32, float64 or float32 (:data:`kernels.OUT_KINDS`), C-contiguous rows; an
            integer dtype on integer weights only, int32 only where every distance fits (the
            caller's check). Unreached: the dtype's largest value, or inf.
        pred_out : ndarray of int32, shape (k, n), optional
        iterations_out : ndarray of int64, shape (k,), optional

        Solves run in chunks of rows staged in device memory and copied to page-locked host
        memory. Without predecessors, wherever the batch kernel runs (:meth:`batch`), a chunk is
        one launch in which every cluster solves source after source; otherwise on the cluster
        loop several sources run at once (:meth:`lanes`), each its own launches, and on the
        other loops one after the other in one stream with no host round trip between them.
        Each chunk is copied into ``dist_out`` while the next is solved, one whole-chunk
        assignment per array, so an interrupt leaves every row either written or untouched.

        Returns
        -------
        float
            Device seconds (CUDA events) from the first queued command until the last row was in
            host memory.
        """
        if self._closed:
            raise SolverError("this GPU solver is closed: make a new one")
        k, n = len(sources), self.n
        kind = kernels.OUT_KINDS[dist_out.dtype.name]
        want_pred = pred_out is not None
        batch = None if want_pred else self.batch()
        lanes: list[_Lane] = []
        if batch is not None:
            batch.load_sources(sources)
            streams, in_flight = batch.streams, batch.clusters
        elif self.loop in ("host", "wide", "phast"):  # the host takes part in every solve
            return self._solve_rows_one_by_one(sources, dist_out, pred_out, iterations_out)
        else:
            lanes = self.lanes()
            streams, in_flight = [ln.stream for ln in lanes], len(lanes)
        row_bytes = (
            n * (dist_out.dtype.itemsize + (4 if want_pred else 0)) + 4 * kernels.RESULT_WORDS
        )
        capacity = max(1, self.STAGE_BYTES // row_bytes)
        # At least a row per source the device runs at once in a chunk, and about six chunks,
        # so that copying one chunk into the caller's array overlaps with solving the next.
        rows = max(1, min(capacity, k, max(in_flight, -(-k // 6))))
        stages = self._stages(
            min(capacity, 1 << (rows - 1).bit_length()),
            rows,
            dist_out.dtype,
            want_pred,
            min(3, -(-k // rows)),
        )
        starts = list(range(0, k, rows))
        began = self.cuda.Event()
        began.record(self._lane0.stream)
        for stream in streams:  # the other streams start after the mark (their clocks compare)
            if stream is not self._lane0.stream:
                stream.wait_for_event(began)
        from concurrent.futures import ThreadPoolExecutor

        copies: list[Any] = [None] * len(stages)
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sssp-rows")
        queued = []  # (stage index, first row, rows) queued but not yet copied
        flats: list[int] = []
        try:
            for idx, first in enumerate(starts):
                si = idx % len(stages)
                if copies[si] is not None:
                    flats += copies[si].result()  # the chunk that used this stage before is copied
                    copies[si] = None
                count = min(rows, k - first)
                if batch is not None:
                    stream = batch.streams[idx % len(batch.streams)]
                    batch.queue(
                        stream, first, count, stages[si]["d_dist"], stages[si]["d_info"], kind
                    )
                    self._queue_copy(stages[si], count, [stream], want_pred)
                else:
                    self._queue_chunk(
                        stages[si], sources[first : first + count], lanes, kind, want_pred
                    )
                queued.append((si, first, count))
                if len(queued) > 1:
                    psi, pfirst, pcount = queued.pop(0)
                    self._wait(stages[psi])
                    copies[psi] = pool.submit(
                        self._finish_chunk,
                        stages[psi],
                        sources,
                        pfirst,
                        pcount,
                        dist_out,
                        pred_out,
                        iterations_out,
                    )
            while queued:
                psi, pfirst, pcount = queued.pop(0)
                self._wait(stages[psi])
                flats += self._finish_chunk(
                    stages[psi], sources, pfirst, pcount, dist_out, pred_out, iterations_out
                )
        finally:
            # Whatever stops the batch (an error, Ctrl-C), the copies under way finish whole and
            # the device stops writing the staging memory before it goes back to the pool.
            for c in copies:
                if c is not None:
                    c.exception()
            for stream in streams:
                stream.synchronize()
            if self._copy_stream is not None:
                self._copy_stream.synchronize()
            pool.shutdown(wait=True)
        for c in copies:
            if c is not None:
                flats += c.result()
        # The last chunk's copy is the device's last work (one copy stream, in chunk order).
        device = stages[(len(starts) - 1) % len(stages)]["copied"].time_since(began) * 1e-3
        for i in flats:
            assert pred_out is not None  # flat parents are counted only with a tree
            pred_out[i] = self.solve(int(sources[i])).pred
        return device

    def _stages(
        self, size: int, rows: int, dtype: np.dtype, want_pred: bool, count: int
    ) -> list[dict[str, Any]]:
        """``count`` stagings of at least ``rows`` rows: kept ones of the same kind if any hold
        that many, else new ones of ``size`` rows (a power of two, so that batches of similar
        sizes share them). Their device memory is the solver's until it closes."""
        kind = (np.dtype(dtype).name, want_pred)
        fits = sorted(r for (d, p, r) in self._stage_cache if (d, p) == kind and r >= rows)
        key = (*kind, fits[0] if fits else size)
        have = self._stage_cache.setdefault(key, [])
        while len(have) < count:
            have.append(self._stage(key[2], dtype, want_pred))
            self._stats = None  # memory_bytes changed
        return have[:count]

    def _stage(self, rows: int, dtype: np.dtype, want_pred: bool) -> dict[str, Any]:
        """One chunk's staging: device rows the result passes write (device memory: the passes
        of many sources in flight wrote mapped host memory at a few GB/s, measured on the H200,
        run 58), and page-locked host rows one copy per array brings them to."""
        n, cuda = self.n, self.cuda
        dist = self._host.take(rows * n, dtype)[0].reshape(rows, n)
        pred = self._host.take(rows * n, np.int32)[0].reshape(rows, n) if want_pred else None
        info = self._host.take(rows * kernels.RESULT_WORDS, np.uint32)[0].reshape(
            rows, kernels.RESULT_WORDS
        )
        return {
            "dist": dist,
            "pred": pred,
            "info": info,
            "d_dist": self._alloc(dist.nbytes),
            "d_pred": self._alloc(pred.nbytes) if pred is not None else None,
            "d_info": self._alloc(info.nbytes + 8),  # and the batch kernel's job counter
            "events": [],
            "copied": cuda.Event(),
        }

    def _queue_chunk(
        self,
        stage: dict[str, Any],
        chunk: np.ndarray,
        lanes: list[_Lane],
        kind: int,
        want_pred: bool,
    ) -> None:
        n, item = self.n, stage["dist"].dtype.itemsize
        null = np.uintp(0)
        for j, s in enumerate(chunk):
            lane = lanes[j % len(lanes)]
            s = int(s)
            self.start(s, lane)
            self.run_phases(lane)
            if want_pred and self._tree_pass and self._pull_tree is None:
                self._launch("tree", lane=lane)
            self._result_pass(
                lane,
                s,
                np.uintp(int(stage["d_dist"]) + j * n * item),
                np.uintp(int(stage["d_pred"]) + j * n * 4) if want_pred else null,
                np.uintp(int(stage["d_info"]) + j * 4 * kernels.RESULT_WORDS),
                kind,
            )
        self._queue_copy(stage, len(chunk), [ln.stream for ln in lanes], want_pred)

    def _queue_copy(
        self, stage: dict[str, Any], count: int, streams: list[Any], want_pred: bool
    ) -> None:
        """One copy stream brings a chunk's rows to host memory once every stream that writes
        them has."""
        if self._copy_stream is None:
            self._copy_stream = self.cuda.Stream()
        copy = self._copy_stream
        events = stage["events"]
        events += [self.cuda.Event() for _ in range(len(streams) - len(events))]
        for stream, event in zip(streams, events[: len(streams)], strict=True):
            event.record(stream)
            copy.wait_for_event(event)
        self.cuda.memcpy_dtoh_async(stage["dist"][:count], stage["d_dist"], copy)
        if want_pred:
            self.cuda.memcpy_dtoh_async(stage["pred"][:count], stage["d_pred"], copy)
        self.cuda.memcpy_dtoh_async(stage["info"][:count], stage["d_info"], copy)
        stage["copied"].record(copy)

    def _wait(self, stage: dict[str, Any]) -> None:
        stage["copied"].synchronize()

    def _finish_chunk(
        self,
        stage: dict[str, Any],
        sources: np.ndarray,
        first: int,
        count: int,
        dist_out: np.ndarray,
        pred_out: np.ndarray | None,
        iterations_out: np.ndarray | None,
    ) -> list[int]:
        """Check a solved chunk and copy it into the caller's arrays; the rows whose trees need
        the host's completion."""
        info = stage["info"][:count]
        c = kernels.RES_CTRL
        bad = np.flatnonzero(info[:, c + kernels.CTRL_ABORT] != 0)
        if bad.size:
            for lane in self.lanes():
                lane.ctrl_ready = False
            raise SolverError(
                f"source {int(sources[first + bad[0]])}: the persistent loop's grid barrier timed out"
            )
        bad = np.flatnonzero(info[:, c + kernels.CTRL_DONE] == 0)
        if bad.size:
            raise SolverError(
                f"source {int(sources[first + bad[0]])}: no termination within the step limit"
            )
        pred = stage["pred"]
        flats: list[int] = []
        if pred is not None and self.nearfar:
            # Nodes reached only through flat tight edges: completed by the caller's thread
            # (the device's context is current there), as solve() completes them.
            flat = info[:, kernels.RES_FLAT] | info[:, kernels.RES_FLAT + 1]
            flats = [first + int(j) for j in np.flatnonzero(flat)]
        self._copy_rows(dist_out[first : first + count], stage["dist"][:count])
        if pred_out is not None:
            self._copy_rows(pred_out[first : first + count], pred[:count])
        if iterations_out is not None:
            iterations_out[first : first + count] = (
                info[:, c + kernels.CTRL_PHASE].astype(np.int64) - 1
            )
        return flats

    COPY_THREADS = 8
    """Threads that copy a chunk's rows into the caller's array, at most (NumPy releases the GIL
    while it copies). On the H200's host one thread copied 8.4 GB/s, 8 threads 33 and 16
    threads 20 (run 77); with the batch kernel this copy, not the device, is what a batch of
    short solves waits for."""

    def _copy_rows(self, dst: np.ndarray, src: np.ndarray) -> None:
        """``dst[...] = src`` in whole rows, split over :data:`COPY_THREADS` threads for large
        chunks; every part is finished before this returns or raises (Ctrl-C included)."""
        if src.nbytes < 8 << 20:  # one thread copies this in well under a millisecond
            dst[...] = src
            return
        import os
        from concurrent.futures import ThreadPoolExecutor, wait

        parts = min(self.COPY_THREADS, os.cpu_count() or 1, len(src), src.nbytes >> 21)
        if parts <= 1:
            dst[...] = src
            return
        if self._copier is None:
            self._copier = ThreadPoolExecutor(
                max_workers=self.COPY_THREADS, thread_name_prefix="sssp-copy"
            )
        bounds = np.linspace(0, len(src), parts + 1).astype(int)
        futures = [
            self._copier.submit(dst.__setitem__, slice(a, b), src[a:b])
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            if b > a
        ]
        try:
            for f in futures:
                f.result()
        except BaseException:
            wait(futures)
            raise

    def _solve_rows_one_by_one(
        self,
        sources: np.ndarray,
        dist_out: np.ndarray,
        pred_out: np.ndarray | None,
        iterations_out: np.ndarray | None,
    ) -> float:
        """The rows through :meth:`solve` (host loop, or no mapped host memory); returns the
        device seconds summed."""
        device = 0.0
        for i, s in enumerate(sources):
            r = self.solve(int(s), return_predecessors=pred_out is not None)
            if dist_out.dtype == r.dist.dtype:
                dist_out[i] = r.dist
            else:
                d = r.dist_float if dist_out.dtype.kind == "f" else r.dist
                row = d.astype(dist_out.dtype)
                if dist_out.dtype.kind == "i":
                    row[~r.reached] = np.iinfo(dist_out.dtype).max
                dist_out[i] = row
            if pred_out is not None:
                pred_out[i] = r.pred
            if iterations_out is not None:
                iterations_out[i] = r.iterations
            device += r.timings["gpu"]
        return device

    def _static_stats(self) -> dict[str, Any]:
        """What every result of this solver reports beside its own counts (built once)."""
        stats: dict[str, Any] | None = getattr(self, "_stats", None)
        if stats is None:
            stats = {
                "dist_bits": self.params.dist_bits,
                "dist_kind": "float" if self.params.floating else "uint",
                "device": self.info.name,
                "engine": "engine2",
                "loop": self.loop,
                "l1_applied": dict(self.l1_applied),
                "rows_sorted": self.rows_sorted,
                "memory_bytes": self.memory_bytes(),
                "host_mapped": self.mapped,
            }
            if self.nearfar:
                stats["delta"] = self.delta
                if self.cluster:
                    stats["cluster_blocks"] = self.cluster
                    stats["cluster_resident"] = bool(self.cluster_mb)
                    stats["cluster_fused"] = bool(self.cluster_lq)
                    stats["cluster_fused_across_blocks"] = self.cluster_spread
                    if self.fusion_detail:
                        stats["fusion_gate"] = self.fusion_detail
                if self.cluster_fallback:
                    stats["cluster_fallback"] = self.cluster_fallback
                if self.grid_async:
                    stats["grid_fused_across_blocks"] = True
            if self._phast is not None:
                stats["phast"] = self._phast.stats()
                stats["tree"] = "result pass" if self._pull_tree is not None else "tree pass"
            if self.loop_fallback:
                stats["loop_fallback"] = self.loop_fallback
            if self.relax_graph is not self.graph:
                stats["shortcuts"] = dict(self.relax_graph.meta["shortcuts"])
            if self.shortcut_fallback:
                stats["shortcut_fallback"] = self.shortcut_fallback
            if self.config_detail:
                stats["config_detail"] = self.config_detail
            self._stats = stats
        return stats

    def close(self) -> None:
        if self._graph is not None:
            self._graph.close()
            self._graph = None
        self._host.close()
        self._stage_cache.clear()
        self._spares.clear()
        if self._copier is not None:
            self._copier.shutdown(wait=True)
            self._copier = None
        self._free()
        # The batch kernel and the wide loop hold the solver (they launch on its buffers). Let
        # go of them, so that nothing here waits for Python's cycle collector: the solver, its
        # modules, streams, events and page-locked words are then released when the caller
        # drops it, in the caller's thread, where their context is current. The collector runs
        # in whatever thread allocates at the time (a copy thread, say), where pycuda cannot
        # release them and warns instead.
        self._batch = "the solver is closed"
        self._wide = None
        self._lanes = None
        self._closed = True

    def __enter__(self) -> EngineSolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stats_of(
    info: np.ndarray,
    iterations: int,
    loop_ms: float,
    flat: int,
    rounds: int | None,
    n: int,
    nearfar: bool,
    local_pops: bool,
    static: dict[str, Any],
    seeds: int | None = None,
) -> dict[str, Any]:
    """A result's statistics from its summary words (``kernels.RESULT_WORDS``) and what the
    solver reports for every result (``static``); ``seeds``: the nodes the upward search of a
    PHAST solve settled (None for the other loops, whose counters the summary holds)."""
    info64 = info.view(np.uint64)
    reached = int(info64[kernels.RES_REACHED // 2])
    stats: dict[str, Any]
    if seeds is not None:  # a sweep has no buckets, lists or updates to count
        stats = {"upward_settled": seeds, "reached": reached, "flat_parents_on_host": flat}
    elif nearfar:
        w = kernels.RES_NF
        stats = {
            "buckets": int(info[kernels.RES_CTRL + kernels.CTRL_BUCKETS]),
            "updates": int(info64[(w + kernels.NF_UPDATES) // 2]),
            "max_frontier": int(info[w + kernels.NF_MAX_LIST]),
            "reached": reached,
            "flat_parents_on_host": flat,
        }
        if local_pops:
            stats["local_nodes"] = int(info[w + kernels.NF_LOCAL_POPS])
    else:
        frontier = int(info64[kernels.RES_FRONTIER_SUM // 2])
        fringe = int(info64[kernels.RES_FRINGE_SUM // 2])
        stats = {
            "relax_active_share": frontier / (iterations + 1) / n,
            "max_frontier": int(info[kernels.RES_FRONTIER_MAX]),
            "mean_fringe": fringe / iterations if iterations else 0.0,
            "reached": reached,
        }
    stats.update(static)
    if rounds is not None:
        stats["wide_rounds"] = rounds  # queued; those past the end ran empty
    stats["phase_us"] = 1e3 * loop_ms / max(iterations, 1)
    return stats


def _faulted_in(like: np.ndarray) -> np.ndarray:
    """A new array shaped like ``like`` with every page already touched (the page faults of fresh
    memory cost as much as the copy into it; done while the device works, they are off the
    path to the result)."""
    out = np.empty_like(like)
    out.fill(0)
    return out


def _non_portable_clusters(cuda: Any) -> Any:
    """pycuda's ``function_attribute`` for clusters beyond the portable 8 blocks
    (``CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED``), or None when this pycuda cannot
    name it (its enum stops at older attributes; the value is the driver API's)."""
    fa = cuda.function_attribute
    named = getattr(fa, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED", None)
    if named is not None:
        return named
    try:
        return fa(14)
    except Exception:  # Boost.Python enums may refuse unnamed values
        return None


def _placement(plan: Any) -> tuple[np.ndarray, np.ndarray]:
    """The fused cluster loop's placement (each node's slot, each slot's node): the plan has
    one wherever it asks for those buffers."""
    assert plan.placement is not None
    return plan.placement
