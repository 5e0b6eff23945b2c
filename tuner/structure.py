"""Tuning engine 2 end to end: loop mechanism, mapping and launch settings, scored by solve time.

Engine 2's kernels are short and their work depends on the phase, so per-kernel event times
measure launch latency rather than the kernel (the reason the paper-style characterisation kept
the default on every sparse class). Here every candidate is scored by what a user waits for: the
median CUDA-event time of whole solves (initialisation, every phase, predecessors, copy back)
over several sources of the class's graph, each answer checked against SciPy's distances. Optuna drives the search (TPE, seeded), with the default configuration enqueued first
so that a tuned result is never worse than the default by construction of the comparison.

The space (:data:`SPACE`): loop ("persistent", "graph", "host"), block size, L1 state (the
paper's per-kernel knob, applied to every kernel of the solve), lanes per node in relax (the
degree-aware mapping: 1 thread, a lane group or a whole warp per frontier node; nodes of more than
``SSSP_BIG_DEGREE`` edges are always walked by a whole block), blocks per multiprocessor and the
block-local phase limit of the persistent loop.

With ``algorithm="auto"`` (what ``solve(tuned=True)`` uses) the algorithm joins the space
(:data:`AUTO_SPACE`): Crauser OUT, Crauser IN+OUT or near-far, and near-far's Δ as a multiple of
its default rule (:func:`sssp.cpu.nearfar.default_delta`), so that the choice carries over to
every graph of the class rather than fitting one instance's weights.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import kernels
from sssp.config import KernelConfig, LaunchConfig
from sssp.errors import SSSPError, TuningError
from sssp.graph import Graph, iter_sources

from . import interrupt

log = logging.getLogger(__name__)

SPACE: dict[str, tuple] = {
    "loop": ("persistent", "graph", "host"),
    "block_size": (256, 512, 1024),
    "l1": ("N", "A", "S"),
    "lanes": (1, 2, 4, 8, 16, 32),
    "blocks_per_sm": (1, 2),
    "local_limit": (0, 2048, 8192, 32768),
}


AUTO_ALGORITHMS = ("crauser", "crauser-inout", "near-far")
DELTA_SCALES = (0.5, 1, 2, 4, 16, 64, 256)
CLUSTER_CHOICES = (0, 4, 16)
"""Cluster loop: the fewest blocks that hold the graph (0), or at least 4 or 16 (more threads to
walk a step's edges, more shared-memory round trips between blocks)."""
FUSE_CHOICES = (0, 1)
"""Cluster loop: nodes spread v % C with one cluster barrier per step (0), or in bands of a
bandwidth-reducing order with local rounds inside each block between the barriers (1)."""
AUTO_SPACE: dict[str, tuple] = {
    **SPACE,
    "loop": (*SPACE["loop"], "cluster"),
    "algorithm": AUTO_ALGORITHMS,
    "delta_scale": DELTA_SCALES,
    "cluster": CLUSTER_CHOICES,
    "fuse": FUSE_CHOICES,
}
"""The space of ``algorithm="auto"``: :data:`SPACE` plus the cluster loop, the algorithm,
near-far's Δ scale, the cluster's size and its fusion."""


def space_for(algorithm: str) -> dict[str, tuple]:
    if algorithm == "auto":
        return AUTO_SPACE
    if algorithm == "near-far":
        return {
            **SPACE,
            "loop": ("persistent", "cluster"),
            "delta_scale": DELTA_SCALES,
            "cluster": CLUSTER_CHOICES,
            "fuse": FUSE_CHOICES,
        }
    return SPACE


def canonical(p: dict) -> dict:
    """One representative of the points that run the same solve: near-far runs on the persistent
    or the cluster loop, the phase-synchronous algorithms on the other three and without Δ; the
    cluster loop has no blocks per multiprocessor, no block-local limit and fixed lanes
    (``kernels.CLUSTER_LANES``, its predecessor pass), and the cluster's size and fusion mean
    nothing to the other loops."""
    q = dict(p)
    nearfar = q.get("algorithm", "near-far" if "delta_scale" in q else None) == "near-far"
    if nearfar:
        if q["loop"] not in ("persistent", "cluster"):
            q["loop"] = "persistent"
    elif "algorithm" in q:
        q["delta_scale"] = 1
        if q["loop"] == "cluster":
            q["loop"] = "persistent"
    if q["loop"] == "cluster":
        q.update(lanes=kernels.CLUSTER_LANES, blocks_per_sm=1, local_limit=0)
    else:
        if "cluster" in q:
            q["cluster"] = 0
        if "fuse" in q:
            q["fuse"] = 0
    return q


def choice(p: dict, algorithm: str) -> tuple[str, float | None]:
    """(algorithm, Δ scale or None) a point runs, for the searched ``algorithm``."""
    algo = str(p.get("algorithm", algorithm))
    return algo, (float(p.get("delta_scale", 1)) if algo == "near-far" else None)


def to_config(p: dict) -> LaunchConfig:
    """A launch configuration from one point of :data:`SPACE`."""
    bs, l1 = int(p["block_size"]), str(p["l1"])
    return LaunchConfig(
        KernelConfig(bs, l1, int(p["lanes"])),
        KernelConfig(bs, l1),
        KernelConfig(bs, l1),
        loop=str(p["loop"]),
        blocks_per_sm=int(p["blocks_per_sm"]),
        local_limit=int(p["local_limit"]),
        cluster=int(p.get("cluster", 0)),
        fuse=p["loop"] == "cluster" and bool(int(p.get("fuse", 0))),
    )


def from_config(c: LaunchConfig) -> dict:
    """Inverse of :func:`to_config` (the cluster's size and fusion only for the cluster loop)."""
    point = {
        "loop": c.loop,
        "block_size": c.relax.block_size,
        "l1": c.relax.l1,
        "lanes": c.relax.lanes,
        "blocks_per_sm": c.blocks_per_sm,
        "local_limit": c.local_limit,
    }
    if c.loop == "cluster":
        point["cluster"] = c.cluster
        point["fuse"] = int(c.fuse)
    return point


DEFAULT_POINT = {
    "loop": "persistent",
    "block_size": 256,
    "l1": "N",
    "lanes": 1,
    "blocks_per_sm": 2,
    "local_limit": 2048,
}
"""LaunchConfig.default() as a point of the space (its local limit -1 means 8 x 256)."""

WARM_START = (
    {
        "loop": "persistent",
        "block_size": 1024,
        "l1": "N",
        "lanes": 4,
        "blocks_per_sm": 1,
        "local_limit": 8192,
    },
    {
        "loop": "persistent",
        "block_size": 1024,
        "l1": "N",
        "lanes": 32,
        "blocks_per_sm": 1,
        "local_limit": 0,
    },
    {
        "loop": "persistent",
        "block_size": 256,
        "l1": "N",
        "lanes": 4,
        "blocks_per_sm": 2,
        "local_limit": 8192,
    },
    {
        "loop": "graph",
        "block_size": 256,
        "l1": "N",
        "lanes": 32,
        "blocks_per_sm": 1,
        "local_limit": 0,
    },
)
"""Points measured well on the H200 across graph families (benchmarks/bench_engine.py): the
search starts from them and the default, then TPE explores."""

NEARFAR_WARM_START = tuple(
    {
        "loop": "cluster",
        "block_size": bs,
        "l1": "N",
        "lanes": kernels.CLUSTER_LANES,
        "blocks_per_sm": 1,
        "local_limit": 0,
        "algorithm": "near-far",
        "delta_scale": scale,
        "cluster": blocks,
        "fuse": fuse,
    }
    for bs, scale, blocks, fuse in (
        (1024, 1, 16, 0),
        (1024, 0.5, 0, 1),
        (1024, 2, 16, 0),
        (1024, 1, 0, 1),
        (1024, 0.5, 16, 0),
        (1024, 1, 0, 0),
    )
) + tuple(
    {
        "loop": "persistent",
        "block_size": 1024,
        "l1": "N",
        "lanes": lanes,
        "blocks_per_sm": 1,
        "local_limit": 8192,
        "algorithm": "near-far",
        "delta_scale": scale,
        "cluster": 0,
        "fuse": 0,
    }
    for lanes, scale in ((4, 16), (32, 16), (4, 64), (32, 256), (4, 1), (32, 4))
)
"""Near-far points measured well on the H200 (benchmarks/bench_nearfar.py), the cluster loop's
first (a 393k-node class's budget of 10 ran out before reaching them when they came last). On
the persistent loop sparse and mesh-like graphs favour Δ 16-256 times the default rule with 4
lanes, social and denser ones 32 lanes; on the cluster loop, whole blocks, 16 of them, and Δ
0.5-2 times the rule (its steps cost less, so fewer nodes pushed twice pays), and fused on FE
meshes (12-28 % less time than unfused on crack, fe_4elt2, fe_sphere, t60k; more on Delaunay
meshes, roads and random graphs: benchmarks/results/h200/nearfar_fused_run39.csv)."""


def start_points(algorithm: str) -> list[dict]:
    """The default first, then the warm start, as points of :func:`space_for` ``(algorithm)``."""
    if algorithm == "auto":  # the default, then near-far's (a budget smaller than the list still
        # measures the cluster loop), then Crauser's
        phased = [
            {**p, "algorithm": "crauser", "delta_scale": 1, "cluster": 0, "fuse": 0}
            for p in (DEFAULT_POINT, *WARM_START)
        ]
        return [phased[0], *NEARFAR_WARM_START, *phased[1:]]
    if algorithm == "near-far":
        return [{k: v for k, v in p.items() if k != "algorithm"} for p in NEARFAR_WARM_START]
    return [DEFAULT_POINT, *WARM_START]


def previous_point(record: Any, algorithm: str) -> dict | None:
    """The configuration a stored best record (``tuning_db.records.BestRecord``, typically of an
    older kernel version) runs, as a point of :func:`space_for` ``(algorithm)``; None when it
    does not belong to that space (another algorithm, a Δ scale or size the space lacks)."""
    space = space_for(algorithm)
    point = from_config(record.config)
    if algorithm == "auto":
        point["algorithm"] = str(record.options.get("algorithm", "crauser"))
    if "delta_scale" in space:
        point["delta_scale"] = record.options.get("delta_scale", 1)
    if "cluster" in space:
        point.setdefault("cluster", 0)
        point.setdefault("fuse", 0)
    if set(point) != set(space) or any(point[k] not in space[k] for k in space):
        return None
    if "algorithm" not in space and record.options.get("algorithm", algorithm) != algorithm:
        return None
    return canonical(point)


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


@dataclass
class Trial:
    params: dict
    median_ms: float | None
    times_ms: list[float]
    phases: int
    error: str = ""


@dataclass
class StructureResult:
    best: LaunchConfig
    best_ms: float
    default_ms: float
    trials: list[Trial] = field(default_factory=list)
    best_point: dict = field(default_factory=dict)

    @property
    def speedup(self) -> float:
        return self.default_ms / self.best_ms


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
    """Median end-to-end ms of ``config`` over ``sources`` (after one warm-up solve); an answer
    that differs from ``reference`` makes the trial fail (recorded, not raised). ``algorithm`` is
    the one that runs (not ``"auto"``); ``delta_scale`` near-far's Δ scale."""
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
            solver.solve(sources[0])
            times, phases = [], []
            for s in sources:
                r = solver.solve(s)
                if not np.array_equal(r.dist, reference[s]):
                    return Trial(point, None, [], 0, f"wrong distances from source {s}")
                # The wall time, not the device's: a configuration fast on the GPU but slow to
                # deliver its result must not win.
                times.append(1e3 * r.timings["wall"])
                phases.append(r.iterations)
    except (SSSPError, RuntimeError) as err:  # a configuration that cannot run is data
        return Trial(point, None, [], 0, f"{type(err).__name__}: {err}")
    except Exception as err:  # pycuda's LaunchError and friends: also a failed configuration
        return Trial(point, None, [], 0, f"{type(err).__name__}: {err}")
    return Trial(point, float(np.median(times)), times, int(np.median(phases)))


def search(
    graph: Graph,
    *,
    algorithm: str = "crauser",
    variant: str = "successors",
    budget: int = 40,
    sources: int = 5,
    seed: int = 0,
    device: int = 0,
    progress: Callable[[Trial], None] | None = None,
    storage: Any = None,
    study_name: str | None = None,
    study_attrs: dict[str, Any] | None = None,
    previous: dict | None = None,
) -> StructureResult:
    """Optuna (TPE) over :data:`SPACE`, the default configuration first; returns the best
    configuration, its time and the default's (re-measured interleaved with the best, so drift
    between the search and the comparison hits both).

    With ``storage`` (an Optuna storage, e.g. the tuning database's) the trials are kept there
    as the study ``study_name``, each with its per-source times, phases or failure; without it
    the study lives in memory.

    ``previous`` (a point, e.g. :func:`previous_point` of the class's stored best for older
    kernels) is measured right after the default, so that a re-tune after a kernel change with a
    small budget still measures what won before."""
    import optuna
    from optuna.distributions import CategoricalDistribution

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    from sssp.cpu.reference import dijkstra

    srcs = representative_sources(graph, sources, seed + 29)
    # Every candidate's answer is checked against SciPy's, so no configuration (the default
    # included) can serve as the reference of the others.
    reference: dict[int, np.ndarray] = {s: dijkstra(graph, s).dist for s in srcs}
    space = space_for(algorithm)
    dists = {k: CategoricalDistribution(list(v)) for k, v in space.items()}
    study = optuna.create_study(
        storage=storage,
        study_name=study_name,
        direction="minimize",
        sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=10),
    )
    for k, v in {**(study_attrs or {}), "graph": graph.name, "sources": srcs}.items():
        study.set_user_attr(k, v)
    starts = start_points(algorithm)
    if previous is not None:
        starts.insert(1, previous)
    for point in starts:
        study.enqueue_trial(point)
    trials: list[Trial] = []
    seen: set[tuple] = set()
    t0 = time.perf_counter()
    while len(trials) < budget:
        interrupt.check()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "heartbeat is supposed to be used with optimize"
            ask = study.ask(dists)
        point = canonical(ask.params)
        key = tuple(point[k] for k in space)
        if key in seen:
            study.tell(ask, state=optuna.trial.TrialState.PRUNED)
            continue
        seen.add(key)
        algo, scale = choice(point, algorithm)
        trial = score(
            graph,
            to_config(point),
            srcs,
            algorithm=algo,
            variant=variant,
            device=device,
            reference=reference,
            delta_scale=scale,
        )
        trial.params = point
        trials.append(trial)
        ask.set_user_attr("times_ms", trial.times_ms)
        ask.set_user_attr("phases", trial.phases)
        if trial.error:
            ask.set_user_attr("error", trial.error)
        if trial.median_ms is None:
            study.tell(ask, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(ask, trial.median_ms)
        if progress:
            progress(trial)
    ok = [t for t in trials if t.median_ms is not None]
    if not ok:
        raise TuningError(f"no engine configuration ran on {graph.name}")
    best = min(ok, key=lambda t: t.median_ms)
    best_cfg = to_config(best.params)
    best_algo, best_scale = choice(best.params, algorithm)
    # The comparison the result reports: best and default interleaved, fresh solvers. The
    # default of "auto" is Crauser OUT with the default configuration.
    default_point = start_points(algorithm)[0]
    default_cfg = to_config(default_point)
    default_algo, default_scale = choice(default_point, algorithm)
    d_trials, b_trials = [], []
    for _ in range(2):
        d_trials.append(
            score(
                graph,
                default_cfg,
                srcs,
                algorithm=default_algo,
                variant=variant,
                device=device,
                reference=reference,
                delta_scale=default_scale,
            )
        )
        b_trials.append(
            score(
                graph,
                best_cfg,
                srcs,
                algorithm=best_algo,
                variant=variant,
                device=device,
                reference=reference,
                delta_scale=best_scale,
            )
        )
    d = [t.median_ms for t in d_trials]
    b = [t.median_ms for t in b_trials]
    if None in d or None in b:
        failed = [t.error for t in (*d_trials, *b_trials) if t.median_ms is None]
        raise TuningError(f"the final comparison failed on {graph.name}: {failed[0]}")
    log.info(
        "structure search on %s: %d trials in %.1f s, best %s %s",
        graph.name,
        len(trials),
        time.perf_counter() - t0,
        best_algo,
        best_cfg,
    )
    return StructureResult(
        best_cfg, float(np.median(b)), float(np.median(d)), trials, dict(best.params)
    )


def tune_classes(
    classes: list,
    *,
    budget: int,
    sources: int,
    seed: int = 0,
    device: int = 0,
    algorithm: str = "crauser",
    variant: str = "successors",
    on_result: Callable[[dict], None] | None = None,
    storage: Any = None,
    previous: Callable[[Any], dict | None] | None = None,
) -> list[dict]:
    """Search every class of ``classes`` (``sssp.classes.GraphClass``) on its paper instance;
    returns one JSON-ready record per class (configuration labels, structural options, times).
    With ``storage`` each class's trials are kept as an Optuna study there
    (:func:`tuning_db.studies.structure_study_name`). ``previous(gc)`` gives a point to measure
    right after the default (:func:`search`), or None."""
    import datetime as dt

    from sssp.gpu import device_info
    from tuning_db.studies import structure_study_name

    from .workload import class_instance

    info = device_info(device)
    digest = kernels.digest(kernels.ENGINE_SOURCE_FILE)
    out = []
    for gc in classes:
        graph, instance = class_instance(gc, seed=seed)
        t0 = time.perf_counter()
        started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        name = structure_study_name(info.uuid, digest, str(gc), algorithm, variant, started)
        attrs = {
            "device": info.name,
            "device_uuid": info.uuid,
            "kernel_digest": digest,
            "graph_class": str(gc),
            "algorithm": algorithm,
            "variant": variant,
            "instance": instance,
            "budget": budget,
        }
        try:
            res = search(
                graph,
                algorithm=algorithm,
                variant=variant,
                budget=budget,
                sources=sources,
                seed=seed,
                device=device,
                storage=storage,
                study_name=name if storage is not None else None,
                study_attrs=attrs,
                previous=previous(gc) if previous else None,
            )
        except TuningError as err:  # one class that cannot be tuned must not lose the others
            log.error("class %s: %s", gc, err)
            continue
        rec = {
            "graph_class": str(gc),
            "instance": instance,
            "device": info.name,
            "uuid": info.uuid,
            "compute_capability": info.cc_string,
            "algorithm": algorithm,
            "variant": variant,
            "labels": res.best.as_dict(),
            "options": {**res.best.options(), **algorithm_options(res, algorithm)},
            "tuned_median_ms": res.best_ms,
            "default_median_ms": res.default_ms,
            "speedup": res.speedup,
            "n_sources": sources,
            "trials": len(res.trials),
            "failed": sum(t.median_ms is None for t in res.trials),
            "failures": sorted({t.error for t in res.trials if t.median_ms is None})[:5],
            "phases": min((t.phases for t in res.trials if t.median_ms is not None), default=0),
            "wall_seconds": time.perf_counter() - t0,
            "study": name if storage is not None else None,
        }
        out.append(rec)
        if on_result:
            on_result(rec)
    return out


def algorithm_options(res: StructureResult, algorithm: str) -> dict:
    """What a record of an ``"auto"`` (or near-far) search stores beside the launch options: the
    algorithm it chose and, for near-far, the Δ scale."""
    if algorithm not in ("auto", "near-far"):
        return {}
    algo, scale = choice(res.best_point, algorithm)
    return {"algorithm": algo, **({"delta_scale": scale} if scale is not None else {})}


def to_best(rec: dict, device: Any) -> Any:
    """A :class:`tuning_db.records.BestRecord` from one search record: engine 2's kernel version,
    the searched configuration with its structural options, or the default when the search did
    not beat it by more than the noise floor (the same rule as the per-kernel tuning)."""
    import kernels
    from sssp.classes import GraphClass
    from tuning_db.records import BestRecord, KernelVersionRecord

    from .pipeline import NOISE_FLOOR

    searched = LaunchConfig.from_parts(rec["labels"], rec["options"])
    kept_default = not rec["speedup"] > 1.0 + NOISE_FLOOR
    chosen = _default_config(rec["algorithm"]) if kept_default else searched
    return BestRecord(
        device=device,
        kernel_version=KernelVersionRecord(
            kernels.digest(kernels.ENGINE_SOURCE_FILE), " ".join(kernels.NVCC_OPTIONS)
        ),
        graph_class=GraphClass.from_text(rec["graph_class"]),
        algorithm=rec["algorithm"],
        variant=rec["variant"],
        config=chosen,
        tuned_config=searched,
        tuned_median_ms=float(rec["tuned_median_ms"]),
        default_median_ms=float(rec["default_median_ms"]),
        speedup=float(rec["speedup"]),
        n_sources=int(rec["n_sources"]),
        kept_default=kept_default,
        replay=False,
        # The search's own structural picks ride along (prefixed) when the default is kept.
        options=_stored_options(rec, chosen, searched, kept_default),
    )


def _default_config(algorithm: str) -> LaunchConfig:
    """The configuration a search compared against: the default one, or for near-far alone its
    first start point."""
    return (
        to_config(start_points("near-far")[0])
        if algorithm == "near-far"
        else LaunchConfig.default()
    )


def _stored_options(
    rec: dict, chosen: LaunchConfig, searched: LaunchConfig, kept_default: bool
) -> dict:
    """The stored record's options: the chosen configuration's, its algorithm choice (records of
    "auto": Crauser OUT when the default is kept), and the search's own picks, prefixed
    ``tuned.``, when the default is kept."""
    picked = {k: v for k, v in rec["options"].items() if k in ("algorithm", "delta_scale")}
    if not kept_default:
        return {**chosen.options(), **picked}
    default_algo = {}
    if rec["algorithm"] in ("auto", "near-far"):  # what the search compared against
        algo, scale = choice(start_points(rec["algorithm"])[0], rec["algorithm"])
        default_algo = {"algorithm": algo, **({"delta_scale": scale} if scale is not None else {})}
    tuned = {f"tuned.{k}": v for k, v in {**searched.options(), **picked}.items()}
    return {**chosen.options(), **default_algo, **tuned}
