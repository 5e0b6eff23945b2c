"""Which GPU solver runs a launch configuration: the top of the GPU layer (it imports both
solvers; neither imports it)."""

from __future__ import annotations

from typing import Any

from ..config import LaunchConfig
from ..graph import Graph


def make_solver(
    graph: Graph,
    *,
    config: LaunchConfig | None = None,
    sync_every: int | None = None,
    **kwargs: Any,
) -> Any:
    """The solver for ``config.loop``: engine 2 (:class:`sssp.gpu.engine.EngineSolver`) for the
    persistent, graph, host, cluster and wide loops, :class:`sssp.gpu.runtime.GPUSolver` for the
    paper's legacy loop (each module imported when asked for)."""
    config = config or LaunchConfig.default()
    extra: dict[str, Any] = {} if sync_every is None else {"sync_every": sync_every}
    if config.loop == "legacy":
        from .runtime import GPUSolver

        return GPUSolver(graph, config=config, **extra, **kwargs)
    from .engine import EngineSolver

    return EngineSolver(graph, config=config, **extra, **kwargs)
