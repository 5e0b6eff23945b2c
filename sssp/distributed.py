"""Many sources over several GPUs and hosts on Dask distributed.

One Dask worker per GPU (e.g. ``dask-cuda``'s ``LocalCUDACluster``, or ``dask worker`` started
with ``CUDA_VISIBLE_DEVICES`` set per GPU) holds the graph and a :class:`~sssp.Solver` for it:
the graph travels once per worker inside a worker plugin (:class:`SolverPlugin`), which Dask also
installs on workers that join later, such as one the nanny restarted. The sources are cut into
chunks, each chunk one task; the client keeps a few chunks per worker in flight and writes each
chunk's rows into ``out`` (a ``numpy.memmap`` for tables larger than memory) as its result
arrives, in source order.

A worker lost mid-batch: the scheduler runs the chunks it held again on the others (each task
counts the workers that died running it, and is given up after
``distributed.scheduler.allowed-failures`` of them, 3 by default, with ``KilledWorker``). The
client writes a chunk only when its result arrives and records which chunks have landed, so
every row is written once, whole, and none is lost; a chunk that fails for good (or Ctrl-C)
stops the batch with the rows written so far whole and the others untouched.

``dask[distributed]`` is an optional dependency: the ``distributed`` extra of sssp-tune.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from typing import Any

import numpy as np

from .convert import as_graph
from .errors import BackendUnavailableError, InvalidArgumentError, InvalidTypeError
from .graph import Graph
from .many import (
    MEMORY_BUDGET,
    _convert_row,
    _progress_bar,
    build_request,
    check_budget,
    release_rows,
)
from .multidevice import CHUNKS_PER_DEVICE, plan_chunks
from .result import MultiSourceResult

try:  # the optional dependency; without it solve_many says how to install it
    from distributed import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover - the extra is not installed
    _WorkerPlugin = object  # type: ignore[assignment,misc]

log = logging.getLogger(__name__)

SOLVER_OPTIONS = ("algorithm", "variant", "backend", "tuned", "config", "db", "device", "delta")
"""The :class:`~sssp.Solver` options each worker's solver is built with."""

IN_FLIGHT_PER_WORKER = 2
"""Chunks queued per worker: one running, one ready to start, so no worker waits on the client."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as err:
        raise BackendUnavailableError(
            "distributed",
            f"dask.distributed cannot be imported ({err})",
            hint="from the sssp-tune checkout: pip install -e '.[distributed]'",
        ) from err
    return distributed


class SolverPlugin(_WorkerPlugin):
    """A Dask worker plugin that holds the graph and builds the worker's solver on first use
    (so a bad option reaches the client as the task's error), closed when the plugin goes.

    Parameters
    ----------
    graph : Graph
    options : dict
        :class:`~sssp.Solver` options (:data:`SOLVER_OPTIONS`).
    """

    def __init__(self, graph: Graph, options: dict[str, Any]) -> None:
        self.graph = graph
        self.options = dict(options)
        self._solver: Any = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"graph": self.graph, "options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.graph = state["graph"]
        self.options = dict(state["options"])
        self._solver = None
        self._lock = threading.Lock()

    def setup(self, worker: Any) -> None:
        self.address = worker.address

    def teardown(self, worker: Any) -> None:
        with self._lock:
            if self._solver is not None:
                self._solver.close()
                self._solver = None

    def solver(self) -> Any:
        """The worker's solver, built once (the GPU upload happens here)."""
        with self._lock:
            if self._solver is None:
                from .solve import Solver

                self._solver = Solver(self.graph, **self.options)
            return self._solver


def _solve_chunk(
    name: str, sources: np.ndarray, limit: Any, want_pred: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, dict[str, Any]]:
    """One task: the rows of ``sources`` on this worker's solver (native dtype)."""
    from distributed import get_worker

    worker = get_worker()
    plugin = worker.plugins[name]
    assert isinstance(plugin, SolverPlugin), type(plugin)
    solver = plugin.solver()
    r = solver.solve_many(sources, return_predecessors=want_pred, limit=limit, progress=False)
    meta = {
        "worker": worker.address,
        "algorithm": r.algorithm,
        "variant": r.variant,
        "backend": r.backend,
        "config_source": None if r.config_source is None else r.config_source.value,
    }
    return np.asarray(r.dist), None if r.pred is None else np.asarray(r.pred), r.iterations, meta


def solve_many(
    client: Any,
    graph: Any,
    sources: Any,
    *,
    out: np.ndarray | None = None,
    pred_out: np.ndarray | None = None,
    return_predecessors: bool | None = None,
    limit: float | None = None,
    chunk: int | None = None,
    progress: bool | None = None,
    memory_budget: int | None = None,
    **options: Any,
) -> MultiSourceResult:
    """Distances from each of many sources, one row per source in the order of ``sources``,
    solved on the workers of a Dask cluster (``Solver.solve_many``'s call spread over hosts).

    Parameters
    ----------
    client : distributed.Client
        Connected to a cluster with one worker per GPU (one thread each, as one GPU runs one
        batch at a time), or CPU workers.
    graph : Graph, SciPy sparse matrix or NetworkX graph
        Sent once to every worker.
    sources, out, pred_out, return_predecessors, limit
        As :meth:`sssp.Solver.solve_many`: ``out`` (k, n) is written on the client as chunks
        arrive, a ``numpy.memmap`` for tables larger than memory.
    chunk : int, optional
        Sources per task. Default: about four chunks per worker, within the memory budget.
    progress : bool, optional
        A progress bar on stderr (by default on a terminal, for batches over a second).
    memory_budget : int, optional
        Bytes of chunk results in flight at once (default :data:`sssp.many.MEMORY_BUDGET`).
    **options
        The workers' :class:`~sssp.Solver` options: ``algorithm``, ``variant``, ``backend``,
        ``tuned``, ``config``, ``db``, ``device`` (each worker's GPU ordinal, default 0),
        ``delta``. A bad value is refused by the first task, as the Solver refuses it.

    Returns
    -------
    MultiSourceResult
        ``stats["rows_per_worker"]`` says which worker solved how many rows,
        ``stats["chunks"]`` and ``stats["chunk_rows"]`` how the batch was cut.

    Raises
    ------
    InvalidTypeError, InvalidArgumentError, InvalidGraphError
        Bad input (:func:`sssp.many.build_request`), before anything is sent or written; an
        unknown option name; a cluster without workers.
    distributed.KilledWorker
        A chunk whose workers died ``allowed-failures`` times; the rows written by then are
        whole, the others untouched.
    """
    unknown = sorted(set(options) - set(SOLVER_OPTIONS))
    if unknown:
        raise InvalidTypeError(f"solve_many() got an unexpected keyword argument {unknown[0]!r}")
    graph = as_graph(graph)
    request = build_request(
        graph,
        sources,
        out=out,
        pred_out=pred_out,
        return_predecessors=return_predecessors,
        limit=limit,
    )
    budget = MEMORY_BUDGET if memory_budget is None else check_budget(memory_budget)
    distributed = _distributed()
    workers = len(client.scheduler_info().get("workers", {}))
    if workers == 0:
        raise InvalidArgumentError("the Dask cluster has no workers: start some, then solve")
    k, n = request.k, request.n
    native = request.native
    in_flight = IN_FLIGHT_PER_WORKER * workers
    result_row = n * (native.itemsize + (4 if request.want_pred else 0))
    cap = max(1, budget // max(1, in_flight * result_row))
    if chunk is None:
        rows = min(cap, max(1, math.ceil(k / (workers * CHUNKS_PER_DEVICE))))
    else:
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk <= 0:
            raise InvalidArgumentError(f"chunk must be a positive number of rows, got {chunk!r}")
        rows = min(chunk, k)
    chunks = plan_chunks(k, rows)
    t0 = time.perf_counter()
    dist = np.empty((k, n), dtype=native) if request.out is None else request.out
    if request.want_pred:
        pred = (
            request.pred_out if request.pred_out is not None else np.empty((k, n), dtype=np.int32)
        )
    else:
        pred = None
    iterations = np.zeros(k, dtype=np.int64)
    name = f"sssp-solver-{uuid.uuid4().hex}"
    landed: dict[int, str] = {}  # chunk index -> the worker whose result was written
    meta: dict[str, Any] = {}
    client.register_plugin(SolverPlugin(graph, options), name=name)
    bar = _progress_bar(k, progress)
    pending: dict[Any, int] = {}
    try:
        ac = distributed.as_completed()
        queued = 0

        def submit(idx: int) -> None:
            a, b = chunks[idx]
            fut = client.submit(
                _solve_chunk,
                name,
                request.sources[a:b],
                request.limit,
                request.want_pred,
                key=f"{name}-chunk-{idx}",
                pure=False,
            )
            pending[fut] = idx
            ac.add(fut)

        while queued < min(in_flight, len(chunks)):
            submit(queued)
            queued += 1
        for fut in ac:
            idx = pending.pop(fut)
            d, p, its, info = fut.result()  # a chunk that failed for good stops the batch
            fut.release()
            if idx in landed:  # a result seen before: its rows are in already
                log.warning("chunk %d arrived twice; kept the first", idx)
                continue
            a, b = chunks[idx]
            if dist.dtype == native:
                dist[a:b] = d  # one assignment: a Ctrl-C lands before or after it
            else:
                for i in range(b - a):
                    dist[a + i] = _convert_row(d[i], dist.dtype)
            if pred is not None:
                pred[a:b] = p
            iterations[a:b] = its
            release_rows(dist, a, b)
            if pred is not None:
                release_rows(pred, a, b)
            landed[idx] = info["worker"]
            meta = meta or info
            bar.update(b - a)
            if queued < len(chunks):
                submit(queued)
                queued += 1
    finally:
        bar.close()
        if pending:
            client.cancel(list(pending))
        try:
            client.unregister_worker_plugin(name)
        except Exception as err:  # a worker gone: its plugin went with it
            log.debug("unregistering %s: %s", name, err)
    if len(landed) != len(chunks):  # cannot happen: every chunk's result was awaited
        raise RuntimeError(f"{len(chunks) - len(landed)} chunks never landed")
    rows_per_worker: dict[str, int] = {}
    for idx, address in landed.items():
        a, b = chunks[idx]
        rows_per_worker[address] = rows_per_worker.get(address, 0) + b - a
    stats = {
        "chunk_rows": rows,
        "chunks": len(chunks),
        "workers": workers,
        "rows_per_worker": rows_per_worker,
        "config_source": meta.get("config_source"),
        "limit": request.limit,
        "memory_budget": budget,
    }
    return MultiSourceResult(
        sources=request.sources,
        dist=dist,
        pred=pred,
        iterations=iterations,
        algorithm=meta["algorithm"],
        variant=meta["variant"],
        backend=meta["backend"],
        timings={"wall": time.perf_counter() - t0},
        stats=stats,
    )
