"""Many sources at once: the request (validated once), the driver that streams rows chunk by
chunk into the caller's arrays, and the seam through which a backend fills a chunk's rows.

``Solver.solve_many`` builds a :class:`~sssp.request.ManyRequest` with
:func:`sssp.request.build_request` (every check before anything is written), picks a :class:`RowEngine` for its backend and hands both to
:func:`run_rows` or :func:`run_nearest`. An engine only computes rows: the CPU one
(:class:`sssp.cpu.many.CPURows`) runs the sources in parallel over the cores, the GPU one
(:class:`LoopingGPURows`) one after another on the single-source engine.

Whole rows only. An engine writes each row with one assignment of a finished row, and the
driver converts a chunk into a narrower ``out`` dtype one row at a time, so a batch that stops
early (Ctrl-C, an error) leaves every row of ``out`` either right or untouched.

Bounded memory. Rows go through chunks of at most ``memory_budget`` bytes of working memory
(:func:`chunk_rows`), however many sources there are; with a shared ``numpy.memmap`` as
``out``, each finished chunk is written back to its file and dropped from this process's
resident memory (:func:`release_rows`), so an all-pairs table larger than memory streams
through a bounded resident set.
"""

from __future__ import annotations

import mmap
import numbers
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .config import ConfigSource, LaunchConfig
from .errors import InvalidArgumentError
from .graph import Graph

# The request and its checks live in sssp.request (the one validation entry); the names stay
# importable from here, where the many-source driver uses them.
from .request import (  # noqa: F401
    ManyRequest,
    build_request,
    check_limit,
    check_out,
    check_sources,
    distance_bound,
    is_one_source,
)
from .result import UNREACHABLE, MultiSourceResult, NearestSourceResult, unreachable_value

MEMORY_BUDGET: int = 256 * 2**20
"""Default working memory of one chunk of rows, in bytes: the chunk's rows of the distance and
predecessor tables (resident until the chunk is done), the engine's own row buffers and, when
``out`` has a narrower dtype than the solver's, the rows awaiting conversion."""


# -- the engine seam ------------------------------------------------------------------------------
class RowEngine(Protocol):
    """What a backend implements to compute many sources (one per backend).

    Attributes
    ----------
    backend : str
        ``"cpu"`` or ``"gpu"``.
    workers : int
        Solves that run at once (the driver sizes chunks so each worker has rows).
    """

    backend: str
    workers: int

    def row_bytes(self, n: int, want_pred: bool) -> int:
        """Working memory the engine allocates per row of a chunk, in bytes."""
        ...

    def fill(
        self,
        sources: np.ndarray,
        dist: np.ndarray,
        pred: np.ndarray | None,
        limit: int | float | None,
        on_row: Callable[[int], None],
    ) -> tuple[np.ndarray, float]:
        """Solve ``sources`` and write row ``i`` of ``dist`` (``native`` dtype, shape (c, n))
        and of ``pred`` (int32, or None) for ``sources[i]``, each with one assignment of the
        finished row; nodes farther than ``limit`` unreachable. ``on_row(count)`` is called
        from the calling thread as rows finish. Returns (iterations per row, device seconds;
        0.0 on the CPU). On an exception (Ctrl-C included) no row is written after it returns."""
        ...

    def nearest(
        self, sources: np.ndarray, limit: int | float | None, want_pred: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, float]:
        """One solve from all ``sources``: (dist, nearest, pred or None, iterations, device
        seconds), as :class:`NearestSourceResult` holds them."""
        ...


@dataclass(frozen=True)
class RunInfo:
    """What the result records about the solver that ran."""

    algorithm: str
    variant: str
    config: LaunchConfig | None = None
    config_source: ConfigSource | None = None
    stats: dict[str, Any] | None = None


def chunk_rows(n: int, k: int, per_row: int, budget: int, workers: int = 1) -> int:
    """Rows per chunk: as many as ``budget`` bytes hold at ``per_row`` bytes each, at least one
    and at most ``k``. A chunk smaller than ``workers`` rows leaves cores idle, so it grows
    to ``workers`` rows when that costs at most twice the budget."""
    rows = budget // max(per_row, 1)
    if rows < workers and workers * per_row <= 2 * budget:
        rows = workers
    return int(max(1, min(k, rows)))


def apply_limit(dist: np.ndarray, pred: np.ndarray | None, limit: int | float | None) -> None:
    """Make the nodes farther than ``limit`` unreachable, in place (a tree stays a tree: a
    node's predecessor is never farther than the node)."""
    if limit is None:
        return
    far = dist > limit
    if far.any():
        dist[far] = unreachable_value(dist.dtype)
        if pred is not None:
            pred[far] = -1


def _convert_row(row: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """One native row (int64 with UNREACHABLE, or float64 with inf) in a caller's dtype with
    that dtype's sentinel; the bounds were checked when the request was built."""
    if row.dtype.kind == "f" or dtype.kind == "f":
        conv = row.astype(dtype)
        if row.dtype.kind != "f":
            conv[row == UNREACHABLE] = np.inf
        return conv
    conv = row.astype(dtype)
    conv[row == UNREACHABLE] = unreachable_value(dtype)
    return conv


def release_rows(a: np.ndarray | None, start: int, stop: int) -> None:
    """Write rows ``[start, stop)`` of a shared ``numpy.memmap`` back to its file and drop them
    from this process's resident memory.

    Written pages of a file mapping count in the process's resident set until the kernel
    reclaims them, so an all-pairs table streamed into a memory map would otherwise grow the
    resident set to the table's size. ``MADV_DONTNEED`` on a shared file mapping only unmaps
    the pages: their contents stay in the file and the page cache (reading a row again maps
    it back). Copy-on-write maps (mode ``"c"``) would lose their changes, so only ``"r+"`` and
    ``"w+"`` maps are released; other arrays are left alone.
    """
    mm = getattr(a, "_mmap", None)
    if (
        a is None
        or mm is None
        or getattr(a, "mode", None) not in ("r+", "w+")
        or not a.flags.c_contiguous
        or not hasattr(mmap, "MADV_DONTNEED")
        or stop <= start
    ):
        return
    base = np.frombuffer(mm, dtype=np.uint8)
    try:
        origin = base.ctypes.data
    finally:
        del base  # the buffer export would keep the map from being closed
    rows = a[start:stop]
    lo = rows.ctypes.data - origin
    hi = min(lo + rows.nbytes, len(mm))
    lo -= lo % mmap.PAGESIZE
    if hi <= lo:
        return
    mm.flush(lo, hi - lo)
    mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def _progress_bar(total: int, progress: bool | None) -> Any:
    """A tqdm bar on stderr: with ``progress=None`` only when stderr is a terminal and the
    batch runs longer than a second; ``True`` always, ``False`` never."""
    from tqdm import tqdm

    if progress is None:
        disable = not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
        delay = 1.0
    else:
        disable, delay = not progress, 0.0
    return tqdm(
        total=total,
        desc="solve",
        unit="source",
        file=sys.stderr,
        disable=disable,
        delay=delay,
        dynamic_ncols=True,
    )


# -- the drivers ----------------------------------------------------------------------------------
def run_rows(
    engine: RowEngine,
    request: ManyRequest,
    info: RunInfo,
    *,
    progress: bool | None = None,
    memory_budget: int | None = None,
) -> MultiSourceResult:
    """Solve every source of ``request`` through ``engine``, chunk by chunk, into the caller's
    ``out``/``pred_out`` (or new arrays).

    Parameters
    ----------
    engine : RowEngine
    request : ManyRequest
    info : RunInfo
    progress : bool, optional
        Progress bar (see :func:`_progress_bar`).
    memory_budget : int, optional
        Working bytes per chunk (default :data:`MEMORY_BUDGET`).

    Returns
    -------
    MultiSourceResult
    """
    budget = MEMORY_BUDGET if memory_budget is None else check_budget(memory_budget)
    k, n = request.k, request.n
    src = request.sources
    native = request.native
    t0 = time.perf_counter()
    dist = np.empty((k, n), dtype=native) if request.out is None else request.out
    if request.want_pred:
        pred = (
            request.pred_out if request.pred_out is not None else np.empty((k, n), dtype=np.int32)
        )
    else:
        pred = None
    # Rows go straight into dist where the engine writes its dtype, else through a buffer.
    direct = dist.dtype == native or dist.dtype.name in getattr(engine, "direct_dtypes", ())
    # A chunk's rows stay resident until released (in a memory map too), plus the buffer.
    per_row = (
        engine.row_bytes(n, request.want_pred)
        + n * dist.dtype.itemsize
        + (4 * n if pred is not None else 0)
        + (0 if direct else n * native.itemsize)
    )
    rows = chunk_rows(n, k, per_row, budget, engine.workers)
    buf = None if direct else np.empty((rows, n), dtype=native)
    iterations = np.zeros(k, dtype=np.int64)
    device = 0.0
    chunks = 0
    bar = _progress_bar(k, progress)
    try:
        for a in range(0, k, rows):
            b = min(a + rows, k)
            target = dist[a:b] if buf is None else buf[: b - a]
            it, dev = engine.fill(
                src[a:b], target, None if pred is None else pred[a:b], request.limit, bar.update
            )
            iterations[a:b] = it
            device += dev
            if buf is not None:
                for i in range(b - a):  # one row per assignment: whole rows only
                    dist[a + i] = _convert_row(buf[i], dist.dtype)
            release_rows(dist, a, b)
            if pred is not None:
                release_rows(pred, a, b)
            chunks += 1
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    timings = {"wall": wall}
    if engine.backend == "gpu":
        timings["gpu"] = device
    stats = {
        **(info.stats or {}),
        "chunk_rows": rows,
        "chunks": chunks,
        "workers": engine.workers,
        "limit": request.limit,
        "memory_budget": budget,
    }
    return MultiSourceResult(
        sources=src,
        dist=dist,
        pred=pred,
        iterations=iterations,
        algorithm=info.algorithm,
        variant=info.variant,
        backend=engine.backend,
        timings=timings,
        config=info.config,
        config_source=info.config_source,
        stats=stats,
    )


def run_nearest(engine: RowEngine, request: ManyRequest, info: RunInfo) -> NearestSourceResult:
    """The ``min_only=True`` call: one solve from all the sources."""
    t0 = time.perf_counter()
    dist, nearest, pred, iterations, device = engine.nearest(
        request.sources, request.limit, request.want_pred
    )
    timings = {"wall": time.perf_counter() - t0}
    if engine.backend == "gpu":
        timings["gpu"] = device
    return NearestSourceResult(
        sources=request.sources,
        dist=dist,
        nearest=nearest,
        pred=pred,
        iterations=int(iterations),
        algorithm=info.algorithm,
        variant=info.variant,
        backend=engine.backend,
        timings=timings,
        config=info.config,
        config_source=info.config_source,
        stats={**(info.stats or {}), "limit": request.limit},
    )


def check_budget(memory_budget: Any) -> int:
    """A positive number of bytes."""
    if (
        isinstance(memory_budget, bool)
        or not isinstance(memory_budget, numbers.Integral)
        or memory_budget <= 0
    ):
        raise InvalidArgumentError(
            f"memory_budget must be a positive number of bytes, got {memory_budget!r}"
        )
    return int(memory_budget)


# -- many start nodes in one solve ----------------------------------------------------------------
def super_source_graph(graph: Graph, sources: np.ndarray) -> Graph:
    """``graph`` plus one virtual node ``n`` with a zero-weight edge to each distinct source:
    one solve from ``n`` gives every node its distance from the nearest source."""
    starts = np.unique(sources).astype(np.int32)
    indptr = np.concatenate([graph.indptr, [graph.m + starts.size]])
    indices = np.concatenate([graph.indices, starts])
    weights = np.concatenate([graph.weights, np.zeros(starts.size, dtype=graph.weights.dtype)])
    return Graph(indptr, indices, weights, name=f"{graph.name}+super-source", meta=dict(graph.meta))


def nearest_from_super(
    dist: np.ndarray, pred: np.ndarray, n: int, sources: np.ndarray, limit: int | float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dist, nearest, pred) on the ``n`` real nodes from a solve of :func:`super_source_graph`
    from its virtual node: the virtual edges are cut (each source becomes a root and its own
    nearest source, even where another source reaches it at distance 0 too), and every node's
    nearest source is the root of its tree."""
    dist = np.array(dist[:n])
    pred = np.array(pred[:n], dtype=np.int32)
    pred[pred == n] = -1
    pred[sources] = -1
    apply_limit(dist, pred, limit)
    return dist, roots(pred, dist), pred


def roots(pred: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """The root of every reached node's tree, -1 for unreached nodes (pointer doubling:
    O(n log depth), in NumPy)."""
    n = pred.size
    reached = np.isfinite(dist) if dist.dtype.kind == "f" else dist != UNREACHABLE
    root = np.where(pred >= 0, pred, np.arange(n, dtype=np.int32)).astype(np.int32)
    root[~reached] = -1
    live = np.flatnonzero(reached)
    while live.size:
        nxt = root[root[live]]
        moved = nxt != root[live]
        root[live] = nxt
        live = live[moved]
    return root


# -- the GPU engines --------------------------------------------------------------------------------
class BatchedGPURows:
    """Engine 2's many-source path (:meth:`sssp.gpu.engine.EngineSolver.solve_rows`): several
    sources in flight at once on the cluster loop, back to back in one stream on the others,
    each row written by the device in the caller's dtype into page-locked staging and copied in
    chunk by chunk.

    Parameters
    ----------
    gpu : EngineSolver
    looping : LoopingGPURows
        For ``min_only`` (one solve from a super-source).
    """

    backend = "gpu"
    workers = 1
    direct_dtypes = ("int64", "int32", "float64", "float32")

    def __init__(self, gpu: Any, looping: LoopingGPURows) -> None:
        self._gpu = gpu
        self._looping = looping

    def row_bytes(self, n: int, want_pred: bool) -> int:
        return 0  # the engine's staging is a fixed few chunks, whatever the chunk of the driver

    def fill(
        self,
        sources: np.ndarray,
        dist: np.ndarray,
        pred: np.ndarray | None,
        limit: int | float | None,
        on_row: Callable[[int], None],
    ) -> tuple[np.ndarray, float]:
        iterations = np.zeros(sources.size, dtype=np.int64)
        if limit is None:
            device = self._gpu.solve_rows(sources, dist, pred, iterations)
        else:  # rows whole before the limit: solved into a buffer, cut, then assigned
            rows = np.empty_like(dist)
            tree = None if pred is None else np.empty_like(pred)
            device = self._gpu.solve_rows(sources, rows, tree, iterations)
            apply_limit(rows, tree, limit)
            dist[...] = rows
            if pred is not None:
                pred[...] = tree
        on_row(sources.size)
        return iterations, device

    def nearest(
        self, sources: np.ndarray, limit: int | float | None, want_pred: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, float]:
        return self._looping.nearest(sources, limit, want_pred)

    def close(self) -> None:
        """The engine belongs to the :class:`Solver`; nothing to free here."""


class LoopingGPURows:
    """The GPU engine of the paper's loop (no batched path): one source after another on the
    single-source solver, each row copied out as it finishes, so the device holds one solve's
    memory whatever k is.

    Parameters
    ----------
    gpu : object
        The solver of :func:`sssp.gpu.make_solver` for the graph.
    make_solver : callable
        ``make_solver(graph)`` builds a solver with the same algorithm and configuration for
        another graph (``min_only``'s super-source graph).
    graph : Graph
    options : mapping
        Keyword options of each ``gpu.solve`` call (``profile``).
    """

    backend = "gpu"
    workers = 1

    def __init__(
        self,
        gpu: Any,
        make_solver: Callable[[Graph], Any],
        graph: Graph,
        options: dict[str, Any] | None = None,
    ) -> None:
        self._gpu = gpu
        self._make_solver = make_solver
        self.graph = graph
        self._options = dict(options or {})

    def row_bytes(self, n: int, want_pred: bool) -> int:
        return 0  # each row is the engine's own host array, copied in as it finishes

    def fill(
        self,
        sources: np.ndarray,
        dist: np.ndarray,
        pred: np.ndarray | None,
        limit: int | float | None,
        on_row: Callable[[int], None],
    ) -> tuple[np.ndarray, float]:
        iterations = np.zeros(sources.size, dtype=np.int64)
        device = 0.0
        for i, s in enumerate(sources.tolist()):
            res = self._gpu.solve(int(s), **self._options)
            d = np.array(res.dist)
            p = np.array(res.pred) if pred is not None else None
            apply_limit(d, p, limit)
            dist[i] = d
            if pred is not None:
                pred[i] = p
            iterations[i] = res.iterations
            device += float(res.timings.get("gpu", 0.0))
            on_row(1)
        return iterations, device

    def nearest(
        self, sources: np.ndarray, limit: int | float | None, want_pred: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, float]:
        # For now one solve on a graph with a virtual super-source (zero-weight edges to each
        # source), built and uploaded once per call; a batched engine can seed its queues with
        # the sources instead.
        n = self.graph.n
        big = super_source_graph(self.graph, sources)
        solver = self._make_solver(big)
        try:
            res = solver.solve(n, **self._options)
        finally:
            solver.close()
        dist, nearest, pred = nearest_from_super(res.dist, res.pred, n, sources, limit)
        return (
            dist,
            nearest,
            pred if want_pred else None,
            res.iterations,
            float(res.timings.get("gpu", 0.0)),
        )

    def close(self) -> None:
        """The single-source solver belongs to the :class:`Solver`; nothing to free here."""
