"""One entry for every graph a user may hold: :func:`as_graph`."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .errors import InvalidTypeError
from .graph import Graph


def as_graph(obj: Any, *, weight: Any = "weight") -> Graph:
    """The :class:`Graph` of ``obj``, converted once.

    Parameters
    ----------
    obj : Graph, SciPy sparse matrix or array, or NetworkX graph
        A :class:`Graph` is returned as it is. A SciPy sparse matrix (``csr_matrix``,
        ``coo_array``, ...) goes through :meth:`Graph.from_scipy`: every stored entry is an
        edge, explicit zeros included. A NetworkX ``Graph``, ``DiGraph``, ``MultiGraph`` or
        ``MultiDiGraph`` goes through :meth:`Graph.from_networkx` (undirected edges both ways,
        node ``i`` the ``i``-th of ``G.nodes``; :attr:`Graph.labels` maps back).
    weight : str or callable
        NetworkX graphs only: the edge attribute (default 1 where missing) or
        ``weight(u, v, data)``, as NetworkX's shortest-path functions read it.

    Returns
    -------
    Graph

    Raises
    ------
    InvalidTypeError
        Anything else, dense arrays included: a dense matrix's zeros, ``inf`` and NaN mean
        "no edge" in SciPy's convention, so it is converted explicitly with
        :meth:`Graph.from_scipy` (or handed to :func:`sssp.csgraph.dijkstra`).
    InvalidGraphError
        The graph is not valid (a negative or non-finite weight, ...).
    """
    if isinstance(obj, Graph):
        return obj
    import scipy.sparse as sp

    if sp.issparse(obj):
        return Graph.from_scipy(obj)
    nx = sys.modules.get("networkx")  # a NetworkX graph means NetworkX is imported
    if nx is not None and isinstance(obj, nx.Graph):
        return Graph.from_networkx(obj, weight=weight)
    backend_graph = sys.modules.get("sssp.nxbackend.graph")
    if backend_graph is not None and isinstance(obj, backend_graph.BackendGraph):
        return obj.graph_for(weight)
    hint = (
        (
            " (a dense adjacency matrix: sssp.Graph.from_scipy(matrix), where 0, inf and NaN "
            "mean no edge)"
        )
        if isinstance(obj, np.ndarray | list)
        else ""
    )
    raise InvalidTypeError(
        f"expected an sssp.Graph, a SciPy sparse matrix or a NetworkX graph, got "
        f"{type(obj).__name__}{hint}"
    )
