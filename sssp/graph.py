"""The graph model: an immutable, validated directed CSR graph with non-negative integer or real
weights and optional original node ids."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from .classes import GraphClass, degree_class, size_label
from .errors import InvalidGraphError

log = logging.getLogger(__name__)

INT32_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True)
class GraphFeatures:
    """Summary statistics of a graph, as used to classify it and to tune for it."""

    n: int
    m: int
    mean_degree: float
    max_degree: int
    degree_std: float
    """Standard deviation of the out-degree (the degree spread)."""
    sinks: int
    """Nodes without outgoing edges (their ω is infinite)."""
    min_weight: int | float
    max_weight: int | float
    omega_mean: float
    """Mean of ω(v), the minimum outgoing edge weight, over nodes that have out-edges."""

    def as_dict(self) -> dict[str, float | int]:
        return dict(self.__dict__)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


INT64_LIMIT = 2**63
"""Integer graphs must satisfy ``(n + 1) * max_weight < INT64_LIMIT``: every distance, every
``dist + w`` and every Crauser term ``dist + omega`` then fits in int64 below the sentinel."""


def _edge_at(indptr: np.ndarray, indices: np.ndarray, e: int) -> str:
    src = int(np.searchsorted(indptr, e, side="right") - 1)
    return f"edge {src} -> {int(indices[e])} (edge #{e})"


def check_weights(weights: np.ndarray, describe: Any = None) -> np.ndarray:
    """Validate edge weights before any cast and return them in their stored dtype.

    Parameters
    ----------
    weights : ndarray, shape (m,)
        bool, integer or floating values.
    describe : callable, optional
        ``describe(e) -> str`` names edge ``e`` in messages (default: ``"edge #e"``).

    Returns
    -------
    ndarray, shape (m,)
        int32 (when every weight fits) or int64 for integer input; float32 for float32 input,
        float64 for every other floating kind. Never a float cast to an integer.

    Raises
    ------
    InvalidGraphError
        A weight that is NaN, infinite, negative, beyond int64, or a dtype that is not a number.
    """
    where = describe or (lambda e: f"edge #{e}")
    kind = weights.dtype.kind
    if kind not in "biuf":
        raise InvalidGraphError(f"weights must be numbers, got dtype {weights.dtype}")
    if kind == "f":
        bad = ~np.isfinite(weights) | (weights < 0)
        if weights.size and bad.any():
            e = int(np.argmax(bad))
            raise InvalidGraphError(
                f"weight {weights[e].item()!r} on {where(e)} is not a finite non-negative number"
            )
        dtype = np.float32 if weights.dtype == np.float32 else np.float64
        return np.ascontiguousarray(weights, dtype=dtype)
    if weights.size:
        if kind == "i" and weights.min() < 0:
            e = int(np.argmax(weights < 0))
            raise InvalidGraphError(f"negative weight {weights[e].item()} on {where(e)}")
        wmax = int(weights.max())
        if wmax >= INT64_LIMIT:
            e = int(np.argmax(weights))
            raise InvalidGraphError(f"weight {wmax} on {where(e)} exceeds the int64 range")
    else:
        wmax = 0
    return np.ascontiguousarray(weights, dtype=np.int32 if wmax <= INT32_MAX else np.int64)


def _check_labels(labels: Any, n: int) -> np.ndarray | None:
    """Validate node labels (see :attr:`Graph.labels`); None for the identity 0..n-1."""
    if labels is None:
        return None
    if isinstance(labels, np.ndarray):
        arr = labels
    else:
        items = list(labels)
        if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in items):
            try:
                arr = np.array(items, dtype=np.int64)
            except OverflowError as err:
                raise InvalidGraphError("a node label exceeds the int64 range") from err
        else:
            arr = np.empty(len(items), dtype=object)
            arr[:] = items
    if arr.ndim != 1 or arr.size != n:
        raise InvalidGraphError(
            f"labels must be one-dimensional of length n = {n}, got shape {arr.shape}"
        )
    if arr.dtype.kind in "iu" or arr.dtype == bool:
        if arr.dtype.kind == "u" and arr.size and int(arr.max()) >= INT64_LIMIT:
            raise InvalidGraphError(f"label {int(arr.max())} exceeds the int64 range")
        arr = np.ascontiguousarray(arr, dtype=np.int64)
        if np.array_equal(arr, np.arange(n, dtype=np.int64)):
            return None
        increasing = n < 2 or bool(np.all(arr[1:] > arr[:-1]))  # files: no sort needed
        if not increasing and np.unique(arr).size != n:
            raise InvalidGraphError("labels must be distinct; some node id occurs twice")
        return _readonly(arr)
    out = arr.astype(object)
    try:
        distinct = len(set(out.tolist()))
    except TypeError as err:
        raise InvalidGraphError(f"labels must be hashable: {err}") from err
    if distinct != n:
        raise InvalidGraphError("labels must be distinct; some node label occurs twice")
    return _readonly(out)


def _nx_rows(g: Any, pred: bool) -> Any:
    """Node -> neighbours (-> edge data) of a NetworkX graph, in its adjacency order: its
    successors (``pred``: its predecessors). The graph's own dicts where it has them (what
    NetworkX's Dijkstra walks; reading them skips the views' per-item Python), else its views."""
    inner = getattr(g, "_pred" if pred else "_adj", None)
    if isinstance(inner, dict):
        return inner
    return g.pred if pred else g.adj


def _nx_row_weights(g: Any, weight: Any, default: Any, back: bool) -> Any:
    """``f(u, nbrs)``: the weights of a row of :func:`_nx_rows`, an arc to each neighbour, by
    NetworkX's rule: a callable ``weight(u, v, data)`` (None hides the edge; on multigraphs
    ``data`` maps keys to attribute dicts), else the attribute ``weight`` with ``default`` when
    missing (the lightest of parallel edges for multigraphs, as ``networkx.shortest_path``
    does). ``back``: the row of ``u``'s predecessors, each weighed as the edge into ``u``."""
    if callable(weight):
        if back:
            return lambda u, nbrs: [weight(v, u, d) for v, d in nbrs.items()]
        return lambda u, nbrs: [weight(u, v, d) for v, d in nbrs.items()]
    if g.is_multigraph():
        return lambda u, nbrs: [
            min(a.get(weight, default) for a in keys.values()) for keys in nbrs.values()
        ]
    return lambda u, nbrs: [d.get(weight, default) for d in nbrs.values()]


def _is_weight_type(t: type) -> bool:
    """Whether values of type ``t`` are weights as NetworkX's Dijkstra takes them: numbers, not
    bools."""
    return issubclass(t, int | float | np.integer | np.floating) and not issubclass(
        t, bool | np.bool_
    )


class Graph:
    """A directed graph in CSR form with non-negative integer or real edge weights.

    Parameters
    ----------
    indptr : array_like, shape (n + 1,)
        Row pointers; converted to int64. ``indptr[0] == 0``, non-decreasing, ``indptr[-1] == m``.
    indices : array_like, shape (m,)
        Edge targets; converted to int32, each in ``[0, n)``.
    weights : array_like, shape (m,)
        Non-negative weights, checked (finite, ``>= 0``) before any cast. Integers are stored as
        int32 when they fit, else int64, and ``(n + 1) * max_weight`` must stay below ``2**63``
        so that distances fit in int64. Real weights are stored as float32 (float32 input) or
        float64 (any other floating kind) and never rounded to integers.
    name : str
        A label for reports.
    meta : mapping
        Provenance (file, format, how weights were assigned...). Kept read-only.
    labels : array_like, shape (n,), optional
        The original id of each node (e.g. the ids of an edge-list file); see :attr:`labels`.

    The instance is immutable: its arrays are read-only views, validated once here, so the inner
    layers (solvers, GPU runtime, tuner) trust them. Parallel edges and self-loops are allowed
    and kept: every constructor keeps each parallel edge as its own arc (shortest paths use the
    lightest), never summing them.
    """

    __slots__ = (
        "_indptr", "_indices", "_weights", "name", "_meta", "_features", "_reverse", "_labels",
        "_label_index", "_diameter",
    )  # fmt: skip

    def __init__(
        self,
        indptr: Any,
        indices: Any,
        weights: Any,
        *,
        name: str = "graph",
        meta: Mapping[str, Any] | None = None,
        labels: Any = None,
    ) -> None:
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        weights = np.asarray(weights)
        for label, arr in (("indptr", indptr), ("indices", indices), ("weights", weights)):
            if arr.ndim != 1:
                raise InvalidGraphError(f"{label} must be one-dimensional, got shape {arr.shape}")
        for label, arr in (("indptr", indptr), ("indices", indices)):
            if arr.size and not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
                if (
                    np.issubdtype(arr.dtype, np.floating)
                    and np.all(np.isfinite(arr))
                    and np.all(arr == np.round(arr))
                ):
                    continue  # integral floats (e.g. from SciPy) are accepted and converted
                raise InvalidGraphError(f"{label} must hold integers, got dtype {arr.dtype}")
        if indptr.size == 0:
            raise InvalidGraphError("indptr must have n + 1 >= 1 entries, got an empty array")
        n = indptr.size - 1
        if n > INT32_MAX:
            raise InvalidGraphError(f"n = {n} nodes exceeds the int32 node-id range")
        if indptr.dtype.kind == "u" and int(indptr.max()) >= INT64_LIMIT:
            raise InvalidGraphError(f"indptr value {int(indptr.max())} exceeds the int64 range")
        if indptr.dtype.kind == "f":
            # Checked before the cast, which would wrap 1e300 to -2**63 without a word.
            big = np.abs(indptr) >= float(INT64_LIMIT)
            if big.any():
                value = indptr[int(np.argmax(big))].item()
                raise InvalidGraphError(f"indptr value {value!r} exceeds the int64 range")
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        m = int(indptr[-1])
        if indptr[0] != 0:
            raise InvalidGraphError(f"indptr[0] must be 0, got {indptr[0]}")
        if indices.size != m or weights.size != m:
            raise InvalidGraphError(
                f"indptr[-1] = {m} edges but indices has {indices.size} and weights {weights.size}"
            )
        if n and np.any(np.diff(indptr) < 0):
            bad = int(np.flatnonzero(np.diff(indptr) < 0)[0])
            raise InvalidGraphError(f"indptr must be non-decreasing; it decreases after node {bad}")
        if m:
            lo, hi = int(indices.min()), int(indices.max())
            if lo < 0 or hi >= n:
                bad = lo if lo < 0 else hi
                raise InvalidGraphError(f"edge target {bad} is out of range [0, {n})")
        weights = check_weights(weights, lambda e: _edge_at(indptr, indices, e))
        if weights.dtype.kind == "i" and m:
            wmax = int(weights.max())
            if (n + 1) * wmax >= INT64_LIMIT:
                raise InvalidGraphError(
                    f"(n + 1) * max_weight = {n + 1} * {wmax} does not fit below 2**63: distances "
                    "could overflow int64 (scale the weights down or use real weights)"
                )
        elif m and not np.isfinite(float(n + 1) * float(weights.max())):
            raise InvalidGraphError(
                f"(n + 1) * max_weight = {n + 1} * {float(weights.max())!r} overflows float64: "
                "distances could become infinite"
            )
        self._labels = _check_labels(labels, n)
        self._label_index: dict[Any, int] | Literal["sorted"] | None = None
        indices = np.ascontiguousarray(indices, dtype=np.int32)
        self._indptr = _readonly(indptr)
        self._indices = _readonly(indices)
        self._weights = _readonly(weights)
        self.name = str(name)
        self._meta = MappingProxyType(dict(meta or {}))
        self._features: GraphFeatures | None = None
        self._diameter: str | None = None
        self._reverse: Graph | None = None

    # -- construction helpers -------------------------------------------------------------------
    @classmethod
    def from_edges(
        cls,
        n: int,
        src: Any,
        dst: Any,
        weights: Any,
        *,
        name: str = "graph",
        meta: Mapping[str, Any] | None = None,
        labels: Any = None,
    ) -> Graph:
        """Build from an edge list (``src[i] -> dst[i]`` with ``weights[i]``); order is kept stable
        within each source node and parallel edges stay separate arcs."""
        # n first: every array below has n entries, so it must be checked before one is made.
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
            raise InvalidGraphError(f"n must be a non-negative integer, got {n!r}")
        if n > INT32_MAX:
            raise InvalidGraphError(f"n = {n} nodes exceeds the int32 node-id range")
        src = np.asarray(src)
        dst = np.asarray(dst)
        weights = np.asarray(weights)
        if not (src.shape == dst.shape == weights.shape) or src.ndim != 1:
            raise InvalidGraphError(
                f"src, dst and weights must be 1-D of equal length, got shapes "
                f"{src.shape}, {dst.shape}, {weights.shape}"
            )
        if src.size:
            if not np.issubdtype(src.dtype, np.integer):
                raise InvalidGraphError(f"src must hold integers, got dtype {src.dtype}")
            lo, hi = int(src.min()), int(src.max())
            if lo < 0 or hi >= n:
                raise InvalidGraphError(
                    f"edge source {lo if lo < 0 else hi} is out of range [0, {n})"
                )
        # Validate the weights here, before the reordering copies them and while the message
        # can still name the edge by its input position.
        weights = check_weights(
            weights, lambda e: f"edge {int(src[e])} -> {int(dst[e])} (input #{e})"
        )
        counts = np.bincount(src, minlength=n) if src.size else np.zeros(n, dtype=np.int64)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        del counts
        if src.size > 1 and not np.all(src[1:] >= src[:-1]):  # sorted input needs no copy
            order = np.argsort(src, kind="stable")
            dst, weights = dst[order], weights[order]
        return cls(indptr, dst, weights, name=name, meta=meta, labels=labels)

    @classmethod
    def from_scipy(
        cls,
        matrix: Any,
        *,
        name: str = "graph",
        meta: Mapping[str, Any] | None = None,
        labels: Any = None,
    ) -> Graph:
        """Build from an adjacency matrix: entry (i, j) is an edge i -> j with that weight.

        Parameters
        ----------
        matrix : SciPy sparse matrix/array, or dense 2-D array_like
            Sparse input: every stored entry is an edge, explicit zeros included (zero-weight
            edges), and duplicate entries of a non-canonical matrix stay parallel edges (as the
            readers keep them), never summed. Dense input follows ``scipy.sparse.csgraph``: 0,
            ``inf`` and NaN entries mean "no edge".
        """
        import scipy.sparse as sp

        if sp.issparse(matrix):
            shape = matrix.shape
        else:
            try:
                dense = np.asarray(matrix)
            except (TypeError, ValueError) as err:
                raise InvalidGraphError(
                    f"expected a sparse matrix or a 2-D array, got {type(matrix).__name__}"
                ) from err
            if dense.ndim != 2:
                raise InvalidGraphError(f"adjacency matrix must be 2-D, got shape {dense.shape}")
            if dense.dtype.kind not in "biuf":
                raise InvalidGraphError(
                    f"adjacency matrix must hold numbers, got dtype {dense.dtype}"
                )
            shape = dense.shape
        if shape[0] != shape[1]:
            raise InvalidGraphError(f"adjacency matrix must be square, got shape {shape}")
        if sp.issparse(matrix):
            coo = sp.coo_array(matrix)  # keeps duplicate entries
            row, col, data = coo.row, coo.col, np.asarray(coo.data)
        else:
            present = dense != 0
            if dense.dtype.kind == "f":
                present &= np.isfinite(dense)
            row, col = np.nonzero(present)
            data = dense[row, col]
        order = np.lexsort((col, row))  # stable: duplicates keep their order
        return cls.from_edges(
            int(shape[0]), row[order].astype(np.int64), col[order].astype(np.int64), data[order],
            name=name, meta=meta, labels=labels,
        )  # fmt: skip

    @classmethod
    def from_networkx(
        cls,
        g: Any,
        *,
        weight: Any = "weight",
        default: Any = 1,
        name: str | None = None,
        reverse: bool = False,
    ) -> Graph:
        """Build from a NetworkX graph, the way NetworkX's shortest-path functions read it.

        Parameters
        ----------
        g : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
            Undirected graphs become symmetric directed graphs.
        weight : str or callable
            An edge attribute (missing values take ``default``; of parallel edges in a
            multigraph the lightest counts), or ``weight(u, v, data)`` returning the weight or
            None to hide the edge, exactly as ``networkx.dijkstra_path_length`` calls it.
        default : int or float
            Weight of edges without the attribute (NetworkX uses 1).
        name : str, optional
        reverse : bool
            The reverse graph instead (an arc v -> u for each edge u -> v, weighed as u -> v),
            each row in the order of ``g.pred`` (``g.adj`` when undirected): the graph
            NetworkX's backward search walks. For an undirected ``g`` the same as the graph
            itself unless a callable weighs the two directions differently.

        Returns
        -------
        Graph
            Node ``i`` is the ``i``-th node of ``g.nodes``; :attr:`labels` holds the NetworkX
            node labels (None when they are exactly 0..n-1 in that order).
        """
        nodes = list(g.nodes)
        ids = {v: i for i, v in enumerate(nodes)}
        directed = g.is_directed()
        # Every row in the order of g.adj (an undirected edge from each end, as NetworkX's
        # Dijkstra walks it): the NetworkX backend reproduces NetworkX's order of equal-distance
        # nodes from it. A callable is called per direction, weight(u, v, data) for u -> v.
        row_weights = _nx_row_weights(g, weight, default, reverse)
        rows: list[tuple[int, int]] = []
        dst: list[int] = []
        w: list[Any] = []
        for u, nbrs in _nx_rows(g, reverse and directed).items():
            if nbrs:
                rows.append((ids[u], len(nbrs)))
                dst.extend(map(ids.__getitem__, nbrs))
                w.extend(row_weights(u, nbrs))
        src = np.repeat(
            np.fromiter((r for r, _ in rows), np.int64, len(rows)),
            np.fromiter((k for _, k in rows), np.int64, len(rows)),
        )
        dst_arr = np.asarray(dst, dtype=np.int64)
        kinds = set(map(type, w))
        if type(None) in kinds:  # hidden edges
            keep = np.fromiter((x is not None for x in w), bool, len(w))
            src, dst_arr = src[keep], dst_arr[keep]
            w = [x for x in w if x is not None]
            kinds.discard(type(None))
        if not all(_is_weight_type(t) for t in kinds):
            at = next(i for i, x in enumerate(w) if not _is_weight_type(type(x)))
            u, v = nodes[int(src[at])], nodes[int(dst_arr[at])]
            if reverse:
                u, v = v, u
            raise InvalidGraphError(f"weight {w[at]!r} of edge {u!r} -> {v!r} is not a number")
        try:
            w_arr = np.asarray(w) if w else np.zeros(0, dtype=np.int64)
        except OverflowError as err:
            raise InvalidGraphError(f"a weight exceeds the int64 range: {err}") from err
        if w_arr.dtype == object:
            raise InvalidGraphError("a weight exceeds the int64 range")
        return cls.from_edges(
            len(nodes),
            src,
            dst_arr,
            w_arr,
            name=name or (g.name or "networkx"),
            meta={"source": "networkx", "directed": directed},
            labels=nodes,
        )

    # -- attributes ------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self._indptr.size - 1

    @property
    def m(self) -> int:
        return int(self._indptr[-1])

    @property
    def indptr(self) -> np.ndarray:
        """int64, shape (n + 1,), read-only."""
        return self._indptr

    @property
    def indices(self) -> np.ndarray:
        """int32, shape (m,), read-only."""
        return self._indices

    @property
    def weights(self) -> np.ndarray:
        """int32/int64 (integer graphs) or float32/float64 (real weights), shape (m,),
        non-negative and finite, read-only."""
        return self._weights

    @property
    def is_float(self) -> bool:
        """True when the weights are real (float32/float64); distances are then float64."""
        return self._weights.dtype.kind == "f"

    @property
    def labels(self) -> np.ndarray | None:
        """The original id of each node, or None when the ids are 0..n-1.

        ndarray, shape (n,), read-only: int64 for files (sorted ascending, e.g. the ids of an
        edge list or the 1-based ids of DIMACS/METIS/Matrix Market) and integer-labelled NetworkX
        graphs, object for other NetworkX labels.
        """
        return self._labels

    def index_of(self, label: Any) -> int:
        """The node index of an original id (the identity when :attr:`labels` is None).

        Raises
        ------
        InvalidGraphError
            No node has this id.
        """
        labels = self._labels
        if labels is None or labels.dtype != object:
            if isinstance(label, bool) or not isinstance(label, int | np.integer):
                raise InvalidGraphError(f"node id {label!r} is not an integer")
            key = int(label)
            if labels is None:
                if 0 <= key < self.n:
                    return key
                raise InvalidGraphError(
                    f"node id {key} is not in the graph (ids are 0..{self.n - 1})"
                )
        else:
            key = label
        if self._label_index is None:
            if labels.dtype != object and bool(np.all(labels[1:] > labels[:-1])):
                self._label_index = "sorted"  # ids from files: a binary search, no dict of n ids
            else:
                self._label_index = {v: i for i, v in enumerate(labels.tolist())}
        if self._label_index == "sorted":
            pos = int(np.searchsorted(labels, key))
            if pos < self.n and int(labels[pos]) == key:
                return pos
            raise InvalidGraphError(f"node id {label!r} is not in the graph")
        try:
            return self._label_index[key]
        except (KeyError, TypeError):
            raise InvalidGraphError(f"node id {label!r} is not in the graph") from None

    def label_of(self, index: int) -> Any:
        """The original id of node ``index`` (``index`` itself when :attr:`labels` is None)."""
        if (
            isinstance(index, bool)
            or not isinstance(index, int | np.integer)
            or not 0 <= index < self.n
        ):
            raise InvalidGraphError(f"node index {index!r} is out of range [0, {self.n})")
        if self._labels is None:
            return int(index)
        value = self._labels[int(index)]
        return int(value) if isinstance(value, np.integer) else value

    @property
    def meta(self) -> Mapping[str, Any]:
        return self._meta

    @property
    def max_weight(self) -> int | float:
        """The largest weight (int for integer graphs, float for real ones); 0 without edges."""
        if not self.m:
            return 0.0 if self.is_float else 0
        top = self._weights.max()
        return float(top) if self.is_float else int(top)

    def out_degree(self) -> np.ndarray:
        return np.diff(self._indptr)

    def omega(self) -> np.ndarray:
        """ω(v): the minimum outgoing edge weight of each node; -1 for nodes without out-edges.

        Returns
        -------
        ndarray, int64 (float64 for real weights), shape (n,)
        """
        out = np.full(self.n, -1, dtype=np.float64 if self.is_float else np.int64)
        deg = self.out_degree()
        has = deg > 0
        if self.m:
            starts = self._indptr[:-1][has]
            out[has] = np.minimum.reduceat(self._weights, starts)
        return out

    def reverse(self) -> Graph:
        """The graph with every edge reversed (incoming edges as CSR), cached."""
        if self._reverse is None:
            src = np.repeat(np.arange(self.n, dtype=np.int32), self.out_degree())
            rev = Graph.from_edges(
                self.n,
                self._indices,
                src,
                self._weights,
                name=f"{self.name}^T",
                meta=dict(self._meta),
                labels=self._labels,
            )
            rev._reverse = self
            self._reverse = rev
        return self._reverse

    def features(self) -> GraphFeatures:
        if self._features is None:
            deg = self.out_degree()
            omega = self.omega()
            has = omega >= 0
            self._features = GraphFeatures(
                n=self.n,
                m=self.m,
                mean_degree=float(self.m / self.n) if self.n else 0.0,
                max_degree=int(deg.max()) if self.n else 0,
                degree_std=float(deg.std()) if self.n else 0.0,
                sinks=int((~has).sum()),
                min_weight=(float if self.is_float else int)(self._weights.min()) if self.m else 0,
                max_weight=self.max_weight,
                omega_mean=float(omega[has].mean()) if has.any() else 0.0,
            )
        return self._features

    def graph_class(self) -> GraphClass:
        """The class of this graph: size, degree and, for the sparse degree classes, diameter
        (see :mod:`sssp.classes` for the rules; the diameter estimate is computed once)."""
        from .classes import ESTIMATED_DEGREES, diameter_class

        f = self.features()
        size, degree = size_label(max(f.n, 1)), degree_class(f.mean_degree)
        if degree not in ESTIMATED_DEGREES:
            return GraphClass(size, degree)
        if self._diameter is None:
            self._diameter = diameter_class(self).label
        return GraphClass(size, degree, self._diameter)

    def to_scipy(self):
        """A ``scipy.sparse.csr_matrix`` view of the graph (parallel edges kept as-is).

        Not a reference for shortest paths of a multigraph: SciPy's csgraph converts integer
        weights to float64, and that conversion sums parallel edges into one (SciPy 1.17). Use
        :func:`sssp.cpu.reference.min_weight_csr` (the lightest of each pair's edges) for that.
        """
        import scipy.sparse as sp

        return sp.csr_matrix((self._weights, self._indices, self._indptr), shape=(self.n, self.n))

    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, weight) arrays of all edges, in CSR order."""
        src = np.repeat(np.arange(self.n, dtype=np.int32), self.out_degree())
        return src, self._indices, self._weights

    def with_meta(self, **extra: Any) -> Graph:
        """A copy sharing the arrays, with ``meta`` extended."""
        g = Graph.__new__(Graph)
        g._indptr, g._indices, g._weights = self._indptr, self._indices, self._weights
        g.name = self.name
        g._meta = MappingProxyType({**self._meta, **extra})
        g._features = self._features
        g._diameter = self._diameter
        g._reverse = None
        g._labels, g._label_index = self._labels, self._label_index
        return g

    def __repr__(self) -> str:
        return f"Graph(name={self.name!r}, n={self.n}, m={self.m})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        return (
            np.array_equal(self._indptr, other._indptr)
            and np.array_equal(self._indices, other._indices)
            and np.array_equal(self._weights, other._weights)
            and self._weights.dtype.kind == other._weights.dtype.kind
            and _same_labels(self._labels, other._labels)
        )

    __hash__ = None  # type: ignore[assignment]


def _same_labels(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.all(a == b))


def check_seed(seed: Any) -> int:
    """A seed for ``numpy.random.default_rng``: a non-negative integer, as a Python int.

    Raises
    ------
    InvalidGraphError
        ``seed`` is not an integer (bool included) or is negative.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InvalidGraphError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def iter_sources(graph: Graph, count: int, seed: int = 0) -> Iterable[int]:
    """``count`` source nodes drawn uniformly at random (with a seeded generator), as the paper
    does (100 random sources per graph)."""
    rng = np.random.default_rng(check_seed(seed))
    return [int(s) for s in rng.integers(0, graph.n, size=count)]
