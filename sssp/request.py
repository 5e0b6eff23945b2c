"""The one validation entry of a solve: every argument a user passes is checked here, once.

As SciPy's ``csgraph`` checks its input in ``validate_graph`` before any routine runs, the front
door (:class:`sssp.Solver`, :func:`sssp.solve`, and through them the ``csgraph`` and NetworkX
adapters) turns the user's arguments into frozen requests:

- :class:`SolverRequest`: the graph and the solver's options (algorithm, variant, backend,
  tuned, config, db, device, delta), built once per :class:`~sssp.Solver`;
- :class:`ManyRequest`: the sources and where the rows go (``out``, ``pred_out``, ``limit``,
  ``return_predecessors``, ``min_only``), built once per many-source call.

The inner layers (the CPU solvers' loops, the GPU engines) trust what these hold and only
``assert`` their own invariants. The public CPU functions (:func:`sssp.cpu.solve_cpu`, ...) are
entry points too and call the same checks, so a condition is refused with the same error class
and the same words whichever door it came through.

Every error is an :class:`~sssp.errors.SSSPError`: a value outside its domain is an
:class:`~sssp.errors.InvalidArgumentError` (a ``ValueError``), a value of the wrong type an
:class:`~sssp.errors.InvalidTypeError` (a ``TypeError``), a node id outside the graph an
:class:`~sssp.errors.InvalidGraphError` (a ``ValueError``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .config import LaunchConfig
from .errors import InvalidArgumentError, InvalidGraphError, InvalidTypeError
from .graph import Graph
from .result import ALGORITHMS, UNREACHABLE, VARIANTS

BACKENDS = ("auto", "cpu", "gpu")
SUCCESSORS_ONLY = ("dijkstra", "near-far")
"""Algorithms without a predecessors variant."""

_FLOAT64_EXACT = 2**53
_FLOAT32_EXACT = 2**24


# -- the solver's options -------------------------------------------------------------------------
def check_algorithm(algorithm: object, *, auto: bool = False) -> str:
    """An algorithm name of :data:`sssp.result.ALGORITHMS` (and ``"auto"`` where ``auto``).

    Raises
    ------
    InvalidArgumentError
        Any other value.
    """
    allowed = ("auto", *ALGORITHMS) if auto else ALGORITHMS
    if not isinstance(algorithm, str) or algorithm not in allowed:
        raise InvalidArgumentError(
            f"unknown algorithm {algorithm!r}: expected one of {', '.join(allowed)}"
        )
    return algorithm


def check_variant(variant: object, algorithm: str | None = None) -> str:
    """A variant of :data:`sssp.result.VARIANTS` that ``algorithm`` has (``"dijkstra"`` and
    ``"near-far"`` have the successors variant only; None or ``"auto"`` take either).

    Raises
    ------
    InvalidArgumentError
        An unknown variant, or one the algorithm does not have.
    """
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise InvalidArgumentError(
            f"unknown variant {variant!r}: expected one of {', '.join(VARIANTS)}"
        )
    if algorithm in SUCCESSORS_ONLY and variant != "successors":
        raise InvalidArgumentError(
            f"algorithm {algorithm!r} has no variant {variant!r}: use 'successors'"
        )
    return variant


def check_backend(backend: object) -> str:
    """One of :data:`BACKENDS`.

    Raises
    ------
    InvalidArgumentError
        Any other value.
    """
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise InvalidArgumentError(
            f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}"
        )
    return backend


def check_config(config: object) -> LaunchConfig | None:
    """None or a :class:`~sssp.config.LaunchConfig`.

    Raises
    ------
    InvalidTypeError
        Anything else.
    """
    if config is not None and not isinstance(config, LaunchConfig):
        raise InvalidTypeError(f"config must be a LaunchConfig, got {type(config).__name__}")
    return config


def check_delta(delta: object) -> int | float:
    """A user's near-far Δ: a positive real number (``inf`` allowed: one bucket, Bellman-Ford).

    Raises
    ------
    InvalidTypeError
        Not a number (bool included).
    InvalidArgumentError
        Zero, negative or NaN.
    """
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise InvalidTypeError(f"delta must be a positive number, got {delta!r}")
    if isinstance(delta, numbers.Integral):
        value: int | float = int(delta)  # exact, however large
    else:
        value = float(delta)
    if math.isnan(value) or not value > 0:
        raise InvalidArgumentError(f"delta must be a positive number, got {delta!r}")
    return value


def check_delta_for(algorithm: str | None, delta: object) -> int | float | None:
    """``delta`` checked by :func:`check_delta` where given, and only for near-far (None, an
    unnamed algorithm, means near-far: a Δ names it).

    Raises
    ------
    InvalidArgumentError
        ``delta`` with another algorithm, or a bad Δ (see :func:`check_delta`).
    """
    if delta is None:
        return None
    if algorithm not in (None, "near-far"):
        raise InvalidArgumentError(f"delta applies to algorithm 'near-far' only, not {algorithm!r}")
    return check_delta(delta)


def check_device(device: object) -> int:
    """A CUDA device ordinal: a non-negative integer.

    Raises
    ------
    InvalidTypeError
        Not an integer (bool included).
    InvalidArgumentError
        Negative.
    """
    if isinstance(device, bool | np.bool_) or not isinstance(device, int | np.integer):
        raise InvalidTypeError(f"device must be a CUDA device ordinal (an integer), got {device!r}")
    if int(device) < 0:
        raise InvalidArgumentError(f"device must be a CUDA device ordinal >= 0, got {device!r}")
    return int(device)


@dataclass(frozen=True)
class SolverRequest:
    """A :class:`~sssp.Solver`'s validated options, built once by :meth:`build`.

    Attributes
    ----------
    graph : Graph
    algorithm : str or None
        As asked: None (the backend's default rule), ``"auto"`` or a name of
        :data:`sssp.result.ALGORITHMS`. None with a ``delta`` is ``"near-far"``.
    variant, backend : str
    tuned : bool
    config : LaunchConfig or None
    db : str or None
    device : int
    delta : int, float or None
        Checked by :func:`check_delta` (as given: rounding to the graph is the solver's).
    gpu_options : Mapping
        The GPU engine's own options (``sync_every``, ``host_mapped``, ...), passed through.
    """

    graph: Graph
    algorithm: str | None = None
    variant: str = "successors"
    backend: str = "auto"
    tuned: bool = False
    config: LaunchConfig | None = None
    db: str | None = None
    device: int = 0
    delta: int | float | None = None
    gpu_options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        graph: Graph,
        *,
        algorithm: object = None,
        variant: object = "successors",
        backend: object = "auto",
        tuned: object = False,
        config: object = None,
        db: object = None,
        device: object = 0,
        delta: object = None,
        gpu_options: Mapping[str, Any] | None = None,
    ) -> SolverRequest:
        """Check every option (the graph is already a :class:`Graph`: :func:`sssp.as_graph`).

        Raises
        ------
        InvalidArgumentError
            An unknown algorithm, variant or backend; a variant the algorithm does not have;
            ``delta`` for another algorithm than near-far, or not positive;
            ``algorithm="auto"`` with ``config=``; a negative device.
        InvalidTypeError
            ``config`` that is not a :class:`~sssp.config.LaunchConfig`, ``tuned`` that is
            not a bool, ``db`` that is not a string, ``delta`` or ``device`` that is not a
            number.
        """
        if algorithm is not None:
            algorithm = check_algorithm(algorithm, auto=True)
        delta_value = check_delta_for(algorithm, delta)
        if algorithm is None and delta_value is not None:
            algorithm = "near-far"  # a Δ names near-far
        variant = check_variant(variant, algorithm)
        backend = check_backend(backend)
        if not isinstance(tuned, bool | np.bool_):
            raise InvalidTypeError(f"tuned must be True or False, got {tuned!r}")
        launch = check_config(config)
        if algorithm == "auto" and launch is not None:
            raise InvalidArgumentError(
                "algorithm 'auto' picks its own configuration: pass an algorithm with config="
            )
        if db is not None and not isinstance(db, str):
            raise InvalidTypeError(f"db must be a SQLAlchemy URL (a string), got {db!r}")
        return cls(
            graph,
            algorithm,
            variant,
            backend,
            bool(tuned),
            launch,
            db,
            check_device(device),
            delta_value,
            dict(gpu_options or {}),
        )


# -- one source -----------------------------------------------------------------------------------
def not_a_node_id(value: object) -> InvalidTypeError:
    """The error for a source that is not an integer node id (one wording everywhere)."""
    return InvalidTypeError(f"source {value!r} is not an integer node id")


def out_of_range(source: int, n: int) -> InvalidGraphError:
    """The error for a source outside ``[0, n)`` (one wording everywhere)."""
    return InvalidGraphError(f"source {source} is out of range [0, {n})")


def check_source(graph: Graph, source: object) -> int:
    """A source node id as a Python int: an integer (a NumPy integer, a 0-d integer array) in
    ``[0, graph.n)``. ``1.7``, ``"3"`` and ``True`` are refused, never rounded or parsed.

    Raises
    ------
    InvalidTypeError
        Not an integer (bool included). A ``TypeError``.
    InvalidGraphError
        Outside ``[0, graph.n)``. A ``ValueError``.
    """
    if isinstance(source, np.ndarray) and source.ndim == 0:
        source = source[()]
    # bool is an int subclass, but True as a node id is almost surely a mistake.
    if isinstance(source, bool | np.bool_) or not isinstance(source, int | np.integer):
        raise not_a_node_id(source)
    s = int(source)
    if not 0 <= s < graph.n:
        raise out_of_range(s, graph.n)
    return s


# -- many sources ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ManyRequest:
    """A validated many-source call: what to solve and where the rows go.

    Attributes
    ----------
    sources : ndarray, int64, shape (k,)
        In range; duplicates kept (one row each).
    limit : int, float or None
        Nodes farther than this are unreachable; None for no bound. An int (the floor of the
        given bound) on integer graphs, a float on real ones.
    min_only : bool
        One solve from all the sources at once (:class:`NearestSourceResult`).
    want_pred : bool
        Predecessor rows (or the nearest-source forest) asked for.
    out, pred_out : ndarray or None
        The caller's arrays, checked: shape (k, n), writable, a dtype that holds every
        distance (``out``) or int32 (``pred_out``).
    native : numpy.dtype
        What the solvers produce: int64 on integer graphs, float64 on real ones.
    """

    sources: np.ndarray
    limit: int | float | None
    min_only: bool
    want_pred: bool
    out: np.ndarray | None
    pred_out: np.ndarray | None
    native: np.dtype
    n: int

    @property
    def k(self) -> int:
        return int(self.sources.size)

    @property
    def out_dtype(self) -> np.dtype:
        return self.native if self.out is None else self.out.dtype


def build_request(
    graph: Graph,
    sources: Any,
    *,
    out: Any = None,
    pred_out: Any = None,
    return_predecessors: bool | None = None,
    min_only: bool = False,
    limit: Any = None,
) -> ManyRequest:
    """Check a many-source call completely, before anything is solved or written.

    Raises
    ------
    InvalidTypeError
        ``sources`` is not a sequence of integers (a set or an iterator has no row order:
        only ``min_only=True`` takes one), ``out``/``pred_out`` is not a NumPy array or has a
        dtype the rows cannot be written in, ``limit`` is not a number.
    InvalidArgumentError
        No sources, ``out``/``pred_out`` of the wrong shape or read-only or overlapping,
        ``out`` too narrow for the graph's distances, ``limit`` negative or NaN, ``pred_out``
        with ``return_predecessors=False``, ``out`` with ``min_only``.
    InvalidGraphError
        A source out of range.
    """
    if not isinstance(min_only, bool | np.bool_):
        raise InvalidTypeError(f"min_only must be True or False, got {min_only!r}")
    src = check_sources(graph, sources, ordered=not min_only)
    lim = check_limit(graph, limit)
    if return_predecessors is None:
        want_pred = pred_out is not None
    elif not isinstance(return_predecessors, bool | np.bool_):
        raise InvalidTypeError(
            f"return_predecessors must be True or False, got {return_predecessors!r}"
        )
    else:
        want_pred = bool(return_predecessors)
        if pred_out is not None and not want_pred:
            raise InvalidArgumentError("pred_out= is given but return_predecessors=False")
    native = np.dtype(np.float64 if graph.is_float else np.int64)
    if min_only and (out is not None or pred_out is not None):
        raise InvalidArgumentError(
            "out= and pred_out= take a table of rows; min_only=True returns one row"
        )
    k, n = src.size, graph.n
    if out is not None:
        check_out(graph, out, k, lim)
    if pred_out is not None:
        _check_array(pred_out, "pred_out", k, n)
        if pred_out.dtype != np.int32:
            raise InvalidTypeError(
                f"pred_out must be int32 (node ids, -1 for none), got {pred_out.dtype}"
            )
    if out is not None and pred_out is not None and np.may_share_memory(out, pred_out):
        raise InvalidArgumentError("out and pred_out overlap: give them separate memory")
    return ManyRequest(src, lim, bool(min_only), want_pred, out, pred_out, native, n)


def is_one_source(value: Any) -> bool:
    """True for what :meth:`Solver.solve` treats as one source (anything that is not a
    sequence or an iterable of sources: ints, NumPy integers, 0-d arrays, and every wrong
    type, which the one-source path then refuses with its own message)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0
    return isinstance(value, str | bytes) or not isinstance(value, Iterable)


def check_sources(graph: Graph, sources: Any, *, ordered: bool = True) -> np.ndarray:
    """The sources as a read-only int64 array, each checked as a single source is (an integer
    node id in ``[0, n)``; ``1.7``, ``"3"`` and ``True`` are refused, never rounded).

    Parameters
    ----------
    graph : Graph
    sources : sequence of int (list, tuple, range, 1-D integer array)
        Any iterable (a set) when ``ordered`` is False.
    ordered : bool
        Rows follow the order of ``sources``, so an unordered collection is refused.

    Raises
    ------
    InvalidTypeError, InvalidArgumentError, InvalidGraphError
        See :func:`build_request`.
    """
    n = graph.n
    if isinstance(sources, str | bytes) or not isinstance(sources, Iterable):
        raise InvalidTypeError(
            f"sources must be a sequence of node ids (list, tuple, range or array), got {type(sources).__name__}"
        )
    if isinstance(sources, range):
        arr = np.arange(sources.start, sources.stop, sources.step, dtype=np.int64)
    elif isinstance(sources, np.ndarray):
        if sources.ndim != 1:
            raise InvalidArgumentError(
                f"sources must be one-dimensional, got an array of shape {sources.shape}"
            )
        if sources.dtype.kind in "iu":
            if (
                sources.dtype.kind == "u"
                and sources.size
                and int(sources.max()) > np.iinfo(np.int64).max
            ):
                raise out_of_range(int(sources.max()), n)
            arr = sources.astype(np.int64)
        else:
            arr = _from_objects(
                list(sources.tolist()) if sources.dtype != object else list(sources), n
            )
    else:
        if ordered and not isinstance(sources, Sequence):
            raise InvalidTypeError(
                f"sources must be an ordered sequence (list, tuple, range or array), got "
                f"{type(sources).__name__}: rows follow the order of the sources (min_only=True "
                "takes a set)"
            )
        arr = _from_objects(list(sources), n)
    if arr.size == 0:
        raise InvalidArgumentError("sources is empty: give at least one source node")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= n:
        raise out_of_range(lo if lo < 0 else hi, n)
    arr.flags.writeable = False
    return arr


def _from_objects(items: list, n: int) -> np.ndarray:
    for s in items:
        # bool is an int subclass, but True as a node id is almost surely a mistake.
        if isinstance(s, bool | np.bool_) or not isinstance(s, int | np.integer):
            raise not_a_node_id(s)
    try:
        return np.array(items, dtype=np.int64)
    except OverflowError:
        bad = max(items, key=abs)
        raise out_of_range(bad, n) from None


def check_limit(graph: Graph, limit: Any) -> int | float | None:
    """A distance bound as the solvers compare it (``dist <= limit`` is reached).

    Returns
    -------
    int, float or None
        None for no bound (None or ``inf``); on integer graphs the floor of the bound as an
        exact int (distances are integers), on real graphs a float.

    Raises
    ------
    InvalidTypeError
        Not a real number (bool included).
    InvalidArgumentError
        Negative or NaN.
    """
    if limit is None:
        return None
    if isinstance(limit, bool | np.bool_) or not isinstance(limit, numbers.Real):
        raise InvalidTypeError(f"limit must be a non-negative number, got {limit!r}")
    if isinstance(limit, numbers.Integral):
        value: int | float = int(limit)
    else:
        value = float(limit)
        if math.isnan(value):
            raise InvalidArgumentError(f"limit must be a non-negative number, got {limit!r}")
    if value < 0:
        raise InvalidArgumentError(f"limit must be a non-negative number, got {limit!r}")
    if value == math.inf:
        return None
    if graph.is_float:
        return float(value)
    bound = math.floor(value)
    return None if bound >= UNREACHABLE else int(bound)


def distance_bound(graph: Graph, limit: int | float | None) -> int | float:
    """The largest finite distance the graph can produce: a shortest path has at most n - 1
    edges, so ``(n - 1) * max_weight`` (exact for integers), capped by ``limit``."""
    bound = max(graph.n - 1, 0) * graph.max_weight
    return bound if limit is None else min(bound, limit)


def check_out(graph: Graph, out: Any, k: int, limit: int | float | None) -> None:
    """Check a caller's distance table: a writable array of shape (k, n) whose dtype holds
    every distance exactly and has room for the unreachable sentinel (the dtype's largest
    integer, or ``inf``).

    Integer graphs take int64, or int32 / float32 / float64 when every possible distance
    (:func:`distance_bound`) fits exactly: below 2**31 - 1, up to 2**24 and up to 2**53.
    Real-weighted graphs take float64.
    """
    n = graph.n
    _check_array(out, "out", k, n)
    dt = out.dtype
    if graph.is_float:
        if dt != np.float64:
            raise InvalidTypeError(f"out must be float64 for a graph with real weights, got {dt}")
        return
    allowed = {
        np.dtype(np.int64): None,
        np.dtype(np.int32): np.iinfo(np.int32).max - 1,
        np.dtype(np.float64): _FLOAT64_EXACT,
        np.dtype(np.float32): _FLOAT32_EXACT,
    }
    if dt not in allowed:
        raise InvalidTypeError(f"out must be int64, int32, float64 or float32, got {dt}")
    top = allowed[dt]
    bound = distance_bound(graph, limit)
    if top is not None and bound > top:
        raise InvalidArgumentError(
            f"out dtype {dt} cannot hold every distance of this graph exactly: up to "
            f"(n - 1) * max_weight = {max(n - 1, 0)} * {graph.max_weight} = {bound} > {top}; "
            "use int64, or a limit= at most that"
        )


def _check_array(a: Any, name: str, k: int, n: int) -> None:
    if not isinstance(a, np.ndarray):
        raise InvalidTypeError(
            f"{name} must be a NumPy array (or numpy.memmap) of shape ({k}, {n}), "
            f"got {type(a).__name__}"
        )
    if a.shape != (k, n):
        raise InvalidArgumentError(
            f"{name} has shape {a.shape}, expected ({k}, {n}): one row per source"
        )
    if not a.flags.writeable:
        raise InvalidArgumentError(f"{name} is read-only (a numpy.memmap needs mode 'r+' or 'w+')")
