"""CPU solvers: SciPy's Dijkstra (the reference) and the paper's sequential CPU versions of
Martín's and Crauser's parallel Dijkstra (numba).

>>> from sssp.cpu import solve_cpu
>>> result = solve_cpu(graph, 0, algorithm="crauser", variant="predecessors")  # doctest: +SKIP
"""

from __future__ import annotations

from ..errors import SSSPError
from ..graph import Graph
from ..result import ALGORITHMS, VARIANTS, SSSPResult
from .parallel import UNSETTLED, crauser, martin, parallel_dijkstra
from .reference import check_source, dijkstra

__all__ = [
    "UNSETTLED",
    "check_source",
    "crauser",
    "dijkstra",
    "martin",
    "parallel_dijkstra",
    "solve_cpu",
]


def solve_cpu(
    graph: Graph,
    source: int,
    *,
    algorithm: str = "crauser",
    variant: str = "successors",
) -> SSSPResult:
    """Solve SSSP from ``source`` on the CPU.

    Parameters
    ----------
    graph : Graph
    source : int
        In ``[0, graph.n)``.
    algorithm : {"dijkstra", "martin", "crauser"}
        ``"dijkstra"`` is SciPy's (exact, see :mod:`sssp.cpu.reference`); the other two are the
        paper's sequential versions (:mod:`sssp.cpu.parallel`).
    variant : {"successors", "predecessors"}
        For ``"dijkstra"`` only ``"successors"`` is accepted (it has no variants).

    Returns
    -------
    SSSPResult
        With ``backend="cpu"``.

    Raises
    ------
    SSSPError
        Unknown algorithm or variant.
    InvalidGraphError
        Source out of range, or weights too large for exact arithmetic.
    """
    if algorithm not in ALGORITHMS:
        raise SSSPError(f"unknown algorithm {algorithm!r}: expected one of {', '.join(ALGORITHMS)}")
    if variant not in VARIANTS:
        raise SSSPError(f"unknown variant {variant!r}: expected one of {', '.join(VARIANTS)}")
    if algorithm == "dijkstra":
        if variant != "successors":
            raise SSSPError(f"algorithm 'dijkstra' has no variant {variant!r}: use 'successors'")
        return dijkstra(graph, source)
    return parallel_dijkstra(graph, source, criterion=algorithm, variant=variant)  # type: ignore[arg-type]
