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

``road`` — :func:`road_graph`
    A road-like network: points scattered over towns of many sizes and the country between them,
    the Euclidean minimum spanning tree of their Delaunay triangulation (so it is connected and
    planar) plus further triangulation edges, short ones more likely, up to a mean degree of 2.6
    (the DIMACS road networks have 2.4-2.8), each weighted by its length. Many nodes of degree 2
    and 3, long chains between towns: hop diameter in the hundreds at 10**4 nodes and in the
    thousands at 10**6, as in the DIMACS and OSM road graphs.

They feed the high-diameter tuning classes (:func:`sssp.classes.high_diameter_classes`) and the
benchmark record's ``grid-<side>``, ``rgg-<n>`` and ``road-<n>`` rows.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import InvalidGraphError
from .generators import _check_weight_range
from .graph import Graph, check_seed


def _weights(seed: int, count: int, weight_range: tuple[int, int]) -> np.ndarray:
    lo, hi = _check_weight_range(weight_range)
    return np.random.default_rng(seed).integers(lo, hi + 1, size=count, dtype=np.int64)


def _undirected(
    n: int,
    u: np.ndarray,
    v: np.ndarray,
    w: np.ndarray,
    name: str,
    meta: dict,
    weights: str = "uniform integers, one per undirected edge",
) -> Graph:
    return Graph.from_edges(
        n,
        np.concatenate([u, v]),
        np.concatenate([v, u]),
        np.concatenate([w, w]),
        name=name,
        meta={**meta, "weights": weights},
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


ROAD_DEGREE = 2.6
"""Default mean out-degree of :func:`road_graph` (DIMACS9's USA road graphs: 2.4-2.8)."""
ROAD_TOWN_SHARE = 0.6
"""Share of a road graph's points in towns (the rest spread evenly over the country)."""
ROAD_TOWN_POINTS = 2000
"""Points per town on average (``n // ROAD_TOWN_POINTS`` towns, at least one)."""


def _road_points(rng: np.random.Generator, n: int) -> tuple[np.ndarray, int]:
    """``n`` points in the unit square: :data:`ROAD_TOWN_SHARE` of them around towns whose
    sizes follow a Pareto law (a few cities, many villages), the rest uniform."""
    towns = max(1, n // ROAD_TOWN_POINTS)
    centres = rng.random((towns, 2))
    sizes = rng.pareto(1.2, towns) + 1.0
    spread = 0.35 / math.sqrt(towns) * np.sqrt(sizes / sizes.mean())
    in_towns = int(n * ROAD_TOWN_SHARE)
    town = rng.choice(towns, size=in_towns, p=sizes / sizes.sum())
    near = centres[town] + rng.normal(size=(in_towns, 2)) * spread[town, None]
    pts = np.concatenate([near, rng.random((n - in_towns, 2))])
    # Reflect what fell outside back in (a clip would line points up on the border).
    outside = (pts < 0.0) | (pts > 1.0)
    pts[outside] = np.abs((pts[outside] + 1.0) % 2.0 - 1.0)
    return pts, towns


def _delaunay_edges(pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The undirected edges ``(u, v)``, ``u < v``, of the Delaunay triangulation of ``pts``; a
    point Qhull left out (a duplicate) is joined to its nearest neighbour instead."""
    from scipy.spatial import Delaunay, cKDTree

    tri = Delaunay(pts)
    s = tri.simplices.astype(np.int64)
    a = np.concatenate([s[:, 0], s[:, 1], s[:, 2]])
    b = np.concatenate([s[:, 1], s[:, 2], s[:, 0]])
    left_out = np.setdiff1d(np.arange(len(pts)), s.ravel())
    if left_out.size:
        _, nearest = cKDTree(pts).query(pts[left_out], k=2)
        a = np.concatenate([a, left_out])
        b = np.concatenate([b, np.where(nearest[:, 0] == left_out, nearest[:, 1], nearest[:, 0])])
    n = len(pts)
    keys = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
    return keys // n, keys % n


def road_graph(
    n: int,
    degree: float = ROAD_DEGREE,
    *,
    seed: int = 0,
    weight_range: tuple[int, int] = (1, 100),
) -> Graph:
    """A road-like network of ``n`` nodes and mean out-degree ``degree`` (see the module's
    docstring), both directions, weights the edges' lengths scaled into ``weight_range``: the
    99th percentile of the lengths maps to its top, longer edges are clipped there.

    Points from ``default_rng(seed)``; the triangulation edges added to the spanning tree are
    drawn with probability falling with their length (exponential keys times the length, the
    smallest kept). SciPy's Qhull does the triangulation: 82 s and 3.2 GB at 4 M nodes on a
    2-core host (15 s at 1 M).
    """
    from scipy.sparse import coo_array
    from scipy.sparse.csgraph import minimum_spanning_tree

    seed = check_seed(seed)
    if not isinstance(n, int | np.integer) or n < 4:
        raise InvalidGraphError(f"a road graph needs at least 4 nodes, got {n!r}")
    if not (isinstance(degree, int | float) and math.isfinite(degree) and 2 <= degree <= 5):
        raise InvalidGraphError(
            f"a road graph's mean degree must be a number in [2, 5] (a spanning tree has 2, "
            f"a Delaunay triangulation about 6), got {degree!r}"
        )
    lo, hi = _check_weight_range(weight_range)
    n = int(n)
    rng = np.random.default_rng(seed)
    pts, towns = _road_points(rng, n)
    u, v = _delaunay_edges(pts)
    length = np.hypot(*(pts[u] - pts[v]).T)
    # The tree: Kruskal over the triangulation (a zero length would read as no edge).
    tiny = np.finfo(np.float64).tiny
    tree = minimum_spanning_tree(
        coo_array((np.maximum(length, tiny), (u, v)), shape=(n, n)).tocsr()
    ).tocoo()
    tu, tv = tree.row.astype(np.int64), tree.col.astype(np.int64)
    in_tree = np.zeros(u.size, dtype=bool)
    in_tree[np.searchsorted(u * n + v, np.minimum(tu, tv) * n + np.maximum(tu, tv))] = True
    want = max(int(round(degree * n / 2)), n - 1)
    extra = np.flatnonzero(~in_tree)
    keys = rng.exponential(size=extra.size) * length[extra]
    take = extra[np.argsort(keys, kind="stable")[: max(0, want - (n - 1))]]
    keep = np.sort(np.concatenate([np.flatnonzero(in_tree), take]))
    u, v, length = u[keep], v[keep], length[keep]
    top = float(np.quantile(length, 0.99)) or 1.0
    w = np.clip(np.rint(lo + (hi - lo) * length / top), lo, hi).astype(np.int64)
    return _undirected(
        n,
        u,
        v,
        w,
        f"road-{n}-deg{degree:g}-s{seed}",
        {
            "kind": "road",
            "n": n,
            "degree": degree,
            "seed": seed,
            "towns": towns,
            "weight_range": list(weight_range),
        },
        weights="integers proportional to length, one per undirected edge",
    )
