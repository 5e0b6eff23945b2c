"""The one result type every solver returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .config import ConfigSource, LaunchConfig
from .errors import InvalidArgumentError, InvalidTypeError

UNREACHABLE: int = int(np.iinfo(np.int64).max)
"""Distance of a node that cannot be reached from the source on a graph with integer weights
(``dist[v] == UNREACHABLE``); real-weighted graphs use ``inf``, and :attr:`SSSPResult.dist_float`
uses ``inf`` for both."""

ALGORITHMS = ("dijkstra", "martin", "crauser", "crauser-in", "crauser-inout", "near-far")
"""``crauser``: the OUT criterion; ``crauser-in``: the IN criterion; ``crauser-inout``: both;
``near-far``: Δ-stepping with Davidson et al.'s near-far piles."""
CPU_ONLY_ALGORITHMS = ("dijkstra",)
"""Algorithms without a GPU version: SciPy's Dijkstra (the reference)."""
GPU_ALGORITHMS = tuple(a for a in ALGORITHMS if a not in CPU_ONLY_ALGORITHMS)
"""What the GPU engine accepts."""
PHASED_ALGORITHMS = tuple(a for a in GPU_ALGORITHMS if a != "near-far")
"""The phase-synchronous algorithms (Crauser's criteria, Martín's): what the paper's loop, the
per-kernel tuner and the paper benchmarks accept. Near-far runs on engine 2's persistent loop."""
VARIANTS = ("successors", "predecessors")


@dataclass(frozen=True)
class SSSPResult:
    """Distances and shortest-path tree from one source.

    Attributes
    ----------
    dist : ndarray, int64 or float64, shape (n,)
        δ(v). On graphs with integer weights: int64, exact, :data:`UNREACHABLE` for nodes that
        cannot be reached. On graphs with real weights: float64, ``inf`` for those nodes.
        :attr:`dist_float` gives float64 with ``inf`` whatever the graph.
    pred : ndarray, int32, shape (n,)
        A predecessor on a shortest path; -1 for the source and unreached nodes.
    source : int
    algorithm : {"dijkstra", "martin", "crauser", "crauser-in", "crauser-inout", "near-far"}
    variant : {"successors", "predecessors"}
    backend : {"cpu", "gpu"}
    iterations : int
        Outer-loop steps (phases) of Martín/Crauser; near-far's relax steps (its threshold
        raises are ``stats["buckets"]``); for Dijkstra, the number of settled nodes.
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
            raise InvalidTypeError(
                f"dist must be int64 or float64 and pred int32, got {self.dist.dtype}, {self.pred.dtype}"
            )
        if self.dist.shape != self.pred.shape:
            raise InvalidArgumentError(
                f"dist and pred shapes differ: {self.dist.shape} vs {self.pred.shape}"
            )
        self.dist.flags.writeable = False
        self.pred.flags.writeable = False
        object.__setattr__(self, "timings", MappingProxyType(dict(self.timings)))
        object.__setattr__(self, "stats", MappingProxyType(dict(self.stats)))

    @property
    def is_float(self) -> bool:
        """True when the distances are real-valued (float64, ``inf`` for unreachable nodes)."""
        return self.dist.dtype == np.float64

    @property
    def reached(self) -> np.ndarray:
        """Boolean mask of reachable nodes."""
        return np.isfinite(self.dist) if self.is_float else self.dist != UNREACHABLE

    @property
    def dist_float(self) -> np.ndarray:
        """Distances as float64 with ``inf`` for unreachable nodes, the SciPy/NetworkX convention,
        whatever the graph's weight type.

        Returns
        -------
        ndarray, float64, shape (n,)
            Read-only. On integer graphs a new array: distances above 2**53 are rounded to the
            nearest float64 (``dist`` keeps them exact).
        """
        if self.is_float:
            return self.dist
        out = self.dist.astype(np.float64)
        out[self.dist == UNREACHABLE] = np.inf
        out.flags.writeable = False
        return out

    def path_to(self, target: int) -> list[int]:
        """Node sequence source → target along the predecessor tree; [] if unreachable.

        Raises
        ------
        InvalidTypeError
            ``target`` is not an integer (``1.5``, ``"3"``, ``True``).
        InvalidArgumentError
            ``target`` is outside ``[0, n)`` (a negative index would count from the end).
        """
        if isinstance(target, bool) or not isinstance(target, int | np.integer):
            raise InvalidTypeError(f"target must be an integer node index, got {target!r}")
        n = self.dist.size
        if not 0 <= target < n:
            raise InvalidArgumentError(f"target {int(target)} is out of range [0, {n})")
        if not self.reached[target]:
            return []
        path = [int(target)]
        while path[-1] != self.source:
            p = int(self.pred[path[-1]])
            if p < 0 or len(path) > self.dist.size:
                raise InvalidArgumentError(f"predecessor tree is broken at node {path[-1]}")
            path.append(p)
        return path[::-1]
