"""The front door: :func:`solve` and the reusable :class:`Solver`."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any, Literal, overload

import numpy as np

from .config import ConfigSource, LaunchConfig
from .convert import as_graph
from .errors import (
    BackendUnavailableError,
    ConfigIgnoredWarning,
    InvalidArgumentError,
    InvalidTypeError,
    SolverError,
    SSSPError,
    warn,
)
from .graph import Graph
from .request import BACKENDS, SolverRequest, check_limit, check_source, is_one_source
from .result import (
    CPU_ONLY_ALGORITHMS,
    MultiSourceResult,
    NearestSourceResult,
    SSSPResult,
)

log = logging.getLogger(__name__)

__all__ = ["BACKENDS", "Solver", "clear_solver_cache", "solve"]

GraphLike = Any
"""A :class:`Graph`, a SciPy sparse matrix or array, or a NetworkX graph (:func:`sssp.as_graph`)."""

_MANY_ONLY = (
    "out",
    "pred_out",
    "return_predecessors",
    "min_only",
    "progress",
    "memory_budget",
    "devices",
)


class Solver:
    """Solve shortest paths on one graph from one source or many.

    Parameters
    ----------
    graph : Graph, SciPy sparse matrix or array, or NetworkX graph
        Converted once by :func:`sssp.as_graph` (NetworkX: the ``"weight"`` attribute, 1 where
        missing; node ``i`` is the ``i``-th of ``G.nodes``).
    algorithm : {"auto", "crauser", "martin", "crauser-in", "crauser-inout", "near-far", "dijkstra"}, optional
        ``"dijkstra"`` is SciPy's, the reference (CPU only); ``"near-far"`` is Δ-stepping with
        the default Δ (:func:`sssp.cpu.nearfar.default_delta`) unless ``delta`` is given.
        ``"auto"``: on the GPU, the algorithm the tuner chose for the graph's class
        (:func:`sssp.tuned.resolve_choice`; Crauser OUT when nothing is stored); on the CPU,
        the faster exact algorithm for the graph (:func:`sssp.cpu.default_algorithm`:
        near-far or SciPy's Dijkstra; for a batch on two or more cores, near-far, which runs on
        all of them). Default (None): on the CPU that same rule; on the GPU
        ``"auto"`` with ``tuned=True``, else ``"crauser"``; near-far when ``delta`` is given.
        The result's ``algorithm`` names what ran, and ``stats["config_detail"]`` (also
        ``Solver.config_detail``) why.
    variant : {"successors", "predecessors"}
        The predecessors variant exists for Crauser's and Martín's algorithms only (without an
        algorithm it picks Crauser).
    backend : {"auto", "cpu", "gpu"}
        ``"auto"`` takes the GPU when pycuda and a CUDA device are usable and the algorithm has a
        GPU version, else the CPU.
    tuned : bool
        Use the tuned launch configuration stored for this device, kernel version and the graph's
        class (the nearest stored class if this one is missing; the paper's default if nothing
        fits). GPU only.
    config : LaunchConfig, optional
        An explicit launch configuration; wins over ``tuned``.
    db : str, optional
        SQLAlchemy URL of the tuning database (default: the user's database).
    device : int
        CUDA device ordinal.
    delta : float, optional
        Bucket width of ``algorithm="near-far"`` (default: the rule in :mod:`sssp.cpu.nearfar`);
        refused for the other algorithms.
    hierarchy : {"auto", "build", "cached", "never"}
        When a tuned pick on the phast loop runs (:data:`sssp.tuned.HIERARCHY_CHOICES`): it needs
        the graph's contraction hierarchy, seconds to build on roads and meshes, minutes on
        dense stiffness matrices, kept per machine once built (``sssp hierarchy FILE`` builds
        it ahead). ``"auto"``: at once where it is kept; else the pick's fallback runs
        while a background process builds it, and the solver takes the phast loop at the first
        solve after that (``config_detail`` says which ran and why). ``"build"``: built (or
        read) now; ``"cached"``: only where kept; ``"never"``: the fallback.

    On the GPU the graph is uploaded once, at construction. On the CPU the many-source path
    keeps its worker threads until :meth:`close`.

    Raises
    ------
    InvalidArgumentError, InvalidTypeError
        A bad option, refused before anything is looked for or uploaded: the checks of
        :meth:`sssp.request.SolverRequest.build` (the validated options are ``self.request``).
    BackendUnavailableError
        ``backend="gpu"`` where no GPU is usable, or for a CPU-only algorithm.
    """

    def __init__(
        self,
        graph: GraphLike,
        *,
        algorithm: str | None = None,
        variant: str = "successors",
        backend: str = "auto",
        tuned: bool = False,
        config: LaunchConfig | None = None,
        db: str | None = None,
        device: int = 0,
        delta: float | None = None,
        hierarchy: str = "auto",
        **gpu_options: Any,
    ) -> None:
        from .tuned import check_hierarchy

        check_hierarchy(hierarchy)
        request = SolverRequest.build(
            as_graph(graph),
            algorithm=algorithm,
            variant=variant,
            backend=backend,
            tuned=tuned,
            config=config,
            db=db,
            device=device,
            delta=delta,
            gpu_options=gpu_options,
        )
        self.request = request
        graph, variant, backend, tuned = (
            request.graph,
            request.variant,
            request.backend,
            request.tuned,
        )
        config, db, device, delta = request.config, request.db, request.device, request.delta
        gpu_options = dict(request.gpu_options)
        requested = algorithm
        algorithm = request.algorithm  # "near-far" where only a Δ was given
        self.graph = graph
        self._n = graph.n
        self.variant = variant
        self.delta = delta
        # An unnamed algorithm runs on the GPU when there is one: Crauser has a GPU version.
        self.backend = self._resolve_backend(
            backend, "crauser" if algorithm in (None, "auto") else algorithm
        )
        # The CPU default may differ for a batch of sources (sssp.cpu.default_algorithm).
        self._cpu_default = self.backend == "cpu" and algorithm in (None, "auto")
        if algorithm is None:
            if self.backend == "gpu":
                algorithm = "auto" if tuned and config is None else "crauser"
            else:
                algorithm = default_cpu_algorithm(graph, variant)
        elif algorithm == "auto" and self.backend == "cpu":
            algorithm = default_cpu_algorithm(graph, variant)
        self.algorithm = algorithm
        self.config: LaunchConfig | None = None
        self.config_source: ConfigSource | None = None
        self.config_detail = ""
        self._gpu = None
        self._gpu_options: dict[str, Any] = {}
        self._waiting: Any = None  # (the phast pick, its background build): _take_waiting
        self._rows: dict[str, Any] = {}  # the CPU many-source engines, made on first use
        self._device = device
        # How each GPU of solve_many(devices=...) finds its own configuration.
        mode = (
            "explicit"
            if config is not None
            else "auto"
            if algorithm == "auto"
            else "tuned"
            if tuned
            else "default"
        )
        self._tuning = (mode, db)
        if self.backend == "gpu":
            from .gpu import device_info, make_solver

            if config is not None:
                self.config, self.config_source = config, ConfigSource.EXPLICIT
            elif algorithm == "auto" or tuned:
                from .tuned import resolve_pick

                # An explicit algorithm reads its own records, under the same rules as "auto"
                # (a phast pick's hierarchy and diameter class), with the record's Δ unless
                # the caller gave one.
                resolved = resolve_pick(
                    graph,
                    device_info(device),
                    algorithm=algorithm,
                    variant=variant,
                    db=db,
                    hierarchy=hierarchy,
                )
                pick = resolved.now
                picked, picked_delta, self.config, self.config_source, self.config_detail = (
                    pick.as_tuple()
                )
                if delta is None:
                    delta = picked_delta
                elif picked_delta is not None:
                    self.config_detail += f"; delta {delta} as given"
                algorithm = picked
                self.algorithm, self.delta = algorithm, delta
                if pick.hierarchy is not None:  # read from the cache for the phast pick
                    gpu_options = {**gpu_options, "hierarchy": pick.hierarchy}
                if resolved.waiting is not None and resolved.cache is not None:
                    from .hierarchy import BackgroundBuild

                    build = BackgroundBuild(graph, resolved.cache)
                    self._waiting = (resolved.waiting, build)
            else:
                self.config, self.config_source = LaunchConfig.default(), ConfigSource.DEFAULT
            log.info(
                "GPU launch configuration (%s): %s %s",
                self.config_source.value,
                self.config,
                self.config_detail,
            )
            if delta is not None:
                gpu_options = {**gpu_options, "delta": delta}
            self._gpu_options = {k: v for k, v in gpu_options.items() if k != "hierarchy"}
            self._gpu = make_solver(
                graph,
                algorithm=algorithm,
                variant=variant,
                config=self.config,
                config_source=self.config_source,
                device=device,
                **gpu_options,
            )
            self._gpu.config_detail = self.config_detail
        elif tuned or config is not None:
            what = "tuned=True" if config is None else "config="
            why = (
                "backend 'cpu' was asked for"
                if backend == "cpu"
                else f"algorithm {requested!r} runs on the CPU only"
                if requested in CPU_ONLY_ALGORITHMS
                else "no GPU is usable here"
            )
            # warnings.warn, not logging: the caller asked for something that will not happen,
            # and can filter it or assert it (pytest.warns) by its category.
            warn(
                f"{what} is ignored: it applies to the GPU backend only, and {why}; solving on "
                "the CPU",
                ConfigIgnoredWarning,
            )

    @staticmethod
    def _resolve_backend(backend: str, algorithm: str) -> str:
        if backend == "cpu" or algorithm in CPU_ONLY_ALGORITHMS:
            if backend == "gpu":
                # Refused before looking for a GPU: the answer would be no on any machine.
                raise BackendUnavailableError(
                    "gpu", f"algorithm {algorithm!r} runs on the CPU only", hint=""
                )
            return "cpu"
        from .gpu import is_available

        if backend == "gpu":
            if not is_available():
                from .gpu.device import driver

                driver()  # raises BackendUnavailableError with the precise reason
            return "gpu"
        return "gpu" if is_available() else "cpu"

    @overload
    def solve(self, sources: int | np.integer, **kwargs: Any) -> SSSPResult: ...
    @overload
    def solve(
        self, sources: Iterable[int], *, min_only: Literal[True], **kwargs: Any
    ) -> NearestSourceResult: ...
    @overload
    def solve(self, sources: Iterable[int], **kwargs: Any) -> MultiSourceResult: ...

    def solve(
        self, sources: Any, **kwargs: Any
    ) -> SSSPResult | MultiSourceResult | NearestSourceResult:
        """Shortest paths from one source (an :class:`SSSPResult`) or from each of a sequence
        of sources (:meth:`solve_many`).

        Parameters
        ----------
        sources : int, or sequence of int
            One node id (an ``int`` or NumPy integer), or a list, tuple, range or 1-D array of
            them.
        limit : float, optional
            Nodes farther than this are unreachable (SciPy's ``limit``, NetworkX's ``cutoff``).
        **kwargs
            With a sequence: the options of :meth:`solve_many`. On the GPU: ``profile``
            (ignored on the CPU).

        ``return_predecessors=False`` returns no tree (``pred`` is None): on the GPU the tree
        pass is skipped and only the distances reach host memory. ``timings["wall"]`` runs from
        this call until the result is assembled.

        Raises
        ------
        InvalidTypeError
            ``sources`` is not an integer (``1.7``, ``"3"`` and ``True`` are refused, never
            rounded or parsed) nor a sequence of them. A ``TypeError``.
        InvalidGraphError
            A source outside ``[0, n)``. A ``ValueError``.
        """
        t0 = time.perf_counter()
        if self._waiting is not None:
            self._take_waiting()
        gpu = self._gpu
        if gpu is not None and not kwargs and type(sources) is int and 0 <= sources < self._n:
            # The common call, a plain node id and no options, goes straight to the GPU solver:
            # the checks below cost several microseconds of a small graph's solve on a GPU host.
            return gpu.solve(sources, t0=t0)
        if not is_one_source(sources):
            return self.solve_many(sources, **kwargs)
        given = sorted(set(kwargs) & (set(_MANY_ONLY) - {"return_predecessors"}))
        if given:
            raise InvalidArgumentError(
                f"{given[0]}= applies to a sequence of sources, not to one source"
            )
        return self._solve_one(sources, t0=t0, **kwargs)

    def _solve_one(
        self,
        source: Any,
        *,
        limit: Any = None,
        return_predecessors: bool = True,
        t0: float | None = None,
        **kwargs: Any,
    ) -> SSSPResult:
        t0 = time.perf_counter() if t0 is None else t0
        self._check_open()
        source = check_source(self.graph, source)
        bound = check_limit(self.graph, limit)
        if self._gpu is not None:
            res = self._gpu.solve(
                source, return_predecessors=bool(return_predecessors), t0=t0, **kwargs
            )
        else:
            unknown = sorted(set(kwargs) - {"profile"})
            if unknown:
                raise InvalidTypeError(f"solve() got an unexpected keyword argument {unknown[0]!r}")
            from .cpu import solve_cpu

            extra = {"delta": self.delta} if self.delta is not None else {}
            res = solve_cpu(
                self.graph, source, algorithm=self.algorithm, variant=self.variant, **extra
            )
            if not return_predecessors:
                res = dataclasses.replace(res, pred=None)
        if bound is not None:
            from .many import apply_limit

            dist = np.array(res.dist)
            pred = None if res.pred is None else np.array(res.pred)
            apply_limit(dist, pred, bound)
            res = dataclasses.replace(
                res, dist=dist, pred=pred, stats={**res.stats, "limit": bound}
            )
        if res.backend == "cpu" or bound is not None:  # the GPU's own clock stopped at its result
            wall = time.perf_counter() - t0
            res = dataclasses.replace(res, timings={**res.timings, "wall": wall, "total": wall})
        return res

    @overload
    def solve_many(
        self, sources: Iterable[int], *, min_only: Literal[True], **kwargs: Any
    ) -> NearestSourceResult: ...
    @overload
    def solve_many(self, sources: Iterable[int], **kwargs: Any) -> MultiSourceResult: ...

    def solve_many(
        self,
        sources: Iterable[int],
        *,
        out: np.ndarray | None = None,
        pred_out: np.ndarray | None = None,
        return_predecessors: bool | None = None,
        min_only: bool = False,
        limit: float | None = None,
        progress: bool | None = None,
        memory_budget: int | None = None,
        devices: Sequence[int] | None = None,
        **kwargs: Any,
    ) -> MultiSourceResult | NearestSourceResult:
        """Distances from each of many sources, one row per source (SciPy's
        ``dijkstra(indices=...)``), or with ``min_only=True`` from the nearest of them.

        Parameters
        ----------
        sources : sequence of int
            A list, tuple, range or 1-D integer array, in row order; duplicates give duplicate
            rows. Each is checked as :meth:`solve` checks one source. With ``min_only=True``
            any iterable (a set).
        out : ndarray, shape (k, n), optional
            The caller's distance table, e.g. a ``numpy.memmap`` for all-pairs tables that do
            not fit in memory. Rows are written whole, chunk by chunk. int64 or float64; on
            integer graphs also int32, float32 (and float64) when every possible distance
            (``(n - 1) * max_weight``, or ``limit``) fits exactly. Unreachable nodes hold the
            dtype's largest value (``sssp.UNREACHABLE`` for int64, 2**31 - 1 for int32) or
            ``inf``.
        pred_out : ndarray, int32, shape (k, n), optional
            The same for the predecessors (implies ``return_predecessors``).
        return_predecessors : bool, optional
            Also compute a shortest-path tree per source (default False: a (k, n) tree table
            costs as much memory as the distances).
        min_only : bool
            One solve with every source as a start node: a :class:`NearestSourceResult` with
            the distance to the nearest source and which source it is (-1 where none reaches;
            SciPy writes -9999).
        limit : float, optional
            Nodes farther than this are unreachable (SciPy's ``limit``, NetworkX's ``cutoff``):
            SciPy's Dijkstra stops its search there; the other algorithms finish and drop them.
        progress : bool, optional
            A progress bar on stderr: by default only on a terminal and for batches longer than
            a second.
        memory_budget : int, optional
            Working bytes per chunk of rows (default :data:`sssp.many.MEMORY_BUDGET`, 256 MiB):
            host memory stays bounded whatever the number of sources.
        devices : sequence of int, optional
            GPU ordinals to spread the batch over (:mod:`sssp.multidevice`): the graph is
            uploaded once per device, each with the configuration tuned for that device, and
            chunks of sources go to whichever device is free; rows land in ``out`` in source
            order. Default (None): this solver's own device.
        **kwargs
            GPU options of each solve (``profile``).

        Returns
        -------
        MultiSourceResult or NearestSourceResult
            ``dist`` (k, n) in the order of ``sources`` (a read-only view of ``out`` when it
            is given), ``pred`` (k, n) int32 or None, ``iterations`` (k,), timings
            (``"wall"``; ``"gpu"`` on the GPU).

        Raises
        ------
        InvalidTypeError, InvalidArgumentError, InvalidGraphError
            Bad input (see :func:`sssp.request.build_request`), before anything is written;
            ``devices`` empty, with a device twice, out of range or not integers
            (:func:`sssp.multidevice.check_devices`), or given on the CPU backend or with
            ``min_only``.
        """
        from .many import (
            BatchedGPURows,
            LoopingGPURows,
            RunInfo,
            build_request,
            run_nearest,
            run_rows,
        )

        self._check_open()
        if self._waiting is not None:
            self._take_waiting()
        request = build_request(
            self.graph,
            sources,
            out=out,
            pred_out=pred_out,
            return_predecessors=return_predecessors,
            min_only=min_only,
            limit=limit,
        )
        if devices is not None:
            from .multidevice import solve_on_devices

            return solve_on_devices(
                self,
                request,
                devices,
                progress=progress,
                memory_budget=memory_budget,
                options=kwargs,
            )
        algorithm = self.algorithm
        if self._gpu is not None:
            engine: Any = LoopingGPURows(self._gpu, self._gpu_solver_for, self.graph, kwargs)
            if hasattr(self._gpu, "solve_rows") and not kwargs:
                engine = BatchedGPURows(self._gpu, engine)
        else:
            unknown = sorted(set(kwargs) - {"profile"})
            if unknown:
                raise InvalidTypeError(
                    f"solve_many() got an unexpected keyword argument {unknown[0]!r}"
                )
            if self._cpu_default and not request.min_only:
                from .cpu.many import available_cores

                algorithm = default_cpu_algorithm(
                    self.graph, self.variant, workers=min(request.k, available_cores())
                )
            engine = self._cpu_rows(algorithm)
        stats: dict[str, Any] = {"config_detail": self.config_detail} if self.config_detail else {}
        if self._gpu is not None:
            stats["loop"] = getattr(self._gpu, "loop", "legacy")
            if isinstance(engine, BatchedGPURows):
                stats.update(self._gpu.many_stats(request.want_pred))
        info = RunInfo(
            algorithm, self.variant, self.config, self.config_source, stats=stats or None
        )
        if request.min_only:
            return run_nearest(engine, request, info)
        return run_rows(engine, request, info, progress=progress, memory_budget=memory_budget)

    def _take_waiting(self) -> None:
        """Where a phast pick waits for its hierarchy (``hierarchy="auto"``) and the
        background build has put it in the cache: the GPU solver of the pick replaces the
        fallback's (this call pays for its upload)."""
        pick, build = self._waiting
        found = build.result()
        if found is None:
            return
        self._waiting = None
        from .gpu import make_solver

        options = dict(self._gpu_options)
        options.pop("delta", None)
        delta = pick.delta if self.request.delta is None else self.request.delta  # the caller's
        if delta is not None:
            options["delta"] = delta
        try:
            new = make_solver(
                self.graph,
                algorithm=pick.algorithm,
                variant=self.variant,
                config=pick.config,
                config_source=pick.source,
                device=self._device,
                hierarchy=found,
                **options,
            )
        except SSSPError as err:  # the fallback answers on; a better solver is no requirement
            log.warning("the phast pick could not be taken; the fallback stays: %s", err)
            self.config_detail += f"; the phast pick could not be taken ({err})"
            if self._gpu is not None:
                self._gpu.config_detail = self.config_detail
            return
        old, self._gpu = self._gpu, new
        self.algorithm, self.delta, self.config = pick.algorithm, delta, pick.config
        self.config_detail = pick.detail + "; its contraction hierarchy built in the background"
        new.config_detail = self.config_detail
        self._gpu_options = options
        log.info("phast pick taken: %s %s", self.config, self.config_detail)
        if old is not None:
            old.close()

    def _cpu_rows(self, algorithm: str) -> Any:
        if algorithm not in self._rows:
            from .cpu.many import CPURows

            self._rows[algorithm] = CPURows(
                self.graph, algorithm=algorithm, variant=self.variant, delta=self.delta
            )
        return self._rows[algorithm]

    def _gpu_solver_for(self, graph: Graph) -> Any:
        """A GPU solver like this one's for another graph (min_only's super-source graph)."""
        from .gpu import make_solver

        return make_solver(
            graph,
            algorithm=self.algorithm,
            variant=self.variant,
            config=self.config,
            config_source=self.config_source,
            device=self._device,
            **self._gpu_options,
        )

    def _check_open(self) -> None:
        """A GPU solver that was closed refuses to solve (it would otherwise fall through to
        the CPU path, silently, with another backend's timings)."""
        if self.backend == "gpu" and self._gpu is None:
            raise SolverError("this GPU solver is closed: make a new one")

    def close(self) -> None:
        if self._gpu is not None:
            self._gpu.close()
            self._gpu = None
        for engine in self._rows.values():
            engine.close()
        self._rows.clear()

    def __enter__(self) -> Solver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def default_cpu_algorithm(graph: Graph, variant: str = "successors", *, workers: int = 1) -> str:
    """The CPU default (:func:`sssp.cpu.default_algorithm`), imported when first needed."""
    from .cpu import default_algorithm

    return default_algorithm(graph, variant, workers=workers)


@overload
def solve(graph: GraphLike, sources: int | np.integer, **options: Any) -> SSSPResult: ...
@overload
def solve(
    graph: GraphLike, sources: Iterable[int], *, min_only: Literal[True], **options: Any
) -> NearestSourceResult: ...
@overload
def solve(graph: GraphLike, sources: Iterable[int], **options: Any) -> MultiSourceResult: ...


def solve(
    graph: GraphLike,
    sources: Any,
    *,
    algorithm: str | None = None,
    variant: str = "successors",
    backend: str = "auto",
    tuned: bool = False,
    config: LaunchConfig | None = None,
    db: str | None = None,
    device: int = 0,
    delta: float | None = None,
    hierarchy: str = "auto",
    **kwargs: Any,
) -> SSSPResult | MultiSourceResult | NearestSourceResult:
    """Shortest paths from one source or many: ``Solver(graph, ...).solve(sources, ...)``.

    The keyword parameters are :class:`Solver`'s, with its defaults (so ``tuned=True`` runs
    the class's tuned pick of algorithm); ``**kwargs`` go to :meth:`Solver.solve` (``limit``)
    and, for a sequence of sources, :meth:`Solver.solve_many` (``out``, ``min_only``, ...).

    On the GPU the solver is kept for the next call on the same graph object with the same
    options (compiled modules, the tuned look-up and the upload are reused; a tuning database
    written since is looked up again): :func:`clear_solver_cache` releases it. So a tuned pick
    on the phast loop whose hierarchy a background process builds (``hierarchy="auto"``) is
    taken by the first call after the build ends.

    Returns
    -------
    SSSPResult
        For one source: ``dist`` (int64 with :data:`sssp.UNREACHABLE` for unreachable nodes
        on integer graphs, float64 with ``inf`` on real-weighted ones; ``dist_float`` is always
        float64 with ``inf``), ``pred`` (int32, -1 for the source and unreached nodes),
        iterations, timings, and on the GPU the launch configuration that ran and where it
        came from.
    MultiSourceResult
        For a sequence of sources: the same per row, ``dist`` (k, n) in the order given.
    NearestSourceResult
        With ``min_only=True``: distances from the nearest source and which source it is.
    """
    options = {
        "algorithm": algorithm,
        "variant": variant,
        "backend": backend,
        "tuned": tuned,
        "config": config,
        "db": db,
        "device": device,
        "delta": delta,
        "hierarchy": hierarchy,
    }
    with _SOLVERS.lease(graph, options) as solver:
        return solver.solve(sources, **kwargs)


class _SolverCache:
    """The GPU solvers of recent one-shot calls, so that ``solve(g, s)`` on a graph solved
    before in this process pays neither the module load, the tuned look-up nor the upload again.

    An entry is keyed by the graph object and every option of the call, and with ``tuned=True``
    also by the state of the tuning database, so a database written since (a ``tune`` run) gives
    a new look-up. Tuned solvers of databases without a cheap state (PostgreSQL) are not kept.
    A kept solver holds its graph: at most :attr:`size` are kept, least recently used out
    first, and :func:`clear_solver_cache` releases them all.
    """

    size = 4

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, tuple[Graph, object, Solver, threading.Lock]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    @staticmethod
    def _key(graph: Graph, options: dict[str, Any]) -> tuple | None:
        try:
            key = (id(graph), *sorted(options.items()))
            hash(key)
        except TypeError:  # an unhashable option value: nothing to key on
            return None
        return key

    @contextlib.contextmanager
    def lease(self, graph: Graph, options: dict[str, Any]):
        """A solver for ``graph`` and ``options``, kept for the next call where it runs on the
        GPU; used by one thread at a time (another call with the same key waits)."""
        key = self._key(graph, options) if isinstance(graph, Graph) else None
        state = None
        if key is not None and options.get("tuned"):
            from .tuned import state as db_state

            state = db_state(options.get("db"))
            if state is None:
                key = None
        entry = None
        if key is not None:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None and (entry[0] is not graph or entry[1] != state):
                    self._drop(key)
                    entry = None
                if entry is not None:
                    self._entries.move_to_end(key)
        if entry is None:
            solver = Solver(graph, **options)
            if key is None or solver.backend != "gpu":  # nothing on the CPU is worth keeping
                with solver:
                    yield solver
                return
            entry = (graph, state, solver, threading.Lock())
            with self._lock:
                if key in self._entries:
                    self._drop(key)
                self._entries[key] = entry
                while len(self._entries) > self.size:
                    self._drop(next(iter(self._entries)))
        with entry[3]:
            if entry[2]._gpu is not None:
                yield entry[2]
                return
        # Evicted by another thread between the look-up and now: a solver of this call's own.
        with Solver(graph, **options) as solver:
            yield solver

    def _drop(self, key: tuple) -> None:
        _, _, solver, busy = self._entries.pop(key)
        with busy:  # a solve in another thread finishes first
            solver.close()

    def clear(self) -> None:
        with self._lock:
            while self._entries:
                self._drop(next(iter(self._entries)))

    def __len__(self) -> int:
        return len(self._entries)


_SOLVERS = _SolverCache()


def clear_solver_cache() -> None:
    """Release the GPU solvers (device memory, uploaded graphs) kept by one-shot :func:`solve`
    calls."""
    _SOLVERS.clear()
