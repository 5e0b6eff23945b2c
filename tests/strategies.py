"""Hypothesis strategies for :class:`sssp.Graph` inputs, shared by the test modules.

The graphs are small and deliberately awkward: disconnected parts, nodes without out-edges
(sinks), parallel edges with different weights, self-loops, zero weights (so zero-weight
cycles) and many equal weights (so distance ties).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sssp import Graph

__all__ = ["graph_and_source", "graphs"]


@st.composite
def graphs(
    draw: st.DrawFn,
    *,
    min_n: int = 1,
    max_n: int = 12,
    max_m: int = 40,
    max_weight: int = 10,
    zero_weights: bool = True,
    real: bool = False,
) -> Graph:
    """A random directed :class:`Graph`.

    Parameters
    ----------
    min_n, max_n : int
        Node count range (``min_n >= 1``).
    max_m : int
        Most edges drawn before parallel copies are added (up to ``max_m // 4`` more).
    max_weight : int
        Largest weight. Weights are drawn either from ``[lo, max_weight]`` or, half the time,
        from a tiny range so that distance ties are common.
    zero_weights : bool
        Whether weight 0 may occur (``lo = 0``; else ``lo = 1``).
    real : bool
        Real weights: float64 or float32 graphs whose weights are arbitrary floats in
        ``[lo, max_weight]`` or, half the time, a few dyadic values (exact sums, so ties) or
        values such as 0.1 whose sums round (so the order of additions matters).

    Returns
    -------
    Graph
        ``n`` in ``[min_n, max_n]``; weights int32 (float64/float32 when ``real``).
    """
    n = draw(st.integers(min_n, max_n))
    lo = 0 if zero_weights else 1
    hi = draw(st.sampled_from(sorted({max(lo, min(lo + 2, max_weight)), max(lo, max_weight)})))
    m = draw(st.integers(0, max_m))
    node = st.integers(0, n - 1)
    # Confine edges to a random subset of "active" sources: the rest become sinks, and with few
    # edges the graph falls apart into disconnected pieces.
    active = draw(st.lists(node, min_size=1, max_size=n, unique=True))
    src = draw(st.lists(st.sampled_from(active), min_size=m, max_size=m))
    dst = draw(st.lists(node, min_size=m, max_size=m))
    if real:
        weight = draw(
            st.sampled_from(
                [
                    st.floats(lo, max_weight, allow_nan=False, allow_infinity=False),
                    st.sampled_from([float(lo), 0.5, 0.25, 1.0, 1.5]),
                    st.sampled_from([0.1, 0.2, 0.3, 0.7, 1e-9]),
                ]
            )
        )
        wdtype = draw(st.sampled_from([np.float64, np.float32]))
    else:
        weight = st.integers(lo, hi)
        wdtype = np.int64
    w = draw(st.lists(weight, min_size=m, max_size=m))
    if m and draw(st.booleans()):
        # Parallel copies of some edges, with their own weights.
        k = draw(st.integers(1, max(1, max_m // 4)))
        picks = draw(st.lists(st.integers(0, m - 1), min_size=k, max_size=k))
        src += [src[i] for i in picks]
        dst += [dst[i] for i in picks]
        w += draw(st.lists(weight, min_size=k, max_size=k))
    if n and draw(st.booleans()):
        # A self-loop or two.
        for v in draw(st.lists(node, min_size=1, max_size=2)):
            src.append(v)
            dst.append(v)
            w.append(draw(weight))
    return Graph.from_edges(
        n,
        np.asarray(src, dtype=np.int64),
        np.asarray(dst, dtype=np.int64),
        np.asarray(w, dtype=wdtype),
        name="hypothesis",
    )


@st.composite
def graph_and_source(draw: st.DrawFn, **kwargs: int | bool) -> tuple[Graph, int]:
    """A graph from :func:`graphs` (``kwargs`` are passed on) and a source node in ``[0, n)``."""
    g = draw(graphs(**kwargs))
    s = draw(st.integers(0, g.n - 1))
    return g, s
