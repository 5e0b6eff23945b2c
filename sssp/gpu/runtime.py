"""The paper's GPU solver (``loop="legacy"``): compiles the kernels, applies each kernel's launch
configuration, keeps the graph resident on the device and runs the relax / min / update loop from
the host. Engine 2 (:mod:`sssp.gpu.engine`) is the default; this stays as the measured baseline
and for the paper's per-kernel characterisation. :func:`sssp.gpu.make_solver` picks between them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

import kernels
from kernels import KERNEL_NAMES, CompileParams

from ..config import ConfigSource, KernelConfig, LaunchConfig
from ..errors import BackendUnavailableError, InvalidGraphError, SolverError
from ..graph import Graph
from ..result import UNREACHABLE, SSSPResult
from .base import DeviceBuffers, apply_l1, compile_cubin
from .device import DeviceInfo, activate, device_info, driver

log = logging.getLogger(__name__)

__all__ = ["DeviceBuffers", "GPUSolver", "Snapshot", "apply_l1", "compile_cubin", "device_dtypes"]

UNSETTLED = np.int32(np.iinfo(np.int32).max)
ARG_FORMATS = {k: spec.arg_format for k, spec in kernels.LEGACY_KERNELS.items()}


def device_dtypes(params: CompileParams) -> tuple[type, type]:
    """(distance dtype, weight dtype) on the device for these compile parameters."""
    return (
        np.uint32 if params.dist_bits == 32 else np.uint64,
        np.uint32 if params.weight_bits == 32 else np.uint64,
    )


@dataclass(frozen=True)
class Snapshot:
    """Device state captured at one iteration of a solve (host copies), for the tuner."""

    iteration: int
    phase: str  # "relax" (before relax), "min" (after relax), "update" (after min)
    settled_at: np.ndarray
    dist: np.ndarray
    delta: int | None  # Δ of this iteration (after min), else None


class GPUSolver(DeviceBuffers):
    """Crauser's (or Martín's) parallel Dijkstra on one CUDA device, for many sources: the paper's
    host-driven relax / min / update kernels.

    The graph is uploaded once; every :meth:`solve` reuses the device buffers. Each solver loads
    its own module instance, so the L1 state applied to its functions cannot leak into another
    solver with a different configuration.

    Parameters
    ----------
    graph : Graph
    algorithm : {"crauser", "martin"}
    variant : {"successors", "predecessors"}
    config : LaunchConfig
    config_source : ConfigSource
        Recorded in results.
    device : int
        CUDA device ordinal.
    sync_every : int
        The host checks for termination (Δ = ∞) every this many iterations; the extra
        iterations after termination are no-ops. Fewer checks, fewer host round trips.
    """

    def __init__(
        self,
        graph: Graph,
        *,
        algorithm: str = "crauser",
        variant: str = "successors",
        config: LaunchConfig | None = None,
        config_source: ConfigSource = ConfigSource.DEFAULT,
        device: int = 0,
        sync_every: int = 8,
    ) -> None:
        if algorithm not in ("crauser", "martin"):
            raise BackendUnavailableError(
                "gpu", f"algorithm {algorithm!r} has no legacy GPU version", hint=""
            )
        if graph.weights.dtype.kind == "f":
            raise InvalidGraphError(
                "the legacy kernels take integer weights only; use engine 2 "
                "(any loop but 'legacy') for real-valued weights"
            )
        # The front door's request (sssp.request) checked the variant and sources.
        assert variant in ("successors", "predecessors"), variant
        if graph.n == 0:
            raise InvalidGraphError("the graph has no nodes")
        self.cuda = cuda = driver()
        self.context = activate(device)  # what it allocates belongs to this (sssp.gpu.device.adopt)
        self.info: DeviceInfo = device_info(device)
        self.graph = graph
        self.algorithm, self.variant = algorithm, variant
        self.config = config or LaunchConfig.paper()
        self.config_source = config_source
        self.sync_every = max(1, int(sync_every))
        dist_bits, weight_bits = kernels.widths_for(graph.n, graph.max_weight)
        self.params = CompileParams(
            dist_bits, weight_bits, algorithm == "crauser", self.config.relax.lanes
        )
        self.dist_dtype, self.weight_dtype = device_dtypes(self.params)
        self.inf = int(np.iinfo(self.dist_dtype).max)

        self.module = cuda.module_from_buffer(compile_cubin(self.params, self.info.arch))
        self.funcs: dict[str, Any] = {}
        self.l1_applied: dict[str, str] = {}
        for kernel in ("relax", "min", "update", "tree"):
            func = self.module.get_function(KERNEL_NAMES[(kernel, variant)])
            func.prepare(ARG_FORMATS[kernel])
            kc = self.kernel_config(kernel)
            self.l1_applied[kernel] = apply_l1(func, kc.l1)
            self.funcs[kernel] = func

        n = graph.n
        g = graph if variant == "successors" else graph.reverse()
        self.stream = cuda.Stream()
        self._buffers: list[Any] = []
        self._nbytes = 0
        self.d_indptr = self._upload(g.indptr)
        self.d_indices = self._upload(g.indices)
        self.d_weights = self._upload(g.weights.astype(self.weight_dtype, copy=False))
        omega = graph.omega()
        omega_dev: np.ndarray = omega.astype(
            self.dist_dtype
        )  # sinks (-1) are overwritten with infinity next
        omega_dev[omega < 0] = self.inf
        self.d_omega = self._upload(omega_dev)
        dsize = np.dtype(self.dist_dtype).itemsize
        # Iterations never exceed n + 1 (each settles a node); sync_every more are no-ops.
        self.max_iter = n + 1 + self.sync_every
        self.d_dist = self._alloc(n * dsize)
        self.d_settled = self._alloc(n * 4)
        self.d_pred = self._alloc(n * 4)
        self.d_delta = self._alloc((self.max_iter + 1) * dsize)
        self.d_count = self._alloc((self.max_iter + 1) * 4)
        self.h_delta = cuda.pagelocked_empty(1, self.dist_dtype)
        self.h_dist = cuda.pagelocked_empty(max(n, 1), self.dist_dtype)
        self.h_pred = cuda.pagelocked_empty(max(n, 1), np.int32)
        self.h_deltas = cuda.pagelocked_empty(self.max_iter + 1, self.dist_dtype)
        self.h_counts = cuda.pagelocked_empty(self.max_iter + 1, np.uint32)
        self.dsize = dsize
        self.config_detail = (
            ""  # why this configuration (set by sssp.Solver), in every result's stats
        )

    # -- helpers ---------------------------------------------------------------------------------
    def kernel_config(self, kernel: str) -> KernelConfig:
        # The tree pass has the relax kernel's structure and lanes, so it takes relax's config.
        return self.config.kernel("relax" if kernel == "tree" else kernel)

    def _grid(self, kernel: str) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
        kc = self.kernel_config(kernel)
        bs, n = kc.block_size, self.graph.n
        if kernel in ("relax", "tree"):
            blocks = -(-n * kc.lanes // bs)
        elif kernel == "min":
            blocks = -(-n // (2 * bs))
        else:
            blocks = -(-n // bs)
        shared = bs * self.dsize if kernel == "min" else 0
        return (max(blocks, 1), 1, 1), (bs, 1, 1), shared

    def _launch(self, kernel: str, *args: Any) -> None:
        grid, block, shared = self._launch_shapes[kernel]
        self.funcs[kernel].prepared_async_call(grid, block, self.stream, *args, shared_size=shared)

    def memory_bytes(self) -> int:
        """Device memory held by this solver (graph, node vectors, per-iteration history)."""
        return self._nbytes

    def poison(self, byte: int = 0xA5) -> None:
        """Fill every output buffer with a pattern (testing aid: an element the solve does not
        write keeps it and fails the comparison)."""
        for buf, nbytes in (
            (self.d_dist, self.graph.n * self.dsize),
            (self.d_settled, self.graph.n * 4),
            (self.d_pred, self.graph.n * 4),
        ):
            self.cuda.memset_d8(buf, byte, nbytes)

    # -- the solve -----------------------------------------------------------------------------
    def solve(
        self,
        source: int,
        *,
        profile: bool = False,
        return_predecessors: bool = True,
        t0: float | None = None,
        capture: Iterable[int] = (),
        on_snapshot: Callable[[Snapshot], None] | None = None,
    ) -> SSSPResult:
        """Distances and predecessor tree from ``source``.

        Parameters
        ----------
        source : int
        profile : bool
            Time every kernel launch with CUDA events (adds event overhead to ``"gpu"``).
        return_predecessors : bool
            False: no tree pass, and the result's ``pred`` is None.
        t0 : float, optional
            The caller's ``time.perf_counter()`` at the call: ``timings["wall"]`` (also
            ``"total"``) runs from it until the result is assembled; ``timings["gpu"]`` is
            CUDA-event time.
        capture, on_snapshot
            Iterations at which to hand device state to ``on_snapshot`` (used by the tuner to
            time kernels on the states of a real solve). Capturing synchronises the stream.
        """
        n = self.graph.n
        source = int(source)
        assert 0 <= source < n, source
        cuda, stream = self.cuda, self.stream
        self._launch_shapes = {k: self._grid(k) for k in ("relax", "min", "update", "tree")}
        capture = set(int(i) for i in capture)
        events: dict[str, list[tuple[Any, Any]]] = {
            k: [] for k in ("relax", "min", "update", "tree")
        }

        def timed(kernel: str, *args: Any) -> None:
            if profile:
                a, b = cuda.Event(), cuda.Event()
                a.record(stream)
                self._launch(kernel, *args)
                b.record(stream)
                events[kernel].append((a, b))
            else:
                self._launch(kernel, *args)

        t_wall = time.perf_counter() if t0 is None else t0
        start, end = cuda.Event(), cuda.Event()
        start.record(stream)
        words = self.dsize // 4
        cuda.memset_d32_async(self.d_dist, 0xFFFFFFFF, n * words, stream)
        cuda.memset_d32_async(self.d_settled, int(UNSETTLED), n, stream)
        cuda.memset_d32_async(self.d_pred, int(UNSETTLED), n, stream)
        cuda.memset_d32_async(self.d_delta, 0xFFFFFFFF, (self.max_iter + 1) * words, stream)
        cuda.memset_d32_async(self.d_count, 0, self.max_iter + 1, stream)
        cuda.memset_d32_async(int(self.d_dist) + source * self.dsize, 0, words, stream)
        cuda.memset_d32_async(int(self.d_settled) + source * 4, 0, 1, stream)
        cuda.memset_d32_async(self.d_count, 1, 1, stream)  # iteration 0 settled the source

        n32 = np.int32(n)
        g = (self.d_indptr, self.d_indices, self.d_weights)
        last_checked = 0
        it = 0
        while True:
            it += 1
            if it > self.max_iter:
                raise SolverError(f"no termination within {self.max_iter} steps (n = {n})")
            i32 = np.int32(it)
            if it in capture:
                self._snapshot(it, "relax", on_snapshot)
            timed("relax", *g, self.d_settled, self.d_dist, n32, i32)
            if it in capture:
                self._snapshot(it, "min", on_snapshot)
            timed("min", self.d_settled, self.d_dist, self.d_omega, self.d_delta, n32, i32)
            if it in capture:
                self._snapshot(it, "update", on_snapshot)
            timed("update", self.d_settled, self.d_dist, self.d_delta, self.d_count, n32, i32)
            if it - last_checked >= self.sync_every or it in capture:
                last_checked = it
                cuda.memcpy_dtoh_async(self.h_delta, int(self.d_delta) + it * self.dsize, stream)
                stream.synchronize()
                if int(self.h_delta[0]) == self.inf:
                    break
        if return_predecessors:
            timed("tree", *g, self.d_settled, self.d_dist, self.d_pred, n32)
        dist_raw, pred = self.h_dist[:n], self.h_pred[:n]
        deltas, counts = self.h_deltas[: it + 1], self.h_counts[: it + 1]
        cuda.memcpy_dtoh_async(dist_raw, self.d_dist, stream)
        if return_predecessors:
            cuda.memcpy_dtoh_async(pred, self.d_pred, stream)
        cuda.memcpy_dtoh_async(deltas, self.d_delta, stream)
        cuda.memcpy_dtoh_async(counts, self.d_count, stream)
        end.record(stream)
        end.synchronize()
        total_ms = end.time_since(start)

        # Δ_i = ∞ marks the first iteration that settled nothing; those before it are counted.
        inf_at = np.flatnonzero(deltas[1:] == self.inf)
        iterations = int(inf_at[0]) if inf_at.size else it
        dist = np.asarray(dist_raw).astype(np.int64)
        dist[np.asarray(dist_raw) == self.inf] = UNREACHABLE
        if return_predecessors:
            pred = np.array(pred, dtype=np.int32)
            pred[pred == UNSETTLED] = -1
        else:
            pred = None
        # relax of iteration i works on the nodes settled at i - 1; the last productive relax is
        # that of the terminating iteration, so there are iterations + 1 of them.
        frontier = counts[: iterations + 1].astype(np.float64)
        timings = {"gpu": total_ms * 1e-3}
        if profile:
            for k, pairs in events.items():
                timings[k] = sum(b.time_since(a) for a, b in pairs) * 1e-3
        stats = {
            "relax_active_share": float(frontier.mean() / n),
            "max_frontier": int(frontier.max()),
            "dist_bits": self.params.dist_bits,
            "device": self.info.name,
            "l1_applied": dict(self.l1_applied),
        }
        if self.config_detail:
            stats["config_detail"] = self.config_detail
        timings["wall"] = timings["total"] = time.perf_counter() - t_wall
        return SSSPResult(
            dist=dist,
            pred=pred,
            source=source,
            algorithm=self.algorithm,
            variant=self.variant,
            backend="gpu",
            iterations=iterations,
            timings=timings,
            config=self.config,
            config_source=self.config_source,
            stats=stats,
        )

    def _snapshot(
        self, iteration: int, phase: str, callback: Callable[[Snapshot], None] | None
    ) -> None:
        if callback is None:
            return
        cuda, n = self.cuda, self.graph.n
        self.stream.synchronize()
        settled = np.empty(n, np.int32)
        dist: np.ndarray = np.empty(n, self.dist_dtype)
        cuda.memcpy_dtoh(settled, self.d_settled)
        cuda.memcpy_dtoh(dist, self.d_dist)
        delta = None
        if phase == "update":
            h: np.ndarray = np.empty(1, self.dist_dtype)
            cuda.memcpy_dtoh(h, int(self.d_delta) + iteration * self.dsize)
            delta = int(h[0])
        callback(Snapshot(iteration, phase, settled, dist, delta))

    def close(self) -> None:
        self._free()

    def __enter__(self) -> GPUSolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
