"""Many sources over several devices of one host: one row engine per device, each on a thread
of its own, and a dealer that hands chunks of sources to whichever device is free.

``Solver.solve_many(sources, devices=[0, 1])`` builds one :class:`DeviceWorker` per GPU
(:func:`gpu_workers`): a thread that makes the device's primary context current
(:func:`sssp.gpu.device.activate`; CUDA's current context is per thread), builds there a GPU
solver with the launch configuration tuned for that device, uploads the graph once and keeps it
for the next batch. :func:`deal_rows` then runs the batch: the sources are cut into chunks, each
device thread takes the next chunk as soon as it is done with its last one, and writes the
chunk's rows into the one ``out`` table, in source order whichever device solved them.

The dealing itself knows nothing of GPUs: a worker is any :class:`sssp.many.RowEngine` and a
thread, so the tests run it with CPU engines of different speeds.

Whole rows only, as on one device: an engine writes each row with one assignment of a finished
row (or a whole chunk at once), a worker converts a chunk into a narrower ``out`` dtype one
row at a time, and when the batch stops (Ctrl-C in the calling thread, an error on a device)
the dealer waits for the chunks in flight before it raises, so no row is written after
:func:`deal_rows` returns or raises and every row of ``out`` is either right or untouched.
"""

from __future__ import annotations

import functools
import logging
import math
import numbers
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np

from .errors import InvalidArgumentError, InvalidTypeError
from .many import (
    MEMORY_BUDGET,
    ManyRequest,
    RowEngine,
    RunInfo,
    _convert_row,
    _progress_bar,
    check_budget,
    chunk_rows,
    release_rows,
)
from .result import MultiSourceResult

log = logging.getLogger(__name__)

CHUNKS_PER_DEVICE = 4
"""Chunks each device gets on average: enough that a device that runs slower (another load on
it, a busier PCIe link) takes fewer of them, few enough that each chunk keeps a whole GPU busy."""

_POLL_S = 0.1
"""How often the calling thread wakes while the devices work: a blocked wait would not see a
Ctrl-C that the operating system delivered to another thread of the process."""


# -- the devices argument -------------------------------------------------------------------------
def check_devices(devices: Any, count: int | None) -> tuple[int, ...]:
    """The device ordinals of a ``devices=`` argument, checked against the devices visible.

    Parameters
    ----------
    devices : sequence of int
        CUDA ordinals, e.g. ``[0, 1]``; each at most once.
    count : int or None
        Devices visible to this process; None checks everything but the range.

    Returns
    -------
    tuple of int

    Raises
    ------
    InvalidTypeError
        Not a sequence of integers (bool refused).
    InvalidArgumentError
        Empty, an ordinal given twice, or one outside ``[0, count)``.
    """
    if isinstance(devices, str | bytes) or not isinstance(devices, Sequence | np.ndarray):
        raise InvalidTypeError(
            f"devices must be a sequence of device ordinals such as [0, 1], got {devices!r}"
        )
    items = list(devices)
    for d in items:
        if isinstance(d, bool | np.bool_) or not isinstance(d, numbers.Integral):
            raise InvalidTypeError(f"device {d!r} is not an integer device ordinal")
    ordinals = tuple(int(d) for d in items)
    if not ordinals:
        raise InvalidArgumentError("devices is empty: give at least one device ordinal")
    seen: set[int] = set()
    for d in ordinals:
        if d in seen:
            raise InvalidArgumentError(
                f"device {d} is given twice in devices={list(ordinals)}: each device once"
            )
        seen.add(d)
    for d in ordinals:
        if count is not None and not 0 <= d < count:
            raise InvalidArgumentError(
                f"device {d} does not exist: {count} device{'s' if count != 1 else ''} visible "
                f"(ordinals 0 to {count - 1})"
            )
    return ordinals


# -- one device's thread --------------------------------------------------------------------------
class DeviceWorker:
    """A device's thread and the row engine that lives on it.

    Everything that touches the device (building the engine, every chunk, closing) runs on the
    worker's one thread, so a thread-bound state such as CUDA's current context is set once.

    Parameters
    ----------
    label : str
        How results and logs name the device, e.g. ``"cuda:1"``.
    build : callable
        ``build()`` returns the :class:`~sssp.many.RowEngine`; called on the worker's thread.
    enter : callable, optional
        Called first on the worker's thread (make the device current).
    leave : callable, optional
        Called last on the worker's thread, after the engine is closed.
    close_engine : bool
        Whether :meth:`close` closes the engine (False for an engine that belongs to someone
        else).
    """

    def __init__(
        self,
        label: str,
        build: Callable[[], RowEngine],
        *,
        enter: Callable[[], Any] | None = None,
        leave: Callable[[], Any] | None = None,
        close_engine: bool = True,
    ) -> None:
        self.label = label
        self._leave = leave
        self._close_engine = close_engine
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sssp-{label}")
        self._entered = self._thread.submit(enter) if enter is not None else None
        self._built: Future = self._thread.submit(self._build, build)
        self.engine: RowEngine | None = None

    def _build(self, build: Callable[[], RowEngine]) -> RowEngine:
        if self._entered is not None:
            self._entered.result()  # done: the same thread ran it first
        return build()

    def ready(self) -> RowEngine:
        """Wait until the engine is built; raises what building it raised."""
        if self.engine is None:
            self.engine = self._built.result()
        return self.engine

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run ``fn(*args)`` on the worker's thread."""
        return self._thread.submit(fn, *args)

    def close(self) -> None:
        """Close the engine and leave the device, on the worker's thread; end the thread."""

        def finish() -> None:
            try:
                if self._close_engine and self._built.done() and self._built.exception() is None:
                    close = getattr(self._built.result(), "close", None)
                    if close is not None:
                        close()
            finally:
                if self._leave is not None:
                    self._leave()

        try:
            self._thread.submit(finish).result()
        finally:
            self._thread.shutdown(wait=True)
            self.engine = None


def start_workers(workers: Sequence[DeviceWorker]) -> list[DeviceWorker]:
    """Wait until every worker's engine is built (the builds run at once, one per device); if
    one fails, close them all and raise its error."""
    try:
        for w in workers:
            w.ready()
    except BaseException:
        close_workers(workers)
        raise
    return list(workers)


def close_workers(workers: Sequence[DeviceWorker]) -> None:
    """Close every worker, even when closing one fails (the first error is raised after)."""
    first: BaseException | None = None
    for w in workers:
        try:
            w.close()
        except BaseException as err:  # the others still hold device memory: close them too
            first = first or err
    if first is not None:
        raise first


class DeviceSet:
    """The started workers of one ``devices=`` tuple, kept by the :class:`~sssp.Solver` for its
    next batch (its ``close`` is the solver's cleanup hook)."""

    def __init__(self, workers: Sequence[DeviceWorker]) -> None:
        self.workers = start_workers(workers)

    def close(self) -> None:
        close_workers(self.workers)
        self.workers = []


# -- the dealer ------------------------------------------------------------------------------------
def plan_chunks(k: int, rows: int) -> list[tuple[int, int]]:
    """Rows ``[a, b)`` of each chunk, in source order."""
    return [(a, min(a + rows, k)) for a in range(0, k, rows)]


def deal_rows(
    workers: Sequence[DeviceWorker],
    request: ManyRequest,
    info: RunInfo,
    *,
    chunk: int | None = None,
    progress: bool | None = None,
    memory_budget: int | None = None,
) -> MultiSourceResult:
    """Solve every source of ``request`` on the workers, each taking the next chunk of sources
    when it is free, into the caller's ``out``/``pred_out`` (or new arrays) in source order.

    Parameters
    ----------
    workers : sequence of DeviceWorker
        Started (:func:`start_workers`); their engines have one backend.
    request : ManyRequest
        Not ``min_only``.
    info : RunInfo
    chunk : int, optional
        Rows per chunk. Default: about :data:`CHUNKS_PER_DEVICE` chunks per worker, at least
        the largest engine's ``workers`` rows, and within the memory budget.
    progress : bool, optional
        Progress bar (:func:`sssp.many._progress_bar`).
    memory_budget : int, optional
        Working bytes of all the chunks in flight together (default
        :data:`sssp.many.MEMORY_BUDGET`).

    Returns
    -------
    MultiSourceResult
        ``stats["devices"]`` names the workers, ``stats["rows_per_device"]`` and
        ``stats["chunks_per_device"]`` count what each solved; ``timings["gpu"]`` on the GPU is
        the device seconds summed over the devices, ``stats["device_seconds"]`` per device.

    Raises
    ------
    BaseException
        The first error of a worker (or the caller's Ctrl-C), after the chunks in flight have
        finished: every row is then either written whole or untouched.
    """
    if not workers:
        raise InvalidArgumentError("no devices to solve on")
    if request.min_only:
        raise InvalidArgumentError("min_only=True is one solve: it runs on one device")
    engines = [w.ready() for w in workers]
    backend = engines[0].backend
    budget = MEMORY_BUDGET if memory_budget is None else check_budget(memory_budget)
    k, n = request.k, request.n
    src, native = request.sources, request.native
    t0 = time.perf_counter()
    dist = np.empty((k, n), dtype=native) if request.out is None else request.out
    if request.want_pred:
        pred = (
            request.pred_out if request.pred_out is not None else np.empty((k, n), dtype=np.int32)
        )
    else:
        pred = None
    direct = [
        dist.dtype == native or dist.dtype.name in getattr(e, "direct_dtypes", ()) for e in engines
    ]
    per_row = max(
        e.row_bytes(n, request.want_pred)
        + n * dist.dtype.itemsize
        + (4 * n if pred is not None else 0)
        + (0 if d else n * native.itemsize)
        for e, d in zip(engines, direct, strict=True)
    )
    widest = max(e.workers for e in engines)
    # The budget covers every device's chunk in flight at once.
    cap = chunk_rows(n, k, per_row, max(1, budget // len(workers)), widest)
    if chunk is None:
        rows = min(cap, max(widest, math.ceil(k / (len(workers) * CHUNKS_PER_DEVICE))))
    else:
        if isinstance(chunk, bool) or not isinstance(chunk, numbers.Integral) or chunk <= 0:
            raise InvalidArgumentError(f"chunk must be a positive number of rows, got {chunk!r}")
        rows = int(min(chunk, k))
    chunks = plan_chunks(k, rows)
    iterations = np.zeros(k, dtype=np.int64)
    taken = 0  # chunks[taken:] are still to deal
    lock = threading.Lock()
    stop = threading.Event()
    landed = [""] * len(chunks)  # which worker wrote each chunk
    bar = _progress_bar(k, progress)
    device_s = [0.0] * len(workers)

    def on_row(count: int) -> None:
        with lock:  # tqdm's counter is not thread-safe
            bar.update(count)

    def work(slot: int) -> None:
        nonlocal taken
        w, engine = workers[slot], engines[slot]
        buf = None if direct[slot] else np.empty((rows, n), dtype=native)
        while not stop.is_set():
            with lock:
                if taken == len(chunks):
                    return
                idx = taken
                taken += 1
            a, b = chunks[idx]
            target = dist[a:b] if buf is None else buf[: b - a]
            it, dev = engine.fill(
                src[a:b], target, None if pred is None else pred[a:b], request.limit, on_row
            )
            if buf is not None:
                if stop.is_set():  # the batch stopped: leave the converted rows out
                    return
                for i in range(b - a):  # one row per assignment: whole rows only
                    dist[a + i] = _convert_row(buf[i], dist.dtype)
            iterations[a:b] = it
            device_s[slot] += dev
            release_rows(dist, a, b)
            if pred is not None:
                release_rows(pred, a, b)
            landed[idx] = w.label

    futures = [w.submit(work, i) for i, w in enumerate(workers)]
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=_POLL_S, return_when=FIRST_EXCEPTION)
            for f in done:
                f.result()  # a worker's error stops the batch
    except BaseException:
        stop.set()
        _drain(futures)
        raise
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    labels = [w.label for w in workers]
    timings = {"wall": wall}
    if backend == "gpu":
        timings["gpu"] = sum(device_s)
    rows_per = dict.fromkeys(labels, 0)
    chunks_per = dict.fromkeys(labels, 0)
    for (a, b), label in zip(chunks, landed, strict=True):
        rows_per[label] += b - a
        chunks_per[label] += 1
    stats = {
        **(info.stats or {}),
        "devices": labels,
        "rows_per_device": rows_per,
        "chunks_per_device": chunks_per,
        "device_seconds": dict(zip(labels, device_s, strict=True)),
        "chunk_rows": rows,
        "chunks": len(chunks),
        "workers": sum(e.workers for e in engines),
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
        backend=backend,
        timings=timings,
        config=info.config,
        config_source=info.config_source,
        stats=stats,
    )


def _drain(futures: Sequence[Future]) -> None:
    """Wait until every worker has left its chunk in flight (each finishes its rows whole), even
    through a second Ctrl-C: returning earlier would let rows land after the call ended."""
    while True:
        try:
            wait(futures)
            return
        except KeyboardInterrupt:
            log.warning("waiting for the chunks in flight to finish (their rows are written whole)")


# -- GPUs ------------------------------------------------------------------------------------------
def gpu_workers(solver: Any, devices: Sequence[int], options: dict[str, Any]) -> list[DeviceWorker]:
    """One worker per device for ``solver``'s graph: a solver built on that device with the
    launch configuration stored for it (as :class:`~sssp.Solver` resolves it for one device),
    or the solver's own for its own device (its upload reused).

    Parameters
    ----------
    solver : Solver
        On the GPU backend.
    devices : sequence of int
        Checked ordinals.
    options : dict
        GPU options of each solve (``profile``): the engine then solves one source at a time.
    """
    from .gpu.device import activate, adopt, deactivate

    workers = []
    for d in devices:

        def build(d: int = d) -> RowEngine:
            return _device_rows(solver, d, options)

        # The solver's own device runs the solver itself (_device_rows): its thread works in
        # the solver's context object, so that the solver's close frees what the thread staged.
        own = getattr(solver._gpu, "context", None) if d == solver._device else None
        enter = functools.partial(activate, d) if own is None else functools.partial(adopt, own, d)
        workers.append(DeviceWorker(f"cuda:{d}", build, enter=enter, leave=deactivate))
    return workers


class _OnDevice:
    """A device's row engine with the facts the result records about it."""

    def __init__(
        self, rows: Any, gpu: Any, owned: bool, detail: dict[str, Any], workers: int
    ) -> None:
        self._rows, self._gpu, self._owned = rows, gpu, owned
        self.backend = rows.backend
        self.detail = detail
        self.workers = workers
        self.direct_dtypes = getattr(rows, "direct_dtypes", ())

    def row_bytes(self, n: int, want_pred: bool) -> int:
        return self._rows.row_bytes(n, want_pred)

    def fill(self, *args: Any) -> tuple[np.ndarray, float]:
        return self._rows.fill(*args)

    def nearest(self, *args: Any) -> Any:
        return self._rows.nearest(*args)

    def close(self) -> None:
        if self._owned:
            self._gpu.close()


def _device_rows(solver: Any, device: int, options: dict[str, Any]) -> _OnDevice:
    """Build (on the device's thread) the row engine of ``device`` for ``solver``."""
    from .config import ConfigSource, LaunchConfig
    from .gpu import device_info, make_solver
    from .many import BatchedGPURows, LoopingGPURows

    graph, variant = solver.graph, solver.variant
    algorithm, delta = solver.algorithm, solver.delta
    mode, db = solver._tuning
    own = device == solver._device and solver._gpu is not None
    detail = ""
    if own:
        gpu = solver._gpu
        config, source, detail = solver.config, solver.config_source, solver.config_detail
    else:
        if mode == "explicit":
            config, source = solver.config, ConfigSource.EXPLICIT
        elif mode in ("auto", "tuned"):
            from .tuned import resolve_choice

            # this device's records (as the solver read its own: resolve_pick)
            asked = "auto" if mode == "auto" else solver.request.algorithm or algorithm
            algorithm, picked, config, source, detail = resolve_choice(
                graph, device_info(device), algorithm=asked, variant=variant, db=db
            )
            delta = picked if solver.request.delta is None else solver.request.delta
        else:
            config, source = LaunchConfig.default(), ConfigSource.DEFAULT
        gpu_options = dict(solver._gpu_options)
        if delta is not None:
            gpu_options["delta"] = delta
        elif mode in ("auto", "tuned"):  # this device's pick takes none
            gpu_options.pop("delta", None)
        gpu = make_solver(
            graph,
            algorithm=algorithm,
            variant=variant,
            config=config,
            config_source=source,
            device=device,
            **gpu_options,
        )
        gpu.config_detail = detail
    log.info("cuda:%d: %s, %s (%s) %s", device, algorithm, config, source.value, detail)

    def for_graph(g: Any) -> Any:  # LoopingGPURows' min_only solver; min_only runs on one device
        raise InvalidArgumentError("min_only=True is one solve: it runs on one device")

    rows: Any = LoopingGPURows(gpu, for_graph, graph, options)
    workers = 1
    if hasattr(gpu, "solve_rows") and not options:
        rows = BatchedGPURows(gpu, rows)
        # Sources in flight at once: a chunk of fewer rows leaves part of the device idle.
        workers = max(1, int(gpu.many_stats(False)["lanes"]))
    facts = {
        "device": device,
        "algorithm": algorithm,
        "config": None if config is None else config.as_dict(),
        "config_source": source.value,
        "config_detail": detail,
    }
    return _OnDevice(rows, gpu, not own, facts, workers)


def solve_on_devices(
    solver: Any,
    request: ManyRequest,
    devices: Any,
    *,
    progress: bool | None,
    memory_budget: int | None,
    options: dict[str, Any],
) -> MultiSourceResult:
    """``Solver.solve_many(..., devices=...)``: the batch dealt over the solver's GPUs.

    The workers of a ``devices`` tuple are built once per solver (each device compiles, looks up
    its tuned record and uploads the graph on the first batch) and kept until
    :meth:`Solver.close`.

    Raises
    ------
    InvalidArgumentError
        ``devices`` on the CPU backend, with ``min_only``, or bad ordinals
        (:func:`check_devices`).
    """
    from .result import ALGORITHMS

    ordinals = check_devices(devices, None)
    if solver.backend != "gpu":
        raise InvalidArgumentError(
            f"devices={list(ordinals)} applies to the GPU backend; this solver runs on the CPU "
            "(which already spreads a batch over every core)"
        )
    if request.min_only:
        raise InvalidArgumentError("min_only=True is one solve: devices= does not apply")
    from .gpu.device import device_count

    ordinals = check_devices(ordinals, device_count())
    # The engines keep the solve options they were made with (profile=...): a key per value.
    key = ("devices", ordinals, tuple(sorted((k, repr(v)) for k, v in options.items())))
    held = solver._rows.get(key)
    if held is None:
        held = solver._rows[key] = DeviceSet(gpu_workers(solver, ordinals, options))
    per_device = [w.ready().detail for w in held.workers]
    first = per_device[0]
    algorithms = {p["algorithm"] for p in per_device}
    stats: dict[str, Any] = {"per_device": per_device, "loop": getattr(solver._gpu, "loop", "")}
    if solver.config_detail:
        stats["config_detail"] = solver.config_detail
    algorithm = first["algorithm"] if len(algorithms) == 1 else solver.algorithm
    if algorithm not in ALGORITHMS:
        algorithm = solver.algorithm
    info = RunInfo(algorithm, solver.variant, solver.config, solver.config_source, stats=stats)
    return deal_rows(held.workers, request, info, progress=progress, memory_budget=memory_budget)
