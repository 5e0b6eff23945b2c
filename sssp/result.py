"""The one result type every solver returns."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from .config import ConfigSource, LaunchConfig
from .errors import InvalidArgumentError, InvalidTypeError

UNREACHABLE: int = int(np.iinfo(np.int64).max)
"""Distance of a node that cannot be reached from the source on a graph with integer weights
(``dist[v] == UNREACHABLE``, ``2**63 - 1``); real-weighted graphs use ``inf``, and
:attr:`SSSPResult.dist_float` uses ``inf`` for both.

.. warning::
   ``UNREACHABLE`` is the largest int64, so arithmetic on raw integer distances overflows
   silently: ``r.dist + 1`` is ``-2**63`` (negative) at every unreachable node, and
   ``r.dist.sum()`` or ``r.dist[u] + w`` wrap the same way. Mask first (``r.dist[r.reached]``)
   or use ``r.dist_float`` (float64 with ``inf``, SciPy's and NetworkX's convention, where
   ``inf + 1`` stays ``inf``; exact up to 2**53)."""
_DIST_DTYPES = (np.dtype(np.int64), np.dtype(np.float64))
_PRED_DTYPE = np.dtype(np.int32)

ALGORITHMS = ("dijkstra", "martin", "crauser", "crauser-in", "crauser-inout", "near-far")
"""``crauser``: the OUT criterion; ``crauser-in``: the IN criterion; ``crauser-inout``: both;
``near-far``: Δ-stepping with Davidson et al.'s near-far piles."""
CPU_ONLY_ALGORITHMS = ("dijkstra",)
"""Algorithms without a GPU version: SciPy's Dijkstra (the reference)."""
GPU_ALGORITHMS = tuple(a for a in ALGORITHMS if a not in CPU_ONLY_ALGORITHMS)
"""What the GPU engine accepts."""
PHASED_ALGORITHMS = tuple(a for a in GPU_ALGORITHMS if a != "near-far")
"""The phase-synchronous algorithms (Crauser's criteria, Martín's): what the paper's loop, the
per-kernel tuner and the paper benchmarks accept. Near-far runs on engine 2's persistent loop."""
VARIANTS = ("successors", "predecessors")


class LazyStats(Mapping[str, Any]):
    """A result's statistics, read-only, computed from the solver's counters on first access.

    Building the statistics of a GPU solve (a dozen counters decoded into a dict) costs more host
    time than some solves take on the device, and most callers never read them, so the solver
    hands over a function of a copy of its counters instead; ``dict(r.stats)``, ``r.stats[k]``
    and ``len(r.stats)`` all see the same mapping.
    """

    __slots__ = ("_make", "_data")

    def __init__(self, make: Callable[[], Mapping[str, Any]]) -> None:
        self._make: Callable[[], Mapping[str, Any]] | None = make
        self._data: Mapping[str, Any] | None = None

    def _mapping(self) -> Mapping[str, Any]:
        if self._data is None:
            assert self._make is not None
            self._data = MappingProxyType(dict(self._make()))
            self._make = None
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())

    def __repr__(self) -> str:
        return repr(dict(self._mapping()))

    def __reduce__(self) -> tuple:
        return (dict, (dict(self._mapping()),))


def _frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only mapping of ``value`` (a :class:`LazyStats` stays lazy: it is read-only)."""
    return value if isinstance(value, LazyStats) else MappingProxyType(dict(value))


def completed(result: Any, **fields: Any) -> None:
    """Set ``fields`` of a result that a solver built (:meth:`SSSPResult.assembled`) while its
    device worked and that is known only after the wait (``iterations``, ``stats``): for that
    solver alone, before the result is returned (a returned result is frozen)."""
    if "stats" in fields:
        fields["stats"] = _frozen_mapping(fields["stats"])
    result.__dict__.update(fields)


def _rebuilt(cls: type, values: dict[str, Any]) -> Any:
    return cls(**values)


class _FrozenResult:
    """What the result classes share. They are frozen dataclasses of arrays and read-only
    mappings, and:

    - pickle through their constructor: the mappings travel as dicts (a ``mappingproxy`` does
      not pickle), and the constructor's checks and read-only views apply to what is unpickled;
    - compare by identity (``eq=False``): the dataclass's field-wise ``==`` raised NumPy's
      "truth value of an array is ambiguous" on two results, and two solves differ in their
      timings anyway; compare ``dist`` and ``pred`` with ``numpy.array_equal``."""

    def __reduce__(self) -> tuple:
        values = {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]
        for name, value in values.items():
            if isinstance(value, Mapping):
                values[name] = dict(value)
        return (_rebuilt, (type(self), values))


@dataclass(frozen=True, eq=False)
class SSSPResult(_FrozenResult):
    """Distances and shortest-path tree from one source.

    Attributes
    ----------
    dist : ndarray, int64 or float64, shape (n,)
        δ(v). On graphs with integer weights: int64, exact, :data:`UNREACHABLE` (``2**63 - 1``)
        for nodes that cannot be reached. On graphs with real weights: float64, ``inf`` for
        those nodes. :attr:`dist_float` gives float64 with ``inf`` whatever the graph.
        **Do not compute on integer** ``dist`` **unmasked**: ``dist + 1`` overflows to a
        negative number at unreachable nodes; use ``dist[reached]`` or :attr:`dist_float`.
    pred : ndarray, int32, shape (n,), or None
        A predecessor on a shortest path; -1 for the source and unreached nodes. None when the
        solve was asked for no tree (``return_predecessors=False``: on the GPU that skips the
        tree pass and half of the result's bytes).
    source : int
    algorithm : {"dijkstra", "martin", "crauser", "crauser-in", "crauser-inout", "near-far"}
    variant : {"successors", "predecessors"}
    backend : {"cpu", "gpu"}
    iterations : int
        Outer-loop steps (phases) of Martín/Crauser; near-far's relax steps (its threshold
        raises are ``stats["buckets"]``); for Dijkstra, the number of settled nodes.
    timings : mapping of str to float
        Seconds. ``"wall"``, the headline: from the call until the result was assembled, what
        the caller waits for; ``"total"`` is the same number. The GPU adds ``"gpu"``, CUDA-event
        time from the first command of the solve until the result was in host memory, and
        engine 2 ``"loop"`` (until its phase loop ended), ``"host_before"`` (from the call until
        the first command was queued) and ``"host_after"`` (from the end of the device's work
        until the result was assembled); the paper's loop adds ``"relax"``,
        ``"min"``, ``"update"`` and ``"tree"`` (CUDA-event times summed over iterations) when
        profiling is on.
    config : LaunchConfig or None
        The GPU kernels' configuration that ran (None on CPU backends).
    config_source : ConfigSource or None
        Why that configuration: explicit, tuned-exact, tuned-nearest or default.
    stats : mapping
        Extra measurements, e.g. ``"relax_active_share"`` (share of relax threads that had work,
        the paper's divergence statistic) and the L1 attributes read back from the driver.
    """

    dist: np.ndarray
    pred: np.ndarray | None
    source: int
    algorithm: str
    variant: str
    backend: str
    iterations: int
    timings: Mapping[str, float] = field(default_factory=dict)
    config: LaunchConfig | None = None
    config_source: ConfigSource | None = None
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # (dtype against dtype and setflags: a GPU solve of a small graph builds its result in
        # microseconds, and comparing a dtype with a scalar type costs several times as much)
        if self.dist.dtype not in _DIST_DTYPES:
            raise InvalidTypeError(f"dist must be int64 or float64, got {self.dist.dtype}")
        if self.pred is not None:
            if self.pred.dtype != _PRED_DTYPE:
                raise InvalidTypeError(f"pred must be int32, got {self.pred.dtype}")
            if self.dist.shape != self.pred.shape:
                raise InvalidArgumentError(
                    f"dist and pred shapes differ: {self.dist.shape} vs {self.pred.shape}"
                )
            self.pred.setflags(write=False)
        self.dist.setflags(write=False)
        object.__setattr__(self, "timings", MappingProxyType(dict(self.timings)))
        object.__setattr__(self, "stats", _frozen_mapping(self.stats))

    @classmethod
    def assembled(
        cls, *, dist: np.ndarray, pred: np.ndarray | None, timings: dict[str, float], **fields: Any
    ) -> SSSPResult:
        """A result built by a solver from arrays it made itself (the right dtypes and shapes),
        without the constructor's checks: on the GPU host the frozen dataclass's ``__init__``
        with its checks was several microseconds of a small graph's solve. ``timings`` is
        wrapped, not copied, so that the solver can still stop its wall clock after this call;
        a plain dict of ``stats`` is copied and frozen, a :class:`LazyStats` kept."""
        dist.setflags(write=False)
        if pred is not None:
            pred.setflags(write=False)
        stats = _frozen_mapping(fields.pop("stats", {}))
        self = object.__new__(cls)
        self.__dict__.update(
            {"config": None, "config_source": None},
            dist=dist,
            pred=pred,
            timings=MappingProxyType(timings),
            stats=stats,
            **fields,
        )
        return self

    @property
    def is_float(self) -> bool:
        """True when the distances are real-valued (float64, ``inf`` for unreachable nodes)."""
        return self.dist.dtype == np.float64

    @property
    def reached(self) -> np.ndarray:
        """Boolean mask of reachable nodes."""
        return np.isfinite(self.dist) if self.is_float else self.dist != UNREACHABLE

    @property
    def dist_float(self) -> np.ndarray:
        """Distances as float64 with ``inf`` for unreachable nodes, the SciPy/NetworkX convention,
        whatever the graph's weight type.

        Returns
        -------
        ndarray, float64, shape (n,)
            Read-only. On integer graphs a new array: distances above 2**53 are rounded to the
            nearest float64 (``dist`` keeps them exact).
        """
        return _as_float64(self.dist, UNREACHABLE)

    def path_to(self, target: int) -> list[int]:
        """Node sequence source → target along the predecessor tree; [] if unreachable.

        Raises
        ------
        InvalidTypeError
            ``target`` is not an integer (``1.5``, ``"3"``, ``True``).
        InvalidArgumentError
            ``target`` is outside ``[0, n)`` (a negative index would count from the end).
        """
        if isinstance(target, bool) or not isinstance(target, int | np.integer):
            raise InvalidTypeError(f"target must be an integer node index, got {target!r}")
        n = self.dist.size
        if not 0 <= target < n:
            raise InvalidArgumentError(f"target {int(target)} is out of range [0, {n})")
        if self.pred is None:
            raise InvalidArgumentError(
                "this result has no predecessor tree: solve with return_predecessors=True"
            )
        return _walk(self.pred, self.reached, int(target), lambda v: v == self.source)


DIST_DTYPES = (np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.float64), np.dtype(np.float32))
"""Distance dtypes a many-source result may hold: the solvers' int64 and float64, and the
narrower int32 and float32 a caller may ask for with ``out=`` (integer graphs only)."""


def unreachable_value(dtype: np.dtype) -> int | float:
    """The sentinel of an unreachable node in a distance array of ``dtype``: the dtype's
    largest value for integers (:data:`UNREACHABLE` for int64), ``inf`` for floats."""
    dtype = np.dtype(dtype)
    return float("inf") if dtype.kind == "f" else int(np.iinfo(dtype).max)


def native_distances(fdist: np.ndarray, is_float: bool) -> np.ndarray:
    """SciPy's float64 distances (``inf`` where unreachable) in the solvers' convention: float64
    on float graphs, else int64 with :data:`UNREACHABLE` (exact where the caller checked that
    ``max_weight * n`` stays below 2**53). Any shape: one row or a table of rows."""
    if is_float:
        return np.asarray(fdist, dtype=np.float64)
    dist = np.full(np.shape(fdist), UNREACHABLE, dtype=np.int64)
    reached = np.isfinite(fdist)
    dist[reached] = fdist[reached].astype(np.int64)
    return dist


def _frozen_view(a: np.ndarray) -> np.ndarray:
    """A read-only view: the result never writes through it, and a caller's ``out=`` array
    itself stays writable."""
    v = a.view()
    v.flags.writeable = False
    return v


def _check_tree_shape(pred: np.ndarray | None, shape: tuple[int, ...]) -> None:
    if pred is None:
        return
    if not isinstance(pred, np.ndarray) or pred.dtype != np.int32 or pred.shape != shape:
        got = f"{pred.dtype} {pred.shape}" if isinstance(pred, np.ndarray) else type(pred).__name__
        raise InvalidTypeError(f"pred must be int32 of shape {shape} or None, got {got}")


@dataclass(frozen=True, eq=False)
class MultiSourceResult(_FrozenResult):
    """Distances (and, when asked for, shortest-path trees) from many sources: one row per
    source, in the order the sources were given (duplicates kept), as
    ``scipy.sparse.csgraph.dijkstra(indices=...)`` returns them.

    Attributes
    ----------
    sources : ndarray, int64, shape (k,)
        The source of each row.
    dist : ndarray, shape (k, n)
        ``dist[i, v]`` = δ(sources[i], v). int64 on integer graphs and float64 on real ones,
        or the dtype of the caller's ``out=`` array (int32, float32 and float64 on integer
        graphs), whose memory it then shares (a read-only view of it). Unreachable nodes hold
        :attr:`unreachable`: the dtype's largest integer (:data:`UNREACHABLE` for int64), or
        ``inf``; :attr:`dist_float` gives SciPy's float64 with ``inf``.
    pred : ndarray, int32, shape (k, n), or None
        Row ``i`` is a shortest-path tree from ``sources[i]``, -1 for the source and
        unreachable nodes; None unless predecessors were asked for.
    iterations : ndarray, int64, shape (k,)
        Each solve's outer-loop steps, as :attr:`SSSPResult.iterations` counts them.
    algorithm, variant, backend : str
        What ran (as in :class:`SSSPResult`).
    timings : mapping of str to float
        Seconds: ``"wall"`` for the whole batch; on the GPU also ``"gpu"``, the device time
        summed over the solves.
    config, config_source
        The GPU launch configuration and where it came from (None on the CPU).
    stats : mapping
        How the batch ran: ``"chunk_rows"`` (rows per chunk), ``"chunks"``, ``"workers"``
        (solves run at once), ``"limit"``.
    """

    sources: np.ndarray
    dist: np.ndarray
    pred: np.ndarray | None
    iterations: np.ndarray
    algorithm: str
    variant: str
    backend: str
    timings: Mapping[str, float] = field(default_factory=dict)
    config: LaunchConfig | None = None
    config_source: ConfigSource | None = None
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (
            not isinstance(self.dist, np.ndarray)
            or self.dist.dtype not in DIST_DTYPES
            or self.dist.ndim != 2
        ):
            got = (
                f"{self.dist.dtype} of shape {self.dist.shape}"
                if isinstance(self.dist, np.ndarray)
                else type(self.dist).__name__
            )
            raise InvalidTypeError(
                f"dist must be a 2-D int64, int32, float64 or float32 array, got {got}"
            )
        k = self.dist.shape[0]
        if self.sources.dtype != np.int64 or self.sources.shape != (k,):
            raise InvalidTypeError(
                f"sources must be int64 of shape ({k},), got {self.sources.dtype} {self.sources.shape}"
            )
        if self.iterations.shape != (k,):
            raise InvalidArgumentError(
                f"iterations must have shape ({k},), got {self.iterations.shape}"
            )
        _check_tree_shape(self.pred, self.dist.shape)
        for name in ("sources", "dist", "pred", "iterations"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _frozen_view(value))
        object.__setattr__(self, "timings", MappingProxyType(dict(self.timings)))
        object.__setattr__(self, "stats", _frozen_mapping(self.stats))

    @property
    def k(self) -> int:
        """Number of rows (sources, duplicates counted)."""
        return self.dist.shape[0]

    @property
    def n(self) -> int:
        """Number of nodes."""
        return self.dist.shape[1]

    @property
    def is_float(self) -> bool:
        """True when :attr:`dist` is a floating dtype (``inf`` marks unreachable nodes)."""
        return self.dist.dtype.kind == "f"

    @property
    def unreachable(self) -> int | float:
        """The value :attr:`dist` holds for unreachable nodes (see :func:`unreachable_value`)."""
        return unreachable_value(self.dist.dtype)

    @property
    def reached(self) -> np.ndarray:
        """Boolean mask, shape (k, n), of the nodes each source reaches."""
        return np.isfinite(self.dist) if self.is_float else self.dist != self.unreachable

    @property
    def dist_float(self) -> np.ndarray:
        """Distances as float64 with ``inf`` for unreachable nodes (SciPy's convention).

        Returns
        -------
        ndarray, float64, shape (k, n)
            Read-only: :attr:`dist` itself when it is float64, else a new array (k x n x 8
            bytes: for tables streamed into a memory map, convert row blocks instead).
        """
        return _as_float64(self.dist, None if self.is_float else self.unreachable)

    def path_to(self, row: int, target: int) -> list[int]:
        """Node sequence ``sources[row]`` → ``target`` along row ``row``'s tree; [] if
        unreachable.

        Raises
        ------
        InvalidArgumentError
            The result holds no predecessors (solve with ``return_predecessors=True``).
        """
        if self.pred is None:
            raise InvalidArgumentError(
                "this result has no predecessors: solve with return_predecessors=True"
            )
        d = self.dist[row]
        reached = np.isfinite(d) if self.is_float else d != self.unreachable
        source = int(self.sources[row])
        return _walk(self.pred[row], reached, target, lambda v: v == source)


@dataclass(frozen=True, eq=False)
class NearestSourceResult(_FrozenResult):
    """Distances from the nearest of several sources: one solve with many start nodes
    (``min_only=True``, as in SciPy's ``dijkstra(min_only=True)`` and NetworkX's
    ``multi_source_dijkstra``).

    Attributes
    ----------
    sources : ndarray, int64, shape (k,)
        The start nodes as given.
    dist : ndarray, int64 or float64, shape (n,)
        min over the sources s of δ(s, v); :data:`UNREACHABLE` (integer graphs) or ``inf``
        where no source reaches ``v``.
    nearest : ndarray, int32, shape (n,)
        The source at that distance (one of them on ties; a source is its own nearest); -1
        where no source reaches ``v`` (SciPy writes -9999).
    pred : ndarray, int32, shape (n,), or None
        A shortest-path forest rooted at the sources, -1 for the sources and unreachable
        nodes; None unless predecessors were asked for.
    iterations : int
        Outer-loop steps of the one solve.
    algorithm, variant, backend, timings, config, config_source, stats
        As in :class:`MultiSourceResult` (``timings["wall"]``; on the GPU also ``"gpu"``).
    """

    sources: np.ndarray
    dist: np.ndarray
    nearest: np.ndarray
    pred: np.ndarray | None
    iterations: int
    algorithm: str
    variant: str
    backend: str
    timings: Mapping[str, float] = field(default_factory=dict)
    config: LaunchConfig | None = None
    config_source: ConfigSource | None = None
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.dist.dtype not in (np.int64, np.float64) or self.dist.ndim != 1:
            raise InvalidTypeError(
                f"dist must be 1-D int64 or float64, got {self.dist.dtype} {self.dist.shape}"
            )
        if self.nearest.dtype != np.int32 or self.nearest.shape != self.dist.shape:
            raise InvalidTypeError(
                f"nearest must be int32 of shape {self.dist.shape}, got "
                f"{self.nearest.dtype} {self.nearest.shape}"
            )
        if self.sources.dtype != np.int64 or self.sources.ndim != 1:
            raise InvalidTypeError(
                f"sources must be 1-D int64, got {self.sources.dtype} {self.sources.shape}"
            )
        _check_tree_shape(self.pred, self.dist.shape)
        for name in ("sources", "dist", "nearest", "pred"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _frozen_view(value))
        object.__setattr__(self, "timings", MappingProxyType(dict(self.timings)))
        object.__setattr__(self, "stats", _frozen_mapping(self.stats))

    @property
    def is_float(self) -> bool:
        return self.dist.dtype == np.float64

    @property
    def reached(self) -> np.ndarray:
        """Boolean mask of the nodes some source reaches."""
        return self.nearest >= 0

    @property
    def dist_float(self) -> np.ndarray:
        """Distances as float64 with ``inf`` for unreachable nodes (SciPy's convention)."""
        return _as_float64(self.dist, UNREACHABLE)

    def path_to(self, target: int) -> list[int]:
        """Node sequence from ``nearest[target]`` to ``target``; [] if unreachable.

        Raises
        ------
        InvalidArgumentError
            The result holds no predecessors (solve with ``return_predecessors=True``).
        """
        if self.pred is None:
            raise InvalidArgumentError(
                "this result has no predecessors: solve with return_predecessors=True"
            )
        root = self.nearest[target]
        return _walk(self.pred, self.reached, target, lambda v: v == root)


def _as_float64(dist: np.ndarray, unreachable: int | float | None) -> np.ndarray:
    """``dist`` as read-only float64 with ``inf`` where it holds ``unreachable`` (None: the
    distances are real, their ``inf`` kept): ``dist`` itself when it is float64 already."""
    if dist.dtype == np.float64:
        return dist
    out = dist.astype(np.float64)
    if unreachable is not None:
        out[dist == unreachable] = np.inf
    out.flags.writeable = False
    return out


def _walk(pred: np.ndarray, reached: np.ndarray, target: int, is_root: Any) -> list[int]:
    if not reached[target]:
        return []
    path = [int(target)]
    while not is_root(path[-1]):
        p = int(pred[path[-1]])
        if p < 0 or len(path) > pred.size:
            raise InvalidArgumentError(f"predecessor tree is broken at node {path[-1]}")
        path.append(p)
    return path[::-1]
