"""Many sources on the CPU (:class:`CPURows`, the CPU side of :class:`sssp.many.RowEngine`).

The compiled solvers (near-far, Crauser, Martín) run one source per thread: their numba code
releases the GIL, so a thread pool of one worker per core runs them in parallel, writes each
finished row straight into the caller's array and needs no copy of the graph. SciPy's
Dijkstra holds the GIL while it runs (``benchmarks/gil_probe.py``: a Python thread beside it
kept 1-4 % of its rate alone, against 59-68 % beside the compiled near-far, on the loaded
2-core development machine), so threads cannot spread it, and a process pool would copy the
graph into every worker and every row back through a pipe; it runs on one core, in calls of a
few sources (:data:`SCIPY_BATCH`) so that Ctrl-C and the progress bar are served between them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed, wait

import numpy as np
from scipy.sparse.csgraph import dijkstra as _scipy_dijkstra

from ..errors import InvalidGraphError
from ..graph import Graph
from ..many import apply_limit, nearest_from_super, super_source_graph
from ..request import check_algorithm, check_delta_for, check_variant
from ..result import native_distances
from . import nearfar, parallel
from .reference import FLOAT_EXACT_LIMIT, min_weight_csr

SCIPY_BATCH = 8
"""Sources per SciPy call: SciPy checks the whole matrix on every call (an O(m) pass), and
Ctrl-C waits for the call under way."""


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask, which containers narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class CPURows:
    """Rows of many sources on the CPU.

    Parameters
    ----------
    graph : Graph
    algorithm : {"dijkstra", "near-far", "crauser", "crauser-in", "crauser-inout", "martin"}
    variant : {"successors", "predecessors"}
        For the phased algorithms (Crauser's criteria, Martín's).
    delta : float, optional
        Near-far's Δ (default :func:`sssp.cpu.nearfar.default_delta`).
    workers : int, optional
        Threads for the compiled solvers (default: one per available core). SciPy's Dijkstra
        always runs on one.
    """

    backend = "cpu"

    def __init__(
        self,
        graph: Graph,
        *,
        algorithm: str,
        variant: str = "successors",
        delta: float | None = None,
        workers: int | None = None,
    ) -> None:
        algorithm = check_algorithm(algorithm)
        variant = check_variant(variant, algorithm)
        delta = check_delta_for(algorithm, delta)
        self.graph, self.algorithm, self.variant = graph, algorithm, variant
        self._delta_arg = delta
        self._pool: ThreadPoolExecutor | None = None
        if algorithm == "dijkstra":
            bound = graph.max_weight * graph.n
            if not graph.is_float and bound > FLOAT_EXACT_LIMIT:
                raise InvalidGraphError(
                    f"max_weight * n = {graph.max_weight} * {graph.n} = {bound} exceeds 2**53: SciPy's "
                    "float64 Dijkstra would not be exact; use the near-far or crauser CPU solvers instead"
                )
            self._mat = min_weight_csr(graph)
            self.workers = 1
            return
        self.workers = max(1, int(workers) if workers is not None else available_cores())
        if algorithm == "near-far":
            self._delta = (
                nearfar.default_delta(graph)
                if delta is None
                else nearfar.effective_delta(graph, delta)
            )
            nearfar._warm(graph.weights.dtype)
        else:
            pull = variant == "predecessors"
            self._pull = pull
            self._rev = graph.reverse() if pull else graph
            self._omega = parallel._omega_inf(graph)
            self._iota = parallel._omega_inf(graph.reverse())
            self._crit = parallel._CODES[algorithm]
            parallel._warm(graph.weights.dtype, self._rev.weights.dtype)

    def row_bytes(self, n: int, want_pred: bool) -> int:
        # Each solve's arrays live in its worker only while it runs (workers at a time, not
        # per row of a chunk); SciPy's live per call of SCIPY_BATCH rows.
        return 0

    # -- one source -------------------------------------------------------------------------------
    def _solve_one(
        self, s: int, want_pred: bool, flag: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None, int]:
        """One source's row; ``flag`` (:func:`~sssp.cpu.parallel.new_stop_flag`, shared by the
        batch) set ends the compiled loop between phases (the row is then discarded)."""
        g = self.graph
        dist = parallel._unreached(g)
        if self.algorithm == "near-far":
            inf = dist[s]
            d = np.float64(self._delta) if g.is_float else np.int64(self._delta)
            counters = nearfar._solve(g.indptr, g.indices, g.weights, s, d, dist, flag)
            pred = (
                nearfar._tight_tree(g.indptr, g.indices, g.weights, dist, s, inf)
                if want_pred
                else None
            )
            return dist, pred, int(counters[0])
        rev = self._rev
        pred, _, iterations, _ = parallel._solve(
            g.indptr, g.indices, g.weights, rev.indptr, rev.indices, rev.weights,
            self._omega, self._iota, s, self._crit, self._pull, dist, flag,
        )  # fmt: skip
        return dist, pred if want_pred else None, int(iterations)

    def _native(self, fdist: np.ndarray) -> np.ndarray:
        """SciPy's float64 row in the solvers' convention (int64 with UNREACHABLE on integer
        graphs; exact, as the bound was checked)."""
        return native_distances(fdist, self.graph.is_float)

    # -- the seam -------------------------------------------------------------------------------
    def fill(
        self,
        sources: np.ndarray,
        dist: np.ndarray,
        pred: np.ndarray | None,
        limit: int | float | None,
        on_row: Callable[[int], None],
    ) -> tuple[np.ndarray, float]:
        if self.algorithm == "dijkstra":
            return self._fill_scipy(sources, dist, pred, limit, on_row), 0.0
        iterations = np.zeros(sources.size, dtype=np.int64)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="sssp-cpu")
        stop = threading.Event()
        flag = parallel.new_stop_flag()  # read by the compiled loops of every row in flight
        want_pred = pred is not None

        def row(i: int, s: int) -> int:
            d, p, its = self._solve_one(s, want_pred, flag)
            apply_limit(d, p, limit)
            if stop.is_set():  # the batch was stopped: leave the row untouched
                return its
            dist[i] = d  # one assignment of a finished row
            if p is not None and pred is not None:
                pred[i] = p
            return its

        futures = {self._pool.submit(row, i, s): i for i, s in enumerate(sources.tolist())}
        try:
            for f in as_completed(futures):
                iterations[futures[f]] = f.result()
                on_row(1)
        except BaseException:
            # Ctrl-C or a failed row: no row may be written once this returns.
            stop.set()
            flag[0] = 1  # the solves in flight end within a phase
            for f in futures:
                f.cancel()
            wait(list(futures))
            raise
        return iterations, 0.0

    def _fill_scipy(
        self,
        sources: np.ndarray,
        dist: np.ndarray,
        pred: np.ndarray | None,
        limit: int | float | None,
        on_row: Callable[[int], None],
    ) -> np.ndarray:
        lim = np.inf if limit is None else float(limit)
        iterations = np.zeros(sources.size, dtype=np.int64)
        for a in range(0, sources.size, SCIPY_BATCH):
            ix = sources[a : a + SCIPY_BATCH]
            if pred is not None:
                fd, fp = _scipy_dijkstra(
                    self._mat, directed=True, indices=ix, return_predecessors=True, limit=lim
                )
            else:
                fd, fp = _scipy_dijkstra(self._mat, directed=True, indices=ix, limit=lim), None
            for j in range(ix.size):
                d = self._native(fd[j])
                dist[a + j] = d
                if fp is not None and pred is not None:
                    p = fp[j]
                    pred[a + j] = np.where(p < 0, -1, p).astype(np.int32)
                iterations[a + j] = int(np.count_nonzero(np.isfinite(fd[j])))
            on_row(ix.size)
        return iterations

    def nearest(
        self, sources: np.ndarray, limit: int | float | None, want_pred: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, float]:
        n = self.graph.n
        if self.algorithm == "dijkstra":
            lim = np.inf if limit is None else float(limit)
            # The sources as given: SciPy seeds its heap in this order, which settles ties.
            fd, fp, fs = _scipy_dijkstra(
                self._mat,
                directed=True,
                indices=sources,
                min_only=True,
                return_predecessors=True,
                limit=lim,
            )
            dist = self._native(fd)
            nearest = np.where(fs < 0, -1, fs).astype(np.int32)
            pred = np.where(fp < 0, -1, fp).astype(np.int32)
            return (
                dist,
                nearest,
                pred if want_pred else None,
                int(np.count_nonzero(nearest >= 0)),
                0.0,
            )
        from . import solve_cpu

        big = super_source_graph(self.graph, sources)
        extra = {"delta": self._delta_arg} if self._delta_arg is not None else {}
        res = solve_cpu(big, n, algorithm=self.algorithm, variant=self.variant, **extra)
        assert res.pred is not None  # the CPU solvers always build the tree
        dist, nearest, pred = nearest_from_super(res.dist, res.pred, n, sources, limit)
        return dist, nearest, pred if want_pred else None, res.iterations, 0.0

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
