"""The graph model: an immutable, validated directed CSR graph with non-negative integer weights."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

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
    min_weight: int
    max_weight: int
    omega_mean: float
    """Mean of ω(v), the minimum outgoing edge weight, over nodes that have out-edges."""

    def as_dict(self) -> dict[str, float | int]:
        return dict(self.__dict__)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class Graph:
    """A directed graph in CSR form with non-negative integer edge weights.

    Parameters
    ----------
    indptr : array_like, shape (n + 1,)
        Row pointers; converted to int64. ``indptr[0] == 0``, non-decreasing, ``indptr[-1] == m``.
    indices : array_like, shape (m,)
        Edge targets; converted to int32, each in ``[0, n)``.
    weights : array_like, shape (m,)
        Non-negative integer weights; stored as int32 when they fit, else int64.
    name : str
        A label for reports.
    meta : mapping
        Provenance (file, format, how weights were assigned, id maps...). Kept read-only.

    The instance is immutable: its arrays are read-only views, validated once here, so the inner
    layers (solvers, GPU runtime, tuner) trust them. Parallel edges and self-loops are allowed.
    """

    __slots__ = ("_indptr", "_indices", "_weights", "name", "_meta", "_features", "_reverse")

    def __init__(
        self,
        indptr: Any,
        indices: Any,
        weights: Any,
        *,
        name: str = "graph",
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        weights = np.asarray(weights)
        for label, arr in (("indptr", indptr), ("indices", indices), ("weights", weights)):
            if arr.ndim != 1:
                raise InvalidGraphError(f"{label} must be one-dimensional, got shape {arr.shape}")
            if arr.size and not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
                if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
                    continue  # integral floats (e.g. from SciPy) are accepted and converted
                raise InvalidGraphError(f"{label} must hold integers, got dtype {arr.dtype}")
        if indptr.size == 0:
            raise InvalidGraphError("indptr must have n + 1 >= 1 entries, got an empty array")
        n = indptr.size - 1
        if n > INT32_MAX:
            raise InvalidGraphError(f"n = {n} nodes exceeds the int32 node-id range")
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
            wmin = weights.min()
            if wmin < 0:
                e = int(np.flatnonzero(weights < 0)[0])
                src = int(np.searchsorted(indptr, e, side="right") - 1)
                raise InvalidGraphError(
                    f"negative weight {weights[e]} on edge {src} -> {int(indices[e])} (edge #{e})"
                )
            wmax = int(weights.max())
        else:
            wmax = 0
        indices = np.ascontiguousarray(indices, dtype=np.int32)
        wdtype = np.int32 if wmax <= INT32_MAX else np.int64
        if weights.dtype.kind == "u" and wmax > np.iinfo(np.int64).max:
            raise InvalidGraphError(f"weight {wmax} exceeds the int64 range")
        weights = np.ascontiguousarray(weights, dtype=wdtype)
        self._indptr = _readonly(indptr)
        self._indices = _readonly(indices)
        self._weights = _readonly(weights)
        self.name = str(name)
        self._meta = MappingProxyType(dict(meta or {}))
        self._features: GraphFeatures | None = None
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
    ) -> Graph:
        """Build from an edge list (``src[i] -> dst[i]`` with ``weights[i]``); order is kept stable
        within each source node."""
        src = np.asarray(src)
        dst = np.asarray(dst)
        weights = np.asarray(weights)
        if not (src.shape == dst.shape == weights.shape) or src.ndim != 1:
            raise InvalidGraphError(
                f"src, dst and weights must be 1-D of equal length, got shapes "
                f"{src.shape}, {dst.shape}, {weights.shape}"
            )
        if not isinstance(n, int | np.integer) or n < 0:
            raise InvalidGraphError(f"n must be a non-negative integer, got {n!r}")
        if src.size:
            if not np.issubdtype(src.dtype, np.integer):
                raise InvalidGraphError(f"src must hold integers, got dtype {src.dtype}")
            lo, hi = int(src.min()), int(src.max())
            if lo < 0 or hi >= n:
                raise InvalidGraphError(f"edge source {lo if lo < 0 else hi} is out of range [0, {n})")
        order = np.argsort(src, kind="stable")
        counts = np.bincount(src, minlength=n) if src.size else np.zeros(n, dtype=np.int64)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(indptr, dst[order], weights[order], name=name, meta=meta)

    @classmethod
    def from_scipy(cls, matrix: Any, *, name: str = "graph", meta: Mapping[str, Any] | None = None) -> Graph:
        """Build from a SciPy sparse matrix: entry (i, j) is an edge i -> j with that weight.

        Explicitly stored zeros are kept as zero-weight edges.
        """
        import scipy.sparse as sp

        if not sp.issparse(matrix):
            raise InvalidGraphError(f"expected a SciPy sparse matrix, got {type(matrix).__name__}")
        if matrix.shape[0] != matrix.shape[1]:
            raise InvalidGraphError(f"adjacency matrix must be square, got shape {matrix.shape}")
        csr = sp.csr_matrix(matrix)
        csr.sort_indices()
        return cls(csr.indptr, csr.indices, csr.data, name=name, meta=meta)

    @classmethod
    def from_networkx(
        cls, g: Any, *, weight: str = "weight", default: int = 1, name: str | None = None
    ) -> Graph:
        """Build from a NetworkX graph. Nodes are numbered in ``g``'s node order; undirected
        graphs become symmetric directed graphs. Missing weights take ``default``."""
        nodes = list(g.nodes)
        ids = {v: i for i, v in enumerate(nodes)}
        directed = g.is_directed()
        src, dst, w = [], [], []
        for u, v, data in g.edges(data=True):
            wt = data.get(weight, default)
            src.append(ids[u])
            dst.append(ids[v])
            w.append(wt)
            if not directed and u != v:
                src.append(ids[v])
                dst.append(ids[u])
                w.append(wt)
        w_arr = np.asarray(w) if w else np.zeros(0, dtype=np.int64)
        if w_arr.size and not np.issubdtype(w_arr.dtype, np.integer):
            if not np.all(w_arr == np.round(w_arr)):
                raise InvalidGraphError(f"attribute {weight!r} must hold integer weights")
            w_arr = w_arr.astype(np.int64)
        return cls.from_edges(
            len(nodes),
            np.asarray(src, dtype=np.int64),
            np.asarray(dst, dtype=np.int64),
            w_arr,
            name=name or (g.name or "networkx"),
            meta={"source": "networkx", "directed": directed},
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
        """int32 or int64, shape (m,), non-negative, read-only."""
        return self._weights

    @property
    def meta(self) -> Mapping[str, Any]:
        return self._meta

    @property
    def max_weight(self) -> int:
        return int(self._weights.max()) if self.m else 0

    def out_degree(self) -> np.ndarray:
        return np.diff(self._indptr)

    def omega(self) -> np.ndarray:
        """ω(v): the minimum outgoing edge weight of each node; -1 for nodes without out-edges.

        Returns
        -------
        ndarray, int64, shape (n,)
        """
        out = np.full(self.n, -1, dtype=np.int64)
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
                self.n, self._indices, src, self._weights, name=f"{self.name}^T", meta=dict(self._meta)
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
                min_weight=int(self._weights.min()) if self.m else 0,
                max_weight=self.max_weight,
                omega_mean=float(omega[has].mean()) if has.any() else 0.0,
            )
        return self._features

    def graph_class(self) -> GraphClass:
        """The paper's class of this graph (see :mod:`sssp.classes` for the rule)."""
        f = self.features()
        return GraphClass(size_label(max(f.n, 1)), degree_class(f.mean_degree))

    def to_scipy(self):
        """A ``scipy.sparse.csr_matrix`` view of the graph (parallel edges kept as-is)."""
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
        g._reverse = None
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
        )

    __hash__ = None  # type: ignore[assignment]


def iter_sources(graph: Graph, count: int, seed: int = 0) -> Iterable[int]:
    """``count`` source nodes drawn uniformly at random (with a seeded generator), as the paper
    does (100 random sources per graph)."""
    rng = np.random.default_rng(seed)
    return [int(s) for s in rng.integers(0, graph.n, size=count)]
