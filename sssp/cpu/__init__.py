"""CPU solvers: SciPy's Dijkstra (the reference), the paper's sequential CPU versions of
Martín's and Crauser's parallel Dijkstra (numba), and near-far Δ-stepping (numba), the reference
for a GPU near-far.

>>> from sssp.cpu import solve_cpu
>>> result = solve_cpu(graph, 0, algorithm="crauser", variant="predecessors")  # doctest: +SKIP
>>> result = solve_cpu(graph, 0, algorithm="near-far", delta=64)  # doctest: +SKIP
"""

from __future__ import annotations

from ..errors import InvalidArgumentError
from ..graph import Graph
from ..result import ALGORITHMS, VARIANTS, SSSPResult
from .nearfar import default_delta, near_far
from .parallel import UNSETTLED, crauser, martin, parallel_dijkstra
from .reference import check_source, dijkstra

__all__ = [
    "UNSETTLED",
    "check_source",
    "crauser",
    "default_delta",
    "dijkstra",
    "martin",
    "near_far",
    "parallel_dijkstra",
    "solve_cpu",
]


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
    InvalidGraphError
        Source out of range, or weights too large for exact arithmetic.
    """
    if algorithm not in ALGORITHMS:
        raise InvalidArgumentError(f"unknown algorithm {algorithm!r}: expected one of {', '.join(ALGORITHMS)}")
    if variant not in VARIANTS:
        raise InvalidArgumentError(f"unknown variant {variant!r}: expected one of {', '.join(VARIANTS)}")
    if delta is not None and algorithm != "near-far":
        raise InvalidArgumentError(f"delta applies to algorithm 'near-far' only, not {algorithm!r}")
    if algorithm in ("dijkstra", "near-far"):
        if variant != "successors":
            raise InvalidArgumentError(f"algorithm {algorithm!r} has no variant {variant!r}: use 'successors'")
        return dijkstra(graph, source) if algorithm == "dijkstra" else near_far(graph, source, delta=delta)
    return parallel_dijkstra(graph, source, criterion=algorithm, variant=variant)  # type: ignore[arg-type]
