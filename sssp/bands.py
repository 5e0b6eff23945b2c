"""Bands of a graph: the node order the fused cluster loop places by, and how local it keeps edges.

The fused cluster loop (``LaunchConfig(loop="cluster", fuse=True)``, ``kernels/README.md``) gives
each block of the cluster a run of consecutive nodes of a bandwidth-reducing order (SciPy's
reverse Cuthill-McKee on the structure of A + A^T) and lets a block relax its own band's nodes
within a step. It pays where the bands keep almost every edge inside one block. On the H200
(README, "Status") it won on five FE meshes whose bands keep 95-98 % of the edges local at the
cluster size the solver picked (4-16 blocks; 89-96 % at 16 bands) and lost on five meshes at
76-89 % (50-83 % at 16 bands). :func:`band_locality` is that share; ``sssp info`` prints it, at
16 bands, for high-diameter graphs, and :func:`fusion_gate` runs a configuration that asks for
fusion unfused where the share is below :data:`FUSE_MIN_LOCALITY`.
"""

from __future__ import annotations

import numpy as np

from .graph import Graph

BANDS = 16
"""Bands (cluster blocks) :func:`band_locality` counts by default: the cluster size the tuner
picked on every class where fusion ran."""

FUSE_MIN_LOCALITY = 0.92
"""The least band locality, at the cluster size the solver picked, at which the fused loop runs:
between the meshes where it lost (0.76-0.89) and those where it won (0.95-0.98)."""


def band_order(graph: Graph) -> np.ndarray:
    """A bandwidth-reducing order of the graph's nodes (int64): reverse Cuthill-McKee on the
    structure of A + A^T, so that consecutive nodes of it are close in the graph."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    n = graph.n
    a = csr_matrix((np.ones(graph.m, np.int8), graph.indices, graph.indptr), shape=(n, n))
    return np.asarray(reverse_cuthill_mckee(a, symmetric_mode=False), dtype=np.int64)


def band_locality(graph: Graph, bands: int = BANDS, order: np.ndarray | None = None) -> float:
    """The share of edges whose two ends fall in the same band when ``order`` (by default
    :func:`band_order`) is cut into ``bands`` runs of equal length as the cluster solver cuts it
    (``kernels.cluster_placement``); nan for a graph without edges."""
    import kernels

    if graph.m == 0:
        return float("nan")
    order = band_order(graph) if order is None else order
    place, _ = kernels.cluster_placement(order, bands)
    owner = place >> 16
    src = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    return float(np.mean(owner[src] == owner[graph.indices]))


def fusion_gate(graph: Graph, blocks: int, order: np.ndarray | None = None) -> tuple[bool, str]:
    """Whether the fused loop should run on ``graph`` cut into ``blocks`` bands, and why: it runs
    when :func:`band_locality` there is at least :data:`FUSE_MIN_LOCALITY`."""
    share = band_locality(graph, blocks, order)
    if share >= FUSE_MIN_LOCALITY:
        return True, f"band locality {share:.3f} at {blocks} blocks >= {FUSE_MIN_LOCALITY}: fused"
    shown = "undefined (no edges)" if np.isnan(share) else f"{share:.3f}"
    return False, f"band locality {shown} at {blocks} blocks < {FUSE_MIN_LOCALITY}: ran unfused"
