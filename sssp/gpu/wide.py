"""The wide loop (``kernels/sssp_wide.cu``): near-far with one kernel per move, for graphs whose
steps are large.

The persistent loop keeps one block per multiprocessor resident for its grid barrier and gives
each list entry one lane group; on a graph of millions of nodes a step is millions of entries and
a hub tens of thousands of edges, and the step's time is a few lanes' long chains of round trips.
The wide loop launches every move at full occupancy and deals a step out by edges (see the
source's header), and the host queues rounds of moves without waiting: every kernel returns at
once when its move is not the current one. The host polls the mode word once per batch of rounds,
two batches in flight, so the device never waits for it; a few empty rounds after the end are
the price (microseconds each).

Its state is near-far's (keys, pushed distances, far flags, lists and piles of the engine), so
the engine's tree pass and the result pass read a wide solve as they read a persistent one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import kernels

from .base import OwnerRef, compile_cubin
from .plan import hub_entries

if TYPE_CHECKING:
    from .engine import EngineSolver, _Lane


def hub_capacity(indptr: np.ndarray, params: kernels.WideParams | None = None) -> int:
    """Hub-queue entries one step can need for a CSR's row starts ``indptr``
    (:func:`sssp.gpu.plan.hub_entries` of its out-degrees)."""
    return hub_entries(np.diff(np.asarray(indptr, dtype=np.int64)), params)


class WideLoop:
    """The wide loop of one :class:`~sssp.gpu.engine.EngineSolver` (near-far, packed keys).

    Parameters
    ----------
    solver : EngineSolver
        Owns the graph, the near-far state this loop runs on, and the allocations.
    blocks_per_sm : callable
        ``blocks_per_sm(func, block)``: the resident blocks of a kernel (the engine's occupancy
        rule); the strided kernels run at that grid.
    params : kernels.WideParams, optional
        The module's compile-time parameters (default: the contract's).
    """

    solver: OwnerRef[EngineSolver] = OwnerRef()
    """The solver that owns this loop (held weakly: :class:`~sssp.gpu.base.OwnerRef`)."""

    FIRST_ROUNDS = 2
    MAX_ROUNDS = 8
    """Rounds queued per poll of the mode word: few at first (small graphs end in a few), then
    more; at most this many run empty after the end."""

    def __init__(
        self, solver: EngineSolver, blocks_per_sm: Any, params: kernels.WideParams | None = None
    ) -> None:
        self.solver = s = solver
        self.params = params = params or kernels.WideParams()
        cuda = s.cuda
        self.module = cuda.module_from_buffer(compile_cubin(params, s.info.arch))
        self.funcs: dict[str, Any] = {}
        for name, spec in kernels.WIDE_KERNELS.items():
            func = self.module.get_function(spec.cuda_name())
            func.prepare(spec.arg_format)
            self.funcs[name] = func
        block = kernels.WIDE_BLOCK
        fits = max(1, blocks_per_sm(self.funcs["step"], block))
        self.grid = ((s.info.sm_count * fits, 1, 1), (block, 1, 1))
        self.one = ((1, 1, 1), (32, 1, 1))
        # The hub queue and the words are the solver's plan's buffers (its memory counts them).
        self.d_hubs, self.d_w = s.d_hubs, s.d_w
        self._polls = [cuda.pagelocked_zeros(4, np.uint32) for _ in range(2)]
        self._marks = [cuda.Event(), cuda.Event()]
        self._delta = np.uint64(min(int(s._delta_bits), kernels.UINT64_INF))
        self._limit = np.int32(kernels.nearfar_step_limit(s.n))
        self.rounds = 0
        """Rounds queued by the last solve (the ones past its end ran empty)."""
        if s.plan.split_rows:
            self._partition()

    def _partition(self) -> None:
        """Reorder the device copy of every row once, light edges (w < Δ) first, and count
        them per node (``d_light``): the light/heavy split's steps walk a row's light part, its
        heavy move the rest. The reordered rows go through scratch buffers, freed after."""
        s, cuda = self.solver, self.solver.cuda
        m = int(s.plan.m)
        grid, block = self.grid
        out_indices, out_weights = cuda.mem_alloc(max(4 * m, 4)), cuda.mem_alloc(max(4 * m, 4))
        try:
            self.funcs["partition"].prepared_call(
                grid,
                block,
                s.d_indptr,
                s.d_indices,
                s.d_weights,
                s.d_light,
                out_indices,
                out_weights,
                np.int32(s.n),
                np.uint32(s._delta_bits),  # below 2**32 - 1: the plan's split_rows
            )
            if m:
                cuda.memcpy_dtod(s.d_indices, out_indices, 4 * m)
                cuda.memcpy_dtod(s.d_weights, out_weights, 4 * m)
            cuda.Context.synchronize()
        finally:
            out_indices.free()
            out_weights.free()

    def _common(self) -> tuple:
        s = self.solver
        return (
            s.d_indptr,
            s.d_indices,
            s.d_weights,
            s.d_key,
            s.d_pushed,
            s.d_infar,
            s.d_qF,
            s.d_qR,
            self.d_hubs,
            self.d_w,
            np.int32(s.n),
            s.d_light if s.d_light is not None else 0,
        )

    def start(self, lane: _Lane, source: int) -> None:
        """Queue the initial state for ``source`` (keys, pushed distances, flags, words)."""
        grid, block = self.grid
        self.funcs["init"].prepared_async_call(
            grid,
            block,
            lane.stream,
            *self._common(),
            lane.d_cnt,
            self._delta,
            np.int32(source),
            self._limit,
        )

    def _moves(self, lane: _Lane) -> list[tuple[str, tuple, tuple, tuple]]:
        """One round, in queue order: (kernel, grid, block, arguments) for each of step, hubs,
        advance after a step, raise and advance after a raise."""
        grid, block = self.grid
        one, one_block = self.one
        common = self._common()
        advance = (self.d_w, lane.d_cnt, lane.d_ctrl, self._delta)
        return [
            ("step", grid, block, common),
            ("hubs", grid, block, common),
            ("advance", one, one_block, (*advance, np.int32(kernels.W_STEP))),
            ("raise", grid, block, common),
            ("advance", one, one_block, (*advance, np.int32(kernels.W_RAISE))),
        ]

    def _finish(self, lane: _Lane) -> None:
        """Queue the end pass (once, behind the last round): the keys' step stamps make way for
        the predecessors."""
        s = self.solver
        grid, block = self.grid
        self.funcs["finish"].prepared_async_call(
            grid, block, lane.stream, s.d_key, self.d_w, np.int32(s.n)
        )

    def _round(self, lane: _Lane) -> None:
        for name, grid, block, args in self._moves(lane):
            self.funcs[name].prepared_async_call(grid, block, lane.stream, *args)

    def tree(self, lane: _Lane) -> None:
        """Queue the predecessor tree (after :meth:`run`): the engine's rule, each reached node's
        row dealt out as a step's, hubs in chunks (a hub's row walked by one lane group, as the
        engine's tree pass does, took most of a Kronecker graph's solve: run 64)."""
        grid, block = self.grid
        common = self._common()
        self.funcs["tree"].prepared_async_call(grid, block, lane.stream, *common)
        self.funcs["tree_hubs"].prepared_async_call(grid, block, lane.stream, *common)

    def run(self, lane: _Lane) -> None:
        """Queue rounds until the device reports the end (the advance kernels also end the solve
        at near-far's step limit, with the done word clear, which the solver reports)."""
        cuda, stream = self.solver.cuda, lane.stream
        batch, queued = self.FIRST_ROUNDS, 0
        pending: list[int] = []  # the poll slots of the batches in flight, oldest first
        # Every round takes at least one step or raise until the end, so this bounds the loop
        # even if a defect kept the mode from ever reading done.
        bound = 2 * int(self._limit) + 4
        while True:
            for _ in range(batch):
                self._round(lane)
            queued += batch
            slot = 1 - pending[-1] if pending else 0
            cuda.memcpy_dtoh_async(self._polls[slot], self.d_w, stream)
            self._marks[slot].record(stream)
            pending.append(slot)
            if len(pending) == 2 or queued >= bound:
                oldest = pending.pop(0)
                self._marks[oldest].synchronize()
                if self._polls[oldest][kernels.W_MODE] == kernels.W_DONE or queued >= bound:
                    break
            batch = min(2 * batch, self.MAX_ROUNDS)
        self._finish(lane)
        self.rounds = queued

    def trace(self, lane: _Lane) -> list[dict[str, Any]]:
        """A diagnostic: run the solve queued by :meth:`start` one round at a time, each kernel
        between two CUDA events, and return per round the words before it (move, k, |L|, pile,
        T), the hub chunks its step queued, and each kernel's milliseconds. Far slower than
        :meth:`run` (the host waits after every round); the distances are the same."""
        cuda, stream = self.solver.cuda, lane.stream
        words = cuda.pagelocked_zeros(kernels.WIDE_WORDS, np.uint32)
        f = self.funcs
        moves = self._moves(lane)
        events = [cuda.Event() for _ in range(len(moves) + 1)]
        rows: list[dict[str, Any]] = []
        for _ in range(2 * int(self._limit) + 4):
            cuda.memcpy_dtoh_async(words, self.d_w, stream)
            stream.synchronize()
            mode = int(words[kernels.W_MODE])
            if mode == kernels.W_DONE:
                break
            row: dict[str, Any] = {
                "move": {kernels.W_STEP: "step", kernels.W_HEAVY: "heavy"}.get(mode, "raise"),
                "k": int(words[kernels.W_K]),
                "list": int(words[kernels.W_NL]),
                "pile": int(words[kernels.W_FAR]),
                "T": int(words[kernels.W_T]),
            }
            events[0].record(stream)
            for i, (name, g, b, args) in enumerate(moves):
                f[name].prepared_async_call(g, b, stream, *args)
                events[i + 1].record(stream)
                if name == "step":
                    cuda.memcpy_dtoh_async(words, self.d_w, stream)
            stream.synchronize()
            row["hub_chunks"] = int(words[kernels.W_HUBS])
            for i, (name, *_rest) in enumerate(moves):
                key = f"{name}_ms" if name != "advance" else f"advance{i}_ms"
                row[key] = round(events[i + 1].time_since(events[i]), 4)
            rows.append(row)
        self._finish(lane)
        stream.synchronize()
        return rows
