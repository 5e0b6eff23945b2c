"""High-diameter synthetic inputs, stand-ins for road networks and meshes: 2-D grids and random
geometric graphs. Both undirected (every edge stored in both directions with one weight), weights
uniform integers in ``weight_range`` (default 1..100, the paper's), seeded.

``grid`` — :func:`grid_graph`
    A ``side x side`` 4-neighbour grid; ``generate("grid", size=n)`` takes the side nearest to
    √n. Mean out-degree just under 4, hop diameter 2·(side − 1).

``geometric`` — :func:`geometric_graph`
    ``n`` uniform points in the unit square, an edge between points closer than ``r``, with
    ``n·π·r² = degree`` (the mean degree, a little less at the border); hop diameter about
    √(2πn / degree)·√2.

They feed the high-diameter tuning classes (:func:`sssp.classes.high_diameter_classes`) and the
benchmark record's ``grid-<side>`` and ``rgg-<n>`` rows.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import InvalidGraphError
from .graph import Graph, check_seed


def _weights(seed: int, count: int, weight_range: tuple[int, int]) -> np.ndarray:
    lo, hi = weight_range
    if not (
        isinstance(lo, int | np.integer) and isinstance(hi, int | np.integer) and 0 <= lo <= hi
    ):
        raise InvalidGraphError(
            f"weight_range must be two integers 0 <= low <= high, got {weight_range!r}"
        )
    return np.random.default_rng(seed).integers(lo, hi + 1, size=count, dtype=np.int64)


def _undirected(
    n: int, u: np.ndarray, v: np.ndarray, w: np.ndarray, name: str, meta: dict
) -> Graph:
    return Graph.from_edges(
        n,
        np.concatenate([u, v]),
        np.concatenate([v, u]),
        np.concatenate([w, w]),
        name=name,
        meta={**meta, "weights": "uniform integers, one per undirected edge"},
    )


def grid_graph(side: int, *, seed: int = 0, weight_range: tuple[int, int] = (1, 100)) -> Graph:
    """A ``side x side`` 4-neighbour grid (node ``r * side + c``), both directions, one weight per
    undirected edge drawn from ``default_rng(seed)``."""
    seed = check_seed(seed)
    if not isinstance(side, int | np.integer) or side < 2:
        raise InvalidGraphError(f"grid side must be an integer of at least 2, got {side!r}")
    side = int(side)
    ids = np.arange(side * side, dtype=np.int64).reshape(side, side)
    u = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    v = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    w = _weights(seed, u.size, weight_range)
    return _undirected(
        side * side,
        u,
        v,
        w,
        f"grid-{side}-s{seed}",
        {"kind": "grid", "side": side, "seed": seed, "weight_range": list(weight_range)},
    )


def geometric_graph(
    n: int, degree: float = 8.0, *, seed: int = 0, weight_range: tuple[int, int] = (1, 100)
) -> Graph:
    """``n`` points uniform in the unit square (``default_rng(seed)``), an edge between points
    closer than ``sqrt(degree / (pi * n))``, both directions, one weight per undirected edge
    (``default_rng(seed + 1)``)."""
    from scipy.spatial import cKDTree

    seed = check_seed(seed)
    if not isinstance(n, int | np.integer) or n < 2:
        raise InvalidGraphError(f"a geometric graph needs at least 2 nodes, got {n!r}")
    if not (isinstance(degree, int | float) and math.isfinite(degree) and 0 < degree < n):
        raise InvalidGraphError(f"degree must be a number in (0, n), got {degree!r}")
    n = int(n)
    pts = np.random.default_rng(seed).random((n, 2))
    pairs = cKDTree(pts).query_pairs(math.sqrt(degree / (math.pi * n)), output_type="ndarray")
    w = _weights(seed + 1, len(pairs), weight_range)
    return _undirected(
        n,
        pairs[:, 0].astype(np.int64),
        pairs[:, 1].astype(np.int64),
        w,
        f"geometric-{n}-deg{degree:g}-s{seed}",
        {
            "kind": "geometric",
            "n": n,
            "degree": degree,
            "seed": seed,
            "weight_range": list(weight_range),
        },
    )
