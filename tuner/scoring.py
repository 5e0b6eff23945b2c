"""How a class search (:mod:`tuner.class_search`) scores a point of the space
(:mod:`tuner.engine_space`): by whole solves on the GPU, each answer checked against SciPy's
(:class:`SolveScorer`), on several instances at once (:class:`CompositeScorer`), or from a
recorded run's measurements on a machine without a GPU (:class:`RecordedScorer`); and the
:class:`Trial` each of them returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sssp.config import LaunchConfig
from sssp.errors import TuningError
from sssp.graph import Graph, iter_sources

from . import driver
from .engine_space import choice, from_config, point_key, to_config


def representative_sources(graph: Graph, count: int, seed: int) -> list[int]:
    """``count`` seeded sources that each reach at least a quarter of what the best-reaching
    candidate reaches: on sparse random classes many nodes reach almost nothing, and a solve
    from them scores a configuration on no work at all."""
    from scipy.sparse.csgraph import breadth_first_order

    matrix = graph.to_scipy()
    candidates = list(iter_sources(graph, 4 * count, seed=seed))
    reach = {
        s: breadth_first_order(matrix, s, directed=True, return_predecessors=False).size
        for s in candidates
    }
    top = max(reach.values())
    good = [s for s in candidates if reach[s] >= top / 4]
    return good[:count]


MARKER = "solves"
"""The user attribute of a measured trial: its point and the figures of its solves
(:meth:`Trial.attrs`). A trial without it was never measured (see :func:`tuner.driver.drive`)."""


@dataclass(frozen=True)
class Trial:
    """One point of the space scored by whole solves over the class's sources.

    ``wall_ms`` (the objective) is the median of ``times_ms``, the wall time of each solve as a
    user waits for it (``SSSPResult.timings["wall"]``: initialisation, every phase, the copy
    back and the result's assembly); ``gpu_ms`` holds the CUDA-event time of the same solves
    beside it. A point that cannot run, or gives wrong distances, has ``wall_ms`` None and says
    why in ``error``.

    Scored on several instances (:class:`CompositeScorer`), ``parts`` holds each instance's
    (median wall ms, median CUDA-event ms), ``wall_ms`` is the geometric mean of their wall
    times, and ``times_ms`` / ``gpu_ms`` hold every solve of every instance in turn.
    """

    params: Mapping[str, Any]
    wall_ms: float | None
    times_ms: tuple[float, ...] = ()
    gpu_ms: tuple[float, ...] = ()
    phases: int = 0
    error: str = ""
    parts: tuple[tuple[float, float], ...] = ()

    def __post_init__(self) -> None:
        if self.wall_ms is None and not self.error:
            raise TuningError(f"a failed point {dict(self.params)} needs its reason")

    @property
    def gpu_median_ms(self) -> float | None:
        """The median CUDA-event time; over several instances the geometric mean of theirs."""
        if self.parts:
            return geometric_mean([gpu for _, gpu in self.parts])
        return float(np.median(self.gpu_ms)) if self.gpu_ms else None

    def attrs(self) -> dict[str, Any]:
        """The trial's user attribute :data:`MARKER` (JSON)."""
        return {
            "point": dict(self.params),
            "wall_ms": self.wall_ms,
            "times_ms": list(self.times_ms),
            "gpu_ms": list(self.gpu_ms),
            "phases": self.phases,
            "error": self.error,
            **({"parts": [list(p) for p in self.parts]} if self.parts else {}),
        }

    @classmethod
    def from_attrs(cls, attrs: Mapping[str, Any]) -> Trial:
        """The inverse of :meth:`attrs`."""
        try:
            return cls(
                dict(attrs["point"]),
                None if attrs["wall_ms"] is None else float(attrs["wall_ms"]),
                tuple(float(t) for t in attrs.get("times_ms", ())),
                tuple(float(t) for t in attrs.get("gpu_ms", ())),
                int(attrs.get("phases", 0)),
                str(attrs.get("error", "")),
                tuple((float(w), float(g)) for w, g in attrs.get("parts", ())),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise TuningError(
                f"a recorded class-search trial holds an invalid value: {err}"
            ) from err


Scorer = Callable[[dict[str, Any]], Trial]
"""``scorer(point)``: a canonical point of the searched space, scored (:class:`SolveScorer` on a
GPU, :class:`RecordedScorer` from recorded measurements)."""


def score(
    graph: Graph,
    config: LaunchConfig,
    sources: list[int],
    *,
    algorithm: str,
    variant: str,
    device: int,
    reference: dict[int, np.ndarray],
    delta_scale: float | None = None,
) -> Trial:
    """Median wall ms of ``config`` over ``sources`` (after one warm-up solve); an answer that
    differs from ``reference`` makes the trial fail (recorded, not raised). ``algorithm`` is the
    one that runs (not ``"auto"``); ``delta_scale`` near-far's Δ scale."""
    from sssp.gpu import make_solver

    point = from_config(config)
    extra = {}
    if algorithm == "near-far":
        point.update(algorithm=algorithm, delta_scale=delta_scale or 1)
        from sssp.cpu.nearfar import scaled_delta

        extra["delta"] = scaled_delta(graph, delta_scale or 1)
    try:
        with make_solver(
            graph, algorithm=algorithm, variant=variant, config=config, device=device, **extra
        ) as solver:
            ran = getattr(solver, "loop", config.loop)
            # Fused across blocks names a protocol, which runs across the grid where no cluster
            # holds the graph (sssp.gpu.plan): that is what the point names, so it is scored.
            across = config.fuse == 2 and getattr(solver, "grid_async", False)
            if ran != config.loop and not across:  # e.g. a cluster too small for the class
                return Trial(point, None, error=f"the {config.loop} loop ran as {ran} here")
            solver.solve(sources[0])
            times, gpu, phases = [], [], []
            for s in sources:
                r = solver.solve(s)
                if not np.array_equal(r.dist, reference[s]):
                    return Trial(point, None, error=f"wrong distances from source {s}")
                # The wall time, not the device's: a configuration fast on the GPU but slow to
                # deliver its result must not win.
                times.append(1e3 * r.timings["wall"])
                gpu.append(1e3 * r.timings["gpu"])
                phases.append(r.iterations)
    except Exception as err:  # SSSPError, pycuda's LaunchError and friends: a failed point
        return Trial(point, None, error=f"{type(err).__name__}: {err}")
    return Trial(point, float(np.median(times)), tuple(times), tuple(gpu), int(np.median(phases)))


@dataclass(frozen=True)
class SolveScorer:
    """Scores points by solving on the GPU (:func:`score`), each answer checked against SciPy's."""

    graph: Graph
    sources: tuple[int, ...]
    algorithm: str
    variant: str
    device: int
    reference: Mapping[int, np.ndarray] = field(repr=False)

    @classmethod
    def for_graph(
        cls, graph: Graph, sources: list[int], *, algorithm: str, variant: str, device: int
    ) -> SolveScorer:
        from sssp.cpu.reference import dijkstra

        # Every candidate's answer is checked against SciPy's, so no configuration (the
        # default included) can serve as the reference of the others.
        reference = {s: dijkstra(graph, s).dist for s in sources}
        return cls(graph, tuple(sources), algorithm, variant, device, reference)

    def __call__(self, point: dict[str, Any]) -> Trial:
        algo, scale = choice(point, self.algorithm)
        trial = score(
            self.graph,
            to_config(point),
            list(self.sources),
            algorithm=algo,
            variant=self.variant,
            device=self.device,
            reference=dict(self.reference),
            delta_scale=scale,
        )
        return dataclasses.replace(trial, params=dict(point))


def geometric_mean(values: Sequence[float]) -> float:
    """The geometric mean of positive ``values``: a composite score in which each instance's
    relative change counts alike, whatever its absolute time."""
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=np.float64)))))


@dataclass(frozen=True)
class CompositeScorer:
    """Scores a point on several instances (:func:`tuner.workload.class_instances`), one
    scorer each: the trial's ``wall_ms`` is the geometric mean of the instances' median wall
    times, ``parts`` keeps each one's. A point that fails on any instance fails, naming it."""

    parts: tuple[tuple[str, Scorer], ...]

    def __call__(self, point: dict[str, Any]) -> Trial:
        trials = []
        for label, part in self.parts:
            t = part(point)
            if t.wall_ms is None:
                return Trial(dict(point), None, error=f"on {label}: {t.error}")
            trials.append(t)
        walls = [float(t.wall_ms) for t in trials if t.wall_ms is not None]
        return Trial(
            dict(point),
            geometric_mean(walls),
            tuple(x for t in trials for x in t.times_ms),
            tuple(x for t in trials for x in t.gpu_ms),
            max(t.phases for t in trials),
            parts=tuple((w, t.gpu_median_ms or 0.0) for w, t in zip(walls, trials, strict=True)),
        )


@dataclass(frozen=True)
class RecordedScorer:
    """Scores points from recorded measurements (a measured run's trials), for machines without
    a GPU: a point the recording lacks is a failed point that says so."""

    recorded: Mapping[tuple, Trial]
    source: str = "the recorded run"

    @classmethod
    def from_trials(cls, trials: list[Trial], source: str = "the recorded run") -> RecordedScorer:
        return cls({point_key(t.params): t for t in trials}, source)

    def __call__(self, point: dict[str, Any]) -> Trial:
        found = self.recorded.get(point_key(point))
        if found is None:
            return Trial(dict(point), None, error=f"not measured in {self.source}")
        return dataclasses.replace(found, params=dict(point))


def study_trials(study: Any) -> list[Trial]:
    """The measured trials of a class search's study, in trial order."""
    return [Trial.from_attrs(t.user_attrs[MARKER]) for t in driver.measured_trials(study, MARKER)]
