"""A NetworkX backend: NetworkX's Dijkstra functions solved by sssp.

Installed with the package (entry points ``networkx.backends`` and ``networkx.backend_info``,
name ``"sssp"``)::

    nx.single_source_dijkstra_path_length(G, 0, backend="sssp")
    nx.config.backend_priority.algos = ["sssp"]     # or NETWORKX_BACKEND_PRIORITY=sssp

The implementation is :mod:`sssp.nxbackend.interface`. NetworkX calls :func:`get_info` while
it is being imported, so this module imports nothing of its own; loading it still runs the
``sssp`` package's ``__init__`` (NumPy and the package's light modules: about 0.25 s on an idle
machine), while SciPy, numba and the solvers load at the first call.
"""

from __future__ import annotations

FUNCTIONS = (
    "all_pairs_dijkstra",
    "all_pairs_dijkstra_path",
    "all_pairs_dijkstra_path_length",
    "bidirectional_dijkstra",
    "dijkstra_path",
    "dijkstra_path_length",
    "dijkstra_predecessor_and_distance",
    "multi_source_dijkstra",
    "multi_source_dijkstra_path",
    "multi_source_dijkstra_path_length",
    "single_source_dijkstra",
    "single_source_dijkstra_path",
    "single_source_dijkstra_path_length",
)
"""The NetworkX functions the backend implements."""

_DOCS = (
    "Solved by sssp (GPU engine when there is one, else the CPU's faster of near-far and "
    "SciPy's Dijkstra). Negative or non-numeric weights, and a callable weight returning "
    "anything but non-negative numbers or None, run NetworkX's own implementation instead. "
    "Among equal shortest paths the path (or predecessor) may differ from NetworkX's."
)


def get_info() -> dict:
    """The ``networkx.backend_info`` entry point: what NetworkX shows and configures."""
    return {
        "backend_name": "sssp",
        "project": "sssp-tune",
        "package": "sssp-tune",
        "short_summary": "Dijkstra's shortest paths on sssp's tuned GPU engine or parallel CPU solvers.",
        "functions": {name: {"additional_docs": _DOCS} for name in FUNCTIONS},
        # nx.config.backends.sssp.backend: "auto" (the GPU when usable), "cpu" or "gpu".
        "default_config": {"backend": "auto"},
    }
