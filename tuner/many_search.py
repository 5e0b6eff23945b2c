"""The many-source pick of a class (``tune engine``, after the class search): the batch kernel's
blocks per source and threads per block, scored by throughput.

``Solver.solve_many`` runs near-far's batch kernel (:func:`sssp.gpu.plan.plan_batch`) wherever
the class's pick runs near-far and the graph's distances fit a cluster's shared memory: each
cluster of a launch solves source after source, and the chip holds as many clusters at once as
its multiprocessors fit. Two structural choices set how many sources are in flight and how fast
each one goes: the blocks per source (``batch_cluster``: the fewest that hold the distances, or
two or four times that, each source then walked by more threads and fewer sources in flight) and
the threads per block (``batch_block``: 256, 512 or 1024, which with the kernel's registers and
shared memory sets the clusters a multiprocessor holds). The space is small, so every point is
measured.

A point's score is what a caller of ``solve_many`` waits for per source: the wall time of
:meth:`sssp.gpu.engine.EngineSolver.solve_rows` filling an int64 table of ``k`` rows (chunks
solved, copied back and copied in, :func:`batch_sources` sources: enough to fill the chip
several times over), median of :data:`REPEATS`, divided by ``k``; the device time of the same
batches is kept beside it, and every row is checked against SciPy's
``dijkstra(indices=...)``. The pick replaces the default (the fewest blocks, 1024 threads) by
the acceptance rule of every tuning (:func:`tuner.driver.accepts`), and goes into the class's
stored record (``LaunchConfig.batch_cluster``/``batch_block``) beside its single-source pick,
with the two throughputs (options ``many.*``).

Each class's many-source search is its own tuning run (kernel :data:`STUDY_KERNEL`), whose
strategy names the number of sources and the single-source configuration it was measured on:
a class whose single-source pick changes is searched again, and an interrupted search resumes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

import kernels
from sssp.classes import GraphClass
from sssp.errors import TuningError
from sssp.graph import Graph, iter_sources
from tuning_db import Store
from tuning_db.records import BestRecord, RunKey, RunRecord, RunStatus

from . import driver, interrupt
from .class_search import EngineOptions, engine_kernel_version
from .scoring import Trial

log = logging.getLogger(__name__)

STUDY_KERNEL = "engine-many"
"""What a many-source search's run and study are named after in place of a kernel."""
MARKER = "rows"
"""The user attribute of a measured trial (:meth:`tuner.scoring.Trial.attrs`)."""
BLOCKS = (256, 512, 1024)
"""Threads per block of the batch kernel that are searched (1024 is the default)."""
WIDENINGS = (1, 2, 4)
"""Blocks per source searched, as multiples of the fewest that hold the distances."""
TABLE_BYTES = 64 << 20
"""The int64 table a point fills: about this many bytes of rows, so that a batch is long enough
to fill the chip several times over and short enough to check against SciPy."""
MIN_SOURCES, MAX_SOURCES = 64, 1024
REPEATS = 3
"""Batches measured per point (after a warm-up batch); the score is their median."""
OPTION_PREFIX = "many."


def batch_sources(n: int) -> int:
    """Sources per measured batch on a graph of ``n`` nodes (:data:`TABLE_BYTES` of int64 rows,
    between :data:`MIN_SOURCES` and :data:`MAX_SOURCES`)."""
    return int(min(MAX_SOURCES, max(MIN_SOURCES, TABLE_BYTES // (8 * max(1, n)))))


def points(fit: int, largest: int) -> list[dict[str, int]]:
    """Every point of the space for a graph whose distances take ``fit`` blocks (``largest``:
    the biggest cluster the device launches), the default first. A point is
    ``{"batch_cluster": c, "batch_block": b}`` in :class:`sssp.config.LaunchConfig`'s terms:
    0 stands for the default (the fewest blocks; 1024 threads)."""
    clusters = [
        w * fit for w in WIDENINGS if w * fit <= largest and w * fit in kernels.CLUSTER_SIZES
    ]
    out = [
        canonical({"batch_cluster": c, "batch_block": b}, fit)
        for c in clusters
        for b in sorted(BLOCKS, reverse=True)
    ]
    return out


def canonical(point: dict[str, int], fit: int) -> dict[str, int]:
    """The stored form of a point: the fewest blocks and 1024 threads written as 0 (what an
    unset configuration runs)."""
    c, b = int(point["batch_cluster"]), int(point["batch_block"])
    return {
        "batch_cluster": 0 if c == fit else c,
        "batch_block": 0 if b == BLOCKS[-1] else b,
    }


def point_key(point: Mapping[str, Any]) -> tuple:
    return (int(point["batch_cluster"]), int(point["batch_block"]))


def point_label(point: dict[str, Any]) -> str:
    c, b = point_key(point)
    return f"{c or 'fewest'} blocks x {b or BLOCKS[-1]} threads"


def base_label(record: BestRecord) -> str:
    """A short digest of what the single-source pick of ``record`` runs (its configuration
    without the many-source choices, algorithm and Δ scale): the many-source search measured
    on it names it in its strategy."""
    config = dataclasses.replace(record.config, batch_cluster=0, batch_block=0)
    what = {
        "labels": config.as_dict(),
        "options": config.options(),
        "algorithm": record.chosen_algorithm,
        "delta_scale": record.delta_scale,
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:12]


def strategy_label(k: int, record: BestRecord) -> str:
    return f"rows/sources-{k}/base-{base_label(record)}"


class ManyScorer(Protocol):
    """What the search measures with (:class:`RowsScorer` on a GPU, :class:`RecordedRows` from
    a recorded run)."""

    @property
    def sources(self) -> tuple[int, ...]:
        """The measured batch's sources, in row order."""
        ...

    def layout(self) -> tuple[int, int] | str:
        """(fewest blocks that hold the distances, largest cluster the device launches), or why
        the batch kernel cannot run."""
        ...

    def __call__(self, point: dict[str, Any]) -> Trial: ...

    def compare(self, default: dict[str, Any], best: dict[str, Any]) -> tuple[Trial, ...]:
        """The final comparison: ``default`` and ``best`` measured in turn, :data:`ROUNDS`
        times each, as ``(default, best, default, best, ...)``."""
        ...


ROUNDS = 2
"""Rounds of the final comparison of the search's best with the default."""


def interleaved(
    scorer: Callable[[dict[str, Any]], Trial], default: dict[str, Any], best: dict[str, Any]
) -> tuple[Trial, ...]:
    """``default`` and ``best`` measured in turn, :data:`ROUNDS` times each."""
    return tuple(scorer(p) for _ in range(ROUNDS) for p in (default, best))


@dataclass
class RowsScorer:
    """Scores points by filling a table of rows on the GPU, each row checked against SciPy's."""

    graph: Graph
    record: BestRecord
    sources: tuple[int, ...]
    device: int
    reference: np.ndarray = field(repr=False)

    @classmethod
    def for_record(
        cls, graph: Graph, record: BestRecord, sources: list[int], device: int
    ) -> RowsScorer:
        from scipy.sparse.csgraph import dijkstra

        from sssp.cpu.reference import min_weight_csr
        from sssp.result import native_distances

        # Not graph.to_scipy(): csgraph converts integer weights to float64, which sums the
        # parallel edges of a multigraph (a Kronecker graph's) into one longer edge.
        ref = dijkstra(min_weight_csr(graph), directed=True, indices=np.asarray(sources))
        reference = native_distances(ref, graph.is_float)
        return cls(graph, record, tuple(sources), device, reference)

    def _solver(self, point: dict[str, Any]) -> Any:
        from sssp.cpu.nearfar import scaled_delta
        from sssp.gpu import make_solver

        config = dataclasses.replace(
            self.record.config,
            batch_cluster=int(point["batch_cluster"]),
            batch_block=int(point["batch_block"]),
        )
        return make_solver(
            self.graph,
            algorithm="near-far",
            variant=self.record.variant,
            config=config,
            device=self.device,
            delta=scaled_delta(self.graph, self.record.delta_scale or 1),
        )

    def layout(self) -> tuple[int, int] | str:
        try:
            with self._solver({"batch_cluster": 0, "batch_block": 0}) as solver:
                batch = solver.batch()
                if batch is None:
                    return str(solver.many_stats(False)["batch"])
                facts = solver.device_facts
                largest = kernels.CLUSTER_SIZES[-1] if facts.non_portable_clusters else 8
                return batch.plan.cluster, largest
        except Exception as err:  # the class's pick does not build here: nothing to search
            return f"{type(err).__name__}: {err}"

    def __call__(self, point: dict[str, Any]) -> Trial:
        sources = np.asarray(self.sources, dtype=np.int64)
        k = sources.size
        table = np.empty_like(self.reference)
        try:
            with self._solver(point) as solver:
                if solver.batch() is None:
                    return Trial(point, None, error=str(solver.many_stats(False)["batch"]))
                solver.solve_rows(sources, table)  # warm-up: the kernel loaded, stagings made
                walls, gpus = [], []
                for _ in range(REPEATS):
                    table.fill(-1)
                    t0 = time.perf_counter()
                    device_s = solver.solve_rows(sources, table)
                    walls.append(1e3 * (time.perf_counter() - t0) / k)
                    gpus.append(1e3 * device_s / k)
                    bad = np.flatnonzero((table != self.reference).any(axis=1))
                    if bad.size:
                        return Trial(
                            point, None, error=f"wrong distances from source {sources[bad[0]]}"
                        )
        except Exception as err:  # SSSPError, pycuda's LaunchError and friends: a failed point
            return Trial(point, None, error=f"{type(err).__name__}: {err}")
        return Trial(point, float(np.median(walls)), tuple(walls), tuple(gpus))

    def compare(self, default: dict[str, Any], best: dict[str, Any]) -> tuple[Trial, ...]:
        return interleaved(self, default, best)


@dataclass(frozen=True)
class RecordedRows:
    """Scores points from a recorded run's trials (no GPU): a point it lacks fails, saying so.
    The final comparison is the recorded one (``comparison``: the wall times per source of the
    default and of the best, in measured order, and the best's point)."""

    recorded: dict[tuple, Trial]
    fit: int
    largest: int
    sources: tuple[int, ...]
    source: str = "the recorded run"
    comparison: dict[str, Any] | None = None

    def layout(self) -> tuple[int, int] | str:
        return self.fit, self.largest

    def __call__(self, point: dict[str, Any]) -> Trial:
        found = self.recorded.get(point_key(point))
        if found is None:
            return Trial(dict(point), None, error=f"not measured in {self.source}")
        return dataclasses.replace(found, params=dict(point))

    def compare(self, default: dict[str, Any], best: dict[str, Any]) -> tuple[Trial, ...]:
        rec = self.comparison
        if rec is None:
            why = f"{self.source} holds no final comparison (measured before it was recorded)"
            return (Trial(dict(default), None, error=why),)
        if tuple(rec["best"]) != point_key(best):
            why = f"{self.source} compared {rec['best']} with the default, not {point_key(best)}"
            return (Trial(dict(best), None, error=why),)
        out = []
        for d_ms, b_ms in zip(rec["default_ms"], rec["best_ms"], strict=True):
            out += [Trial(dict(default), d_ms, (d_ms,)), Trial(dict(best), b_ms, (b_ms,))]
        return tuple(out)


@dataclass(frozen=True)
class ManyResult:
    """The search's pick, its throughput and the default's (ms per source, wall), measured
    interleaved after the search, and every trial."""

    best_point: dict[str, int]
    best_ms: float
    default_ms: float
    spread: float
    trials: tuple[Trial, ...]

    @property
    def accepted(self) -> bool:
        return driver.accepts(self.default_ms, self.best_ms, self.spread)


def study_trials(study: Any) -> list[Trial]:
    return [Trial.from_attrs(t.user_attrs[MARKER]) for t in driver.measured_trials(study, MARKER)]


def search(
    study: Any,
    scorer: ManyScorer,
    *,
    fit: int,
    largest: int,
    graph_class: GraphClass,
    on_ask: Callable[[Any], None] | None = None,
) -> ManyResult:
    """Measure every point of :func:`points` on ``study`` (a resumed study measures only what
    it lacks), then the best and the default interleaved, twice each.

    Raises
    ------
    TuningError
        No point ran, or the final comparison failed.
    """
    from optuna.distributions import CategoricalDistribution

    every = points(fit, largest)
    dists = {
        name: CategoricalDistribution(sorted({p[name] for p in every}))
        for name in ("batch_cluster", "batch_block")
    }
    driver.enqueue_new(study, every, point_key, MARKER)

    def measure(params: dict[str, Any]) -> driver.Measured:
        point = {name: int(value) for name, value in params.items()}
        trial = scorer(point)
        figures = (
            f"{trial.wall_ms:.4f} ms a source wall, {trial.gpu_median_ms or 0:.4f} ms gpu"
            if trial.wall_ms is not None
            else f"failed: {trial.error}"
        )
        log.info("%s: many sources, measured %s: %s", graph_class, point_label(point), figures)
        return driver.Measured(trial.wall_ms, {MARKER: trial.attrs()}, trial)

    driver.drive(
        study,
        dists,
        budget=len(every),
        key=point_key,
        measure=measure,
        marker=MARKER,
        on_ask=on_ask,
    )
    trials = study_trials(study)
    ok = [t for t in trials if t.wall_ms is not None]
    if not ok:
        raise TuningError(f"no batch configuration ran on {graph_class}: {trials[0].error}")
    best = min(ok, key=lambda t: t.wall_ms or 0.0)
    default = every[0]
    compared = scorer.compare(default, dict(best.params))
    failed = [t.error for t in compared if t.wall_ms is None]
    if failed:
        raise TuningError(f"the many-source comparison failed on {graph_class}: {failed[0]}")
    d = [float(t.wall_ms or 0.0) for t in compared[0::2]]
    b = [float(t.wall_ms or 0.0) for t in compared[1::2]]
    study.set_user_attr(
        "comparison", {"best": list(point_key(best.params)), "default_ms": d, "best_ms": b}
    )
    return ManyResult(
        best_point={k: int(v) for k, v in best.params.items()},
        best_ms=float(np.median(b)),
        default_ms=float(np.median(d)),
        spread=driver.aa_spread(d[0], d[1]),
        trials=tuple(trials),
    )


def without_pick(record: BestRecord) -> BestRecord:
    """``record`` without a many-source pick (its configuration's and its ``many.*`` options)."""
    config = dataclasses.replace(record.config, batch_cluster=0, batch_block=0)
    drop = ("batch_cluster", "batch_block")
    options = {
        k: v for k, v in record.options.items() if k not in drop and not k.startswith(OPTION_PREFIX)
    }
    return dataclasses.replace(record, config=config, options=options)


def with_pick(record: BestRecord, result: ManyResult, *, sources: int) -> BestRecord:
    """``record`` holding the many-source pick of ``result`` (its configuration's
    ``batch_cluster``/``batch_block``; when the default won, the search's pick as
    ``many.tuned_cluster``/``many.tuned_block``: the ``tuned.`` keys describe the class search's
    own pick) and the measured throughputs. The search's run is found by its key (class, kernels and
    :func:`strategy_label`), not by a database id, which an export and import would change."""
    base = without_pick(record)
    pick = result.best_point if result.accepted else {"batch_cluster": 0, "batch_block": 0}
    config = dataclasses.replace(
        base.config, batch_cluster=pick["batch_cluster"], batch_block=pick["batch_block"]
    )
    options: dict[str, Any] = {**base.options, **config.options()}
    if not result.accepted:
        c, b = point_key(result.best_point)
        options.update({f"{OPTION_PREFIX}tuned_cluster": c, f"{OPTION_PREFIX}tuned_block": b})
    options.update(
        {
            f"{OPTION_PREFIX}wall_ms_per_source": result.best_ms,
            f"{OPTION_PREFIX}default_wall_ms_per_source": result.default_ms,
            f"{OPTION_PREFIX}sources": sources,
            f"{OPTION_PREFIX}kept_default": int(not result.accepted),
        }
    )
    # A changed record is a newer one: an import keeps the newer of two records of a class.
    now = dt.datetime.now(dt.UTC)
    return dataclasses.replace(record, config=config, options=options, updated_at=now)


def carry_pick(old: BestRecord | None, new: BestRecord) -> BestRecord:
    """``new`` (a class search's record) with the many-source pick of ``old`` (the record it
    replaces) when both run the same single-source configuration: the pick was measured on
    it and stays valid."""
    if old is None or base_label(old) != base_label(new):
        return new
    kept = {k: v for k, v in old.options.items() if k.startswith(OPTION_PREFIX)}
    if not kept:
        return new
    config = dataclasses.replace(
        new.config, batch_cluster=old.config.batch_cluster, batch_block=old.config.batch_block
    )
    options = {**without_pick(new).options, **config.options(), **kept}
    return dataclasses.replace(new, config=config, options=options)


def recorded_run(
    store: Store, graph_class: GraphClass, opts: EngineOptions, base: str
) -> RunRecord:
    """The newest finished, measured many-source run of ``graph_class`` on the single-source
    configuration ``base`` (:func:`base_label`), for a replay.

    Raises
    ------
    TuningError
        There is none.
    """
    runs = [
        r
        for r in store.runs(graph_class=graph_class, status=RunStatus.FINISHED)
        if r.key.kernel == STUDY_KERNEL
        and not r.key.replay
        and (r.key.algorithm, r.key.variant) == (opts.algorithm, opts.variant)
        and r.seed == opts.seed
        and r.key.strategy.endswith(f"/base-{base}")
    ]
    if not runs:
        raise TuningError(
            f"no measured many-source run of {graph_class} on its single-source pick "
            f"(base {base}) in {store.url}; replay needs one (tune engine on a GPU)"
        )
    return runs[-1]


def recorded_scorer(store: Store, run: RunRecord) -> RecordedRows:

    study = store.recorded_study(run, STUDY_KERNEL)
    attrs = study.user_attrs
    try:
        fit, largest = int(attrs["fit"]), int(attrs["largest"])
        sources = tuple(int(s) for s in attrs["sources"])
    except (KeyError, TypeError, ValueError) as err:
        raise TuningError(f"the many-source run {run.id} lacks its layout: {err}") from err
    recorded = {point_key(t.params): t for t in study_trials(study)}
    return RecordedRows(
        recorded, fit, largest, sources, f"recorded run {run.id}", attrs.get("comparison")
    )


def tune_many(
    graph_class: GraphClass,
    opts: EngineOptions,
    *,
    store: Store,
    record: BestRecord,
    made: tuple[Graph, str] | None = None,
    claim: driver.Claim | None = None,
    scorer: ManyScorer | None = None,
) -> driver.TuneOutcome | None:
    """Search the many-source choices of ``graph_class`` on its stored ``record`` (the
    single-source pick), in a tuning run of its own, and store the record with the pick.

    Nothing is searched (``None``, the reason logged) when the pick does not run near-far (the
    batch kernel's algorithm), when the graph does not fit the batch kernel, when ``claim``
    gave the run to another worker or found it finished, or on a replay without a recorded
    run. ``scorer`` replaces the GPU (tests); ``made`` is the class instance and its label
    (:func:`tuner.workload.class_instance`) when the caller has them.
    """
    from .pipeline import device_record
    from .workload import class_instance

    interrupt.check()
    if record.chosen_algorithm != "near-far":
        log.info(
            "%s: many sources run %s's lanes (the batch kernel runs near-far): nothing to search",
            graph_class,
            record.chosen_algorithm,
        )
        return None
    base = base_label(record)
    if opts.replay:
        try:
            run_found = recorded_run(store, graph_class, opts, base)
        except TuningError as err:
            log.info("%s: %s", graph_class, err)
            return None
        device, version = run_found.key.device, run_found.key.kernel_version
        instance, strategy = run_found.key.instance, run_found.key.strategy
        measurer: ManyScorer = scorer or recorded_scorer(store, run_found)
    else:
        device, version = device_record(opts.device), engine_kernel_version()
        graph, instance = made or class_instance(graph_class, seed=opts.seed)
        if scorer is None:
            sources = list(iter_sources(graph, batch_sources(graph.n), seed=opts.seed + 31))
            scorer = RowsScorer.for_record(graph, record, sources, opts.device)
        measurer = scorer
        strategy = strategy_label(len(measurer.sources), record)
    layout = measurer.layout()
    if isinstance(layout, str):
        log.info(
            "%s: many sources without the batch kernel (%s): nothing to search", graph_class, layout
        )
        return None
    fit, largest = layout
    key = RunKey(
        device=device,
        kernel_version=version,
        graph_class=graph_class,
        algorithm=opts.algorithm,
        variant=opts.variant,
        kernel=STUDY_KERNEL,
        strategy=strategy,
        instance=instance,
        replay=opts.replay,
    )
    every = points(fit, largest)
    with driver.hold_run(store, key, budget=len(every), seed=opts.seed, claim=claim) as held:
        if held is None:
            return None
        run = held.run
        study = store.study(run, STUDY_KERNEL)
        for name, value in (
            ("sources", [int(s) for s in measurer.sources]),
            ("fit", fit),
            ("largest", largest),
        ):
            if name not in study.user_attrs:
                study.set_user_attr(name, value)
        ids = driver.TrialIds(store.storage, study)

        def on_ask(trial: Any) -> None:
            assert held.beat is not None
            held.beat.trial(None if trial is None else ids(trial))

        result = search(
            study, measurer, fit=fit, largest=largest, graph_class=graph_class, on_ask=on_ask
        )
        best = with_pick(record, result, sources=len(measurer.sources))
        if opts.replay:  # the many-source part was replayed: the record says so
            best = dataclasses.replace(best, replay=True)
        store.put_best(best)
    return driver.TuneOutcome(best, run.id, held.resumed, held.wall_seconds, len(result.trials))


def summary(best: BestRecord) -> str:
    """The many-source part of a class's line, or ``""`` when its record has none."""
    opts = best.options
    ms = opts.get(f"{OPTION_PREFIX}wall_ms_per_source")
    if ms is None:
        return ""
    c, b = best.config.batch_cluster, best.config.batch_block
    verdict = "kept the default" if int(opts.get(f"{OPTION_PREFIX}kept_default", 0)) else "stored"
    return (
        f"  many sources: {point_label({'batch_cluster': c, 'batch_block': b})}, "
        f"{float(ms):.4f} ms a source (default "
        f"{float(opts.get(f'{OPTION_PREFIX}default_wall_ms_per_source', 0.0)):.4f}, {verdict})"
    )
