"""CPU solvers: SciPy's Dijkstra (the reference), the paper's sequential CPU versions of
Martín's and Crauser's parallel Dijkstra (numba), and near-far Δ-stepping (numba), the reference
for a GPU near-far.

>>> from sssp.cpu import solve_cpu
>>> result = solve_cpu(graph, 0, algorithm="crauser", variant="predecessors")  # doctest: +SKIP
>>> result = solve_cpu(graph, 0, algorithm="near-far", delta=64)  # doctest: +SKIP
"""

from __future__ import annotations

from ..graph import Graph
from ..request import check_algorithm, check_delta_for, check_variant
from ..result import SSSPResult
from .nearfar import default_delta, near_far
from .parallel import UNSETTLED, crauser, martin, parallel_dijkstra
from .reference import FLOAT_EXACT_LIMIT, check_source, dijkstra

__all__ = [
    "NEAR_FAR_BATCH_WORKERS",
    "NEAR_FAR_MAX_DEGREE",
    "UNSETTLED",
    "check_source",
    "crauser",
    "default_algorithm",
    "default_delta",
    "dijkstra",
    "martin",
    "near_far",
    "parallel_dijkstra",
    "solve_cpu",
]


NEAR_FAR_MAX_DEGREE = 4.5
"""Below this mean out-degree near-far is the CPU default whatever the weights (see
:func:`default_algorithm`)."""

NEAR_FAR_BATCH_WORKERS = 2
"""From this many parallel workers on, a batch of sources runs near-far whatever the graph."""


def default_algorithm(graph: Graph, variant: str = "successors", *, workers: int = 1) -> str:
    """The CPU algorithm a solve runs when none is named: the faster exact one for the graph.

    near-far (Δ-stepping, :mod:`sssp.cpu.nearfar`) when every edge has the same weight
    (unweighted graphs), when the mean out-degree is below :data:`NEAR_FAR_MAX_DEGREE` (road
    networks, meshes, sparse random graphs), or when SciPy's float64 arithmetic would not be
    exact (integer weights with ``max_weight * n > 2**53``); SciPy's Dijkstra otherwise.
    The predecessors variant exists for the phased algorithms only, so
    ``variant="predecessors"`` keeps Crauser.

    The rule comes from one core's time per source (``benchmarks/cpu_default.py``, recorded in
    ``benchmarks/results/cpu/cpu_default_rule.csv``): on 85 graphs it costs 3.0 % on average
    over picking the faster of the two each time, and at most 30 % (always SciPy: 21 %,
    always near-far: 7.9 %). SciPy's Dijkstra wins on denser graphs with varied weights (by up
    to 1.8x at degree 200); near-far on unit weights (up to 3x) and on sparse ones (1.6x on
    the COL road network: 71 ms against 110 ms). The paper's Crauser (14 064 phases, 9-19 s
    per source on COL) stays an explicit choice.

    ``workers``: the solves a batch of sources runs at once (:class:`sssp.cpu.many.CPURows`).
    SciPy's Dijkstra holds the GIL and runs on one core whatever this is, near-far on all of
    them; near-far's one-core time is at most 1.8x SciPy's on the graphs above, and two worker
    threads ran it 1.5-2.5x faster than one on the idle 2-core development machine
    (``benchmarks/many_cpu.py``, ``benchmarks/results/cpu/many_cpu.csv``: 24 ms per source
    against SciPy's 56 ms at degree 200), so from :data:`NEAR_FAR_BATCH_WORKERS` workers on a
    batch runs near-far whatever the graph.
    """
    if variant == "predecessors":
        return "crauser"
    if workers >= NEAR_FAR_BATCH_WORKERS:
        return "near-far"
    f = graph.features()
    if graph.m == 0 or f.min_weight == f.max_weight or f.mean_degree < NEAR_FAR_MAX_DEGREE:
        return "near-far"
    if not graph.is_float and graph.max_weight * graph.n > FLOAT_EXACT_LIMIT:
        return "near-far"
    return "dijkstra"


def solve_cpu(
    graph: Graph,
    source: int,
    *,
    algorithm: str = "crauser",
    variant: str = "successors",
    delta: float | None = None,
) -> SSSPResult:
    """Solve SSSP from ``source`` on the CPU.

    Parameters
    ----------
    graph : Graph
    source : int
        In ``[0, graph.n)``.
    algorithm : {"dijkstra", "martin", "crauser", "crauser-in", "crauser-inout", "near-far"}
        ``"dijkstra"`` is SciPy's (exact, see :mod:`sssp.cpu.reference`); ``"near-far"`` is
        Δ-stepping with near and far piles (:mod:`sssp.cpu.nearfar`); the others are the paper's
        sequential versions (:mod:`sssp.cpu.parallel`).
    variant : {"successors", "predecessors"}
        For ``"dijkstra"`` and ``"near-far"`` only ``"successors"`` is accepted (they have no
        variants).
    delta : float, optional
        Near-far's bucket width Δ (> 0, ``inf`` allowed); default
        :func:`~sssp.cpu.nearfar.default_delta`, Davidson et al.'s 32 · mean weight / mean
        out-degree. Only for ``"near-far"``.

    Returns
    -------
    SSSPResult
        With ``backend="cpu"``.

    Raises
    ------
    InvalidArgumentError
        Unknown algorithm or variant, a variant the algorithm does not have (``"dijkstra"`` and
        ``"near-far"`` with ``"predecessors"``), ``delta`` given to another algorithm than
        near-far, or a ``delta`` that is not a positive number (a ``ValueError``;
        :class:`~sssp.errors.InvalidTypeError`, a ``TypeError``, for a ``delta`` that is not a
        number).
    InvalidTypeError
        ``source`` is not an integer node id (a ``TypeError``).
    InvalidGraphError
        Source out of range, or weights too large for exact arithmetic.

    The checks are :mod:`sssp.request`'s, worded as the front door words them.
    """
    # A public entry point of its own: the same checks, and words, as the front door's request.
    algorithm = check_algorithm(algorithm)
    variant = check_variant(variant, algorithm)
    delta = check_delta_for(algorithm, delta)
    if algorithm in ("dijkstra", "near-far"):
        return (
            dijkstra(graph, source)
            if algorithm == "dijkstra"
            else near_far(graph, source, delta=delta)
        )
    return parallel_dijkstra(graph, source, criterion=algorithm, variant=variant)  # type: ignore[arg-type]
