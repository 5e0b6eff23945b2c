"""The backend's graph: NetworkX node labels over sssp :class:`~sssp.Graph` CSR arrays, one per
weight attribute that a call needed."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SSSPError
from ..graph import Graph

if TYPE_CHECKING:
    from .order import TwoWay


class BackendGraph:
    """A NetworkX graph converted for sssp (what ``convert_from_nx`` returns).

    Parameters
    ----------
    nodes : list
        The NetworkX node labels; node ``i`` of every CSR graph is ``nodes[i]``.
    directed, multigraph : bool
        The kind of the NetworkX graph.
    graphs : dict
        Weight attribute (None: unit weights) -> :class:`~sssp.Graph`.
    source : networkx.Graph, optional
        The NetworkX graph itself, kept when NetworkX asked for every edge attribute (a
        callable weight, evaluated once per edge at the call) or when the caller converted
        it without naming an attribute.
    """

    __networkx_backend__ = "sssp"

    def __init__(
        self,
        nodes: list,
        directed: bool,
        multigraph: bool,
        graphs: dict[Any, Graph],
        source: Any = None,
    ) -> None:
        self.nodes = nodes
        self.directed = directed
        self.multigraph = multigraph
        self._graphs = dict(graphs)
        self._source = source
        self._index: dict[Any, int] | None = None
        self._origin: Any = None
        """A weak reference to the NetworkX graph converted (the backward search's order)."""
        self._backward: dict[Any, Graph] = {}
        self._two_way: dict[Any, TwoWay] = {}
        self._defaults: dict[Any, Any] = {}
        """Weight attribute -> the value taken where an edge lacks it, as converted."""

    @classmethod
    def from_networkx(
        cls, G: Any, weights: dict[Any, Any] | None = None, *, keep: bool = False
    ) -> BackendGraph:
        """Convert ``G`` for the weight attributes ``weights`` (attribute -> default where
        missing; None for unit weights only). ``keep`` keeps ``G`` for later attributes and
        callables.

        Raises
        ------
        NotImplementedError
            A weight sssp cannot take (negative, not finite, not a number): NetworkX then
            runs its own implementation.
        """
        graphs = {}
        for attr, default in (weights or {None: 1}).items():
            graphs[attr] = _convert(G, attr, default)
        out = cls(list(G), G.is_directed(), G.is_multigraph(), graphs, G if keep else None)
        out._defaults = dict(weights or {None: 1})
        try:
            out._origin = weakref.ref(G)
        except TypeError:  # a graph class without weak references
            pass
        return out

    # -- what NetworkX and the algorithms ask of a graph ------------------------------------------
    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.nodes)

    def __contains__(self, label: Any) -> bool:
        try:
            return label in self.index
        except TypeError:  # unhashable: not a node, as NetworkX answers
            return False

    @property
    def index(self) -> dict[Any, int]:
        """Label -> node index."""
        if self._index is None:
            self._index = {v: i for i, v in enumerate(self.nodes)}
        return self._index

    def graph_for(self, weight: Any) -> Graph:
        """The CSR graph for ``weight`` (an attribute name, None, or a callable
        ``weight(u, v, data)``, NetworkX's rules: 1 where the attribute is missing, the
        lightest of parallel edges, None hides an edge).

        Raises
        ------
        NotImplementedError
            Weights sssp cannot take, or an attribute or callable this graph was not
            converted with (NetworkX then runs its own implementation).
        """
        if not callable(weight) and weight in self._graphs:
            return self._graphs[weight]
        if weight is None and self._graphs:
            # Unit weights on the same edges (NetworkX hands a graph converted for some
            # attribute to a call that needs none).
            g = next(iter(self._graphs.values()))
            unit = Graph(
                g.indptr, g.indices, np.ones(g.m, dtype=np.int32), name=g.name, labels=g.labels
            )
            self._graphs[None] = unit
            return unit
        if self._source is None:
            raise NotImplementedError(
                f"this sssp graph was converted without the edge weights {weight!r} asks for"
            )
        g = _convert(self._source, weight, 1)
        if not callable(weight):
            self._graphs[weight] = g
        return g

    def backward_for(self, weight: Any) -> Graph:
        """The reverse of :meth:`graph_for` (``weight``), each row in the order of the NetworkX
        graph's ``pred`` (the graph NetworkX's backward search walks; ties follow it) while that
        graph is still alive and has the same edges and weights; otherwise the reverse in the
        CSR graph's own order. An undirected graph weighed by an attribute is its own
        reverse."""
        forward = self.graph_for(weight)
        if not self.directed and not callable(weight):  # the same weight both ways
            return forward
        cached = not callable(weight)  # a callable is evaluated at each call, as graph_for does
        if cached and weight in self._backward:
            return self._backward[weight]
        G = self._source if self._source is not None else self._origin and self._origin()
        back = forward.reverse()
        if G is not None:
            ordered = _convert(G, weight, self._defaults.get(weight, 1), reverse=True)
            if _same_arcs(ordered, back):
                back = ordered
        if cached:
            self._backward[weight] = back
        return back

    def two_way_for(self, weight: Any) -> TwoWay:
        """NetworkX's two-way search on :meth:`graph_for` and :meth:`backward_for` (``weight``),
        kept with its per-node state (an attribute's; a callable's is made for the call)."""
        from .order import TwoWay  # compiled code: imported when a search runs

        if callable(weight):
            return TwoWay(self.graph_for(weight), self.backward_for(weight))
        if weight not in self._two_way:
            self._two_way[weight] = TwoWay(self.graph_for(weight), self.backward_for(weight))
        return self._two_way[weight]

    def to_networkx(self) -> Any:
        """The NetworkX graph: the original one when it was kept, else rebuilt from the first
        CSR graph (weights as the ``"weight"`` attribute)."""
        if self._source is not None:
            return self._source
        import networkx as nx

        G: nx.Graph = (
            nx.MultiDiGraph()
            if self.directed and self.multigraph
            else nx.DiGraph()
            if self.directed
            else nx.MultiGraph()
            if self.multigraph
            else nx.Graph()
        )
        G.add_nodes_from(self.nodes)
        attr, g = next(iter(self._graphs.items()))
        src, dst, w = g.edges()
        key = "weight" if attr is None else attr
        G.add_weighted_edges_from(
            (
                (self.nodes[u], self.nodes[v], x)
                for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist(), strict=True)
            ),
            weight=key,
        )
        return G

    def __repr__(self) -> str:
        kind = ("Multi" if self.multigraph else "") + ("DiGraph" if self.directed else "Graph")
        return f"<sssp backend {kind} with {len(self.nodes)} nodes>"


def _same_arcs(a: Graph, b: Graph) -> bool:
    """Whether two graphs hold the same arcs with the same weights (in any order in a row)."""
    if a.n != b.n or a.m != b.m or not np.array_equal(a.indptr, b.indptr):
        return False
    src, dst, w = a.edges()
    src2, dst2, w2 = b.edges()
    i, j = np.lexsort((w, dst, src)), np.lexsort((w2, dst2, src2))
    return bool(np.array_equal(dst[i], dst2[j]) and np.array_equal(w[i], w2[j]))


def _convert(G: Any, weight: Any, default: Any, *, reverse: bool = False) -> Graph:
    try:
        return Graph.from_networkx(G, weight=weight, default=default, reverse=reverse)
    except SSSPError as err:
        # NetworkX treats NotImplementedError as "run it elsewhere" and falls back.
        raise NotImplementedError(f"sssp cannot take this graph's weights: {err}") from err
    except Exception as err:  # a callable weight that raises: NetworkX will call it its own way
        if callable(weight):
            raise NotImplementedError(
                f"the weight function raised {type(err).__name__}: {err}"
            ) from err
        raise
