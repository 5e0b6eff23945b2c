"""The executor of a :class:`sssp.gpu.plan.BatchPlan`: the cluster solver's batch kernel.

One launch solves a chunk of sources: each cluster of the grid takes source after source from a
counter, sets up the graph's part of its shared memory once, and writes each source's row in the
caller's dtype and its summary words into the chunk's device staging
(:meth:`sssp.gpu.engine.EngineSolver.solve_rows` copies them out). The host's work per chunk is
two commands (zero the summary and the counter, launch), whatever the number of sources in it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import kernels

from .base import OwnerRef, compile_cubin
from .plan import SMEM_RESERVED_PER_BLOCK, BatchPlan


class BatchKernel:
    """The loaded batch kernel of one solver.

    Parameters
    ----------
    solver : EngineSolver
        Its graph buffers and common arguments are used; its device memory holds the
        placement's copy and the sources (freed with it).
    plan : BatchPlan
    """

    _solver: OwnerRef[Any] = OwnerRef()
    """The solver that owns this kernel (held weakly: :class:`~sssp.gpu.base.OwnerRef`)."""

    STREAMS = 1
    """Streams the chunks are queued on, in turn. One: a chunk holds a source for every cluster
    the device runs at once; chunks of half that on two streams took twice the device time
    (H200, run 76: 24k x 2, 0.0056 against 0.0116-0.0126 ms a source)."""

    def __init__(self, solver: Any, plan: BatchPlan) -> None:
        from .cudagraph import occupancy

        self.plan = plan
        self._solver = solver
        cuda = self.cuda = solver.cuda
        cubin = compile_cubin(plan.params, solver.info.arch)
        self.module = cuda.module_from_buffer(cubin)
        spec = kernels.CLUSTER_BATCH_KERNEL
        func = self.func = self.module.get_function(spec.cuda_name())
        func.prepare(spec.arg_format)
        fa = cuda.function_attribute
        func.set_attribute(fa.MAX_DYNAMIC_SHARED_SIZE_BYTES, plan.smem)
        func.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, 100)
        if plan.cluster > 8:
            func.set_attribute(solver._non_portable, 1)
        info = solver.info
        # Threads, registers and shared memory per multiprocessor; the driver's occupancy
        # calculator (cuda-bindings) where it answers for a cluster kernel.
        static = func.get_attribute(fa.SHARED_SIZE_BYTES)
        regs = func.get_attribute(fa.NUM_REGS)
        per_sm = min(
            2048 // plan.block,
            65536 // max(1, regs * plan.block),
            solver.device_facts.smem_per_sm // (plan.smem + static + SMEM_RESERVED_PER_BLOCK),
        )
        try:
            driver = occupancy(cubin, spec.cuda_name(), plan.block, plan.smem, "PREFER_SHARED", 100)
        except Exception:  # noqa: BLE001 - a cluster kernel the calculator refuses: the rule stands
            driver = None
        if driver:
            per_sm = min(per_sm, driver)
        self.per_sm = max(1, int(per_sm))
        self.clusters = max(1, info.sm_count * self.per_sm // plan.cluster)
        """Clusters resident at once, at most (a grid may hold more: they wait their turn)."""
        null = np.uintp(0)
        if plan.placement is not None:
            self._place = solver._upload(plan.placement[0])
            self._slots = solver._upload(plan.placement[1])
        else:
            self._place = self._slots = None
        self._tail = (
            np.int32(plan.nb),
            np.int32(kernels.CLUSTER_LIST_CAP),
            np.int32(plan.limit),
            np.int32(plan.mb),
            np.int32(plan.lq),
            np.int32(plan.spread),
            self._place or null,
            self._slots or null,
        )
        self.streams = [cuda.Stream() for _ in range(self.STREAMS)]
        self._sources: Any = None
        self._sources_len = 0

    @property
    def detail(self) -> str:
        return f"{self.plan.detail}; {self.clusters} sources at once"

    def load_sources(self, sources: np.ndarray) -> None:
        """Copy the batch's sources to the device (before any chunk of it is queued)."""
        src = np.ascontiguousarray(sources, dtype=np.int32)
        if self._sources is None or self._sources_len < src.size:
            size = max(src.size, 2 * self._sources_len, 256)
            self._sources = self._solver._alloc(4 * size)
            self._sources_len = size
        self.cuda.memcpy_htod(self._sources, src)

    def queue(
        self, stream: Any, first: int, count: int, d_rows: Any, d_info: Any, out_kind: int
    ) -> None:
        """Queue the solves of sources ``first .. first + count`` (of :meth:`load_sources`) on
        ``stream``: row ``j`` of ``d_rows`` and of ``d_info`` for the source ``first + j``."""
        words = count * kernels.RESULT_WORDS + 1  # the summaries and the job counter after them
        self.cuda.memset_d32_async(d_info, 0, words, stream)
        solver = self._solver
        grid = min(count, self.clusters) * self.plan.cluster
        self.func.prepared_async_call(
            (grid, 1, 1),
            (self.plan.block, 1, 1),
            stream,
            *solver.args(),
            np.uint64(self.plan.delta_bits),
            np.uintp(int(self._sources) + 4 * first),
            *self._tail,
            np.int32(count),
            d_rows,
            d_info,
            np.int32(out_kind),
            shared_size=self.plan.smem,
        )
