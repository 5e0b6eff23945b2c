"""The one result type every solver returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .config import ConfigSource, LaunchConfig

UNREACHABLE: int = int(np.iinfo(np.int64).max)
"""Distance of a node that cannot be reached from the source (``dist[v] == UNREACHABLE``)."""

ALGORITHMS = ("dijkstra", "martin", "crauser")
VARIANTS = ("successors", "predecessors")


@dataclass(frozen=True)
class SSSPResult:
    """Distances and shortest-path tree from one source.

    Attributes
    ----------
    dist : ndarray, int64 or float64, shape (n,)
        δ(v). int64 with :data:`UNREACHABLE` for unreachable nodes on integer graphs; float64
        with ``inf`` on graphs with real weights.
    pred : ndarray, int32, shape (n,)
        A predecessor on a shortest path; -1 for the source and unreached nodes.
    source : int
    algorithm : {"dijkstra", "martin", "crauser"}
    variant : {"successors", "predecessors"}
    backend : {"cpu", "gpu"}
    iterations : int
        Outer-loop steps (phases) of Martín/Crauser; for Dijkstra, the number of settled nodes.
    timings : mapping of str to float
        Seconds. Always has ``"total"``; the GPU adds ``"relax"``, ``"min"``, ``"update"`` and
        ``"pred"`` (CUDA-event times summed over iterations) when profiling is on.
    config : LaunchConfig or None
        The GPU kernels' configuration that ran (None on CPU backends).
    config_source : ConfigSource or None
        Why that configuration: explicit, tuned-exact, tuned-nearest or default.
    stats : mapping
        Extra measurements, e.g. ``"relax_active_share"`` (share of relax threads that had work,
        the paper's divergence statistic) and the L1 attributes read back from the driver.
    """

    dist: np.ndarray
    pred: np.ndarray
    source: int
    algorithm: str
    variant: str
    backend: str
    iterations: int
    timings: Mapping[str, float] = field(default_factory=dict)
    config: LaunchConfig | None = None
    config_source: ConfigSource | None = None
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.dist.dtype not in (np.int64, np.float64) or self.pred.dtype != np.int32:
            raise TypeError(f"dist must be int64 or float64 and pred int32, got {self.dist.dtype}, {self.pred.dtype}")
        if self.dist.shape != self.pred.shape:
            raise ValueError(f"dist and pred shapes differ: {self.dist.shape} vs {self.pred.shape}")
        self.dist.flags.writeable = False
        self.pred.flags.writeable = False
        object.__setattr__(self, "timings", MappingProxyType(dict(self.timings)))
        object.__setattr__(self, "stats", MappingProxyType(dict(self.stats)))

    @property
    def reached(self) -> np.ndarray:
        """Boolean mask of reachable nodes."""
        return np.isfinite(self.dist) & (self.dist != UNREACHABLE)

    def path_to(self, target: int) -> list[int]:
        """Node sequence source → target along the predecessor tree; [] if unreachable."""
        if not self.reached[target]:
            return []
        path = [int(target)]
        while path[-1] != self.source:
            p = int(self.pred[path[-1]])
            if p < 0 or len(path) > self.dist.size:
                raise ValueError(f"predecessor tree is broken at node {path[-1]}")
            path.append(p)
        return path[::-1]
