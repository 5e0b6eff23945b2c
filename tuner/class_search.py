"""The class search: a graph class's structural choices for engine 2 (``tune engine``), scored by
whole solves; what ``solve(tuned=True)`` runs.

Engine 2's kernels are short and their work depends on the phase, so per-kernel event times
measure launch latency rather than the kernel (the reason the paper-style characterisation kept
the default on every sparse class). Here every candidate point is scored by what a user waits
for: the median wall time of whole solves (``SSSPResult.timings["wall"]``: initialisation, every
phase, predecessors, the copy back and the result), with the CUDA-event time of the same solves
kept beside it, over several sources of the class's instance, each answer checked against
SciPy's distances. A class of several instances (:func:`tuner.workload.class_instances`: a
road and a grid for deg2 high-diameter classes) scores a point by the geometric mean of its
median wall time on each (:class:`tuner.scoring.CompositeScorer`). The tuning driver
(:mod:`tuner.driver`) runs the search: a tuning run per class (resumed after an interrupt,
shared by workers), Optuna's TPE (seeded) with the default enqueued first, and the acceptance
rule of every tuning for the stored record.

The space and its starting points are :mod:`tuner.engine_space`'s, the scorers and their
trials :mod:`tuner.scoring`'s; this module runs the search, picks among its finalists and stores
the result.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import kernels
from sssp.classes import GraphClass
from sssp.config import LaunchConfig
from sssp.errors import TuningError
from sssp.graph import Graph
from sssp.tuned import TunedFallback
from tuning_db import Store
from tuning_db.records import (
    BestRecord,
    DeviceRecord,
    KernelVersionRecord,
    RunKey,
    RunRecord,
    RunStatus,
    fallback_options,
)

from . import driver, interrupt
from .engine_space import (
    canonical,
    choice,
    point_key,
    point_label,
    previous_point,
    space_for,
    start_points,
    to_config,
)
from .scoring import (
    MARKER,
    CompositeScorer,
    RecordedScorer,
    Scorer,
    SolveScorer,
    Trial,
    representative_sources,
    study_trials,
)

log = logging.getLogger(__name__)
STUDY_KERNEL = "engine"
"""What a class search's run and study are named after in place of a kernel
(:class:`~tuning_db.records.RunKey` ``kernel``, :func:`tuning_db.studies.study_name`)."""
FINALISTS = 3
"""The best distinct points by their trial, each measured :data:`FINAL_ROUNDS` times more, in
turn, before the pick (:func:`pick_finalist`). A trial is one measurement (the median over the
class's sources), and on the device hosts a whole measurement can be several times off: a mesh
class's search on an H100 (run 187) measured one point at 0.524 ms between neighbours at
0.08-0.11, and its pick's re-measure at 0.344 ms against its trial's 0.111."""
FINAL_ROUNDS = 2
"""Measurements of each finalist after its trial (:data:`FINALISTS`)."""
FINALS_ATTR = "finals"
"""The study's user attribute holding the finalists' measurements (:func:`pick_finalist`), so
that a resumed search or a replay reads them back instead of measuring again."""


def strategy_label(sources: int) -> str:
    """The run key's strategy of a class search over ``sources`` sources: trials scored on
    another number of sources are another search, and never share a study."""
    return f"tpe/sources-{sources}"


@dataclass(frozen=True)
class SearchResult:
    """What a class search found: the best point, its time and the default's (measured
    interleaved after the search), and every trial of the run."""

    graph_class: GraphClass
    algorithm: str
    """The searched algorithm (``"auto"``: the algorithm is part of the point)."""
    variant: str
    best_point: Mapping[str, Any]
    best_ms: float
    default_ms: float
    spread: float
    """A/A spread of the default's two measurements (:func:`tuner.driver.aa_spread`)."""
    n_sources: int
    trials: tuple[Trial, ...] = ()

    @property
    def best(self) -> LaunchConfig:
        return to_config(dict(self.best_point))

    @property
    def speedup(self) -> float:
        return self.default_ms / self.best_ms

    @property
    def accepted(self) -> bool:
        """Whether the search's pick replaces the default (:func:`tuner.driver.accepts`)."""
        return driver.accepts(self.default_ms, self.best_ms, self.spread)

    def chosen(self) -> tuple[str, float | None]:
        """(algorithm, Δ scale or None) of the best point."""
        return choice(dict(self.best_point), self.algorithm)


def search(
    study: Any,
    scorer: Scorer,
    *,
    graph_class: GraphClass,
    algorithm: str = "crauser",
    variant: str = "successors",
    budget: int = 40,
    n_sources: int = 5,
    seed: int = 0,
    previous: dict | None = None,
    progress: Callable[[Trial], None] | None = None,
    on_ask: Callable[[Any], None] | None = None,
) -> SearchResult:
    """Search :func:`space_for` ``(algorithm)`` on ``study`` until it holds ``budget`` measured
    points (:func:`tuner.driver.drive`, Optuna's TPE, seeded), pick among the best by measuring
    them again (:func:`pick_finalist`), then measure the pick and the default interleaved, twice
    each, so that drift between the search and the comparison hits both; returns the typed
    result.

    The default is enqueued first, then ``previous`` (e.g. :func:`previous_point` of the class's
    stored best for older kernels, so that a re-tune with a small budget still measures what won
    before), then the warm start. A study that holds measurements already (a resumed run) keeps
    them: nothing it measured is measured again, and its queue is not enqueued twice.

    Raises
    ------
    TuningError
        No point ran, or the final comparison failed.
    """
    import optuna
    from optuna.distributions import CategoricalDistribution

    space = space_for(algorithm)
    dists = {k: CategoricalDistribution(list(v)) for k, v in space.items()}
    starts = start_points(algorithm, graph_class)
    if previous is not None:
        starts.insert(1, previous)
    driver.enqueue_new(study, starts, point_key, MARKER)
    done = len(driver.measured_trials(study, MARKER))
    study.sampler = optuna.samplers.TPESampler(seed=seed + done, n_startup_trials=10)
    t0 = time.perf_counter()

    def measure(params: dict[str, Any]) -> driver.Measured:
        point = canonical(params)
        trial = scorer(point)
        figures = (
            f"{trial.wall_ms:.3f} ms wall, {trial.gpu_median_ms or 0:.3f} ms gpu"
            if trial.wall_ms is not None
            else f"failed: {trial.error}"
        )
        if trial.parts:  # each instance's, behind their geometric means
            figures += " (" + "; ".join(f"{w:.3f} / {g:.3f}" for w, g in trial.parts) + ")"
        log.info("%s: measured %s: %s", graph_class, point_label(point, algorithm), figures)
        return driver.Measured(trial.wall_ms, {MARKER: trial.attrs()}, trial)

    def on_result(params: dict[str, Any], measured: driver.Measured) -> None:
        if progress:
            progress(measured.detail)

    driver.drive(
        study,
        dists,
        budget=budget,
        key=point_key,
        measure=measure,
        marker=MARKER,
        on_ask=on_ask,
        on_result=on_result,
    )
    trials = study_trials(study)
    ok = [t for t in trials if t.wall_ms is not None]
    if not ok:
        raise TuningError(f"no engine configuration ran on {graph_class}")
    best = pick_finalist(study, scorer, ok, graph_class=graph_class, algorithm=algorithm)
    # The comparison the result reports: best and default interleaved. The default of "auto" is
    # Crauser OUT with the default configuration.
    default_point = canonical(start_points(algorithm)[0])
    d_trials, b_trials = [], []
    for _ in range(2):
        d_trials.append(scorer(default_point))
        b_trials.append(scorer(canonical(dict(best.params))))
    failed = [t.error for t in (*d_trials, *b_trials) if t.wall_ms is None]
    if failed:
        raise TuningError(f"the final comparison failed on {graph_class}: {failed[0]}")
    d = [float(t.wall_ms) for t in d_trials if t.wall_ms is not None]
    b = [float(t.wall_ms) for t in b_trials if t.wall_ms is not None]
    log.info(
        "class search on %s: %d trials (%.1f s this session), best %s",
        graph_class,
        len(trials),
        time.perf_counter() - t0,
        point_label(best.params, algorithm),
    )
    return SearchResult(
        graph_class=graph_class,
        algorithm=algorithm,
        variant=variant,
        best_point=dict(best.params),
        best_ms=float(np.median(b)),
        default_ms=float(np.median(d)),
        spread=driver.aa_spread(d[0], d[1]),
        n_sources=n_sources,
        trials=tuple(trials),
    )


def _final_key(point: Mapping[str, Any]) -> str:
    return json.dumps([list(kv) for kv in point_key(point)])


def pick_finalist(
    study: Any, scorer: Scorer, ok: list[Trial], *, graph_class: GraphClass, algorithm: str
) -> Trial:
    """The search's pick: of the :data:`FINALISTS` best points by their trial, each
    measured :data:`FINAL_ROUNDS` times more in turn (so that drift hits them alike), the least
    median of its trial and those measurements. A finalist that fails a measurement (a wrong
    answer, an error) is out. The measurements are kept in ``study`` (:data:`FINALS_ATTR`,
    milliseconds by point, None for a failure) and read back where present: a resumed search
    measures only what it lacks, a replay (:class:`tuner.scoring.RecordedScorer`) reads the recorded run's.

    Raises
    ------
    TuningError
        Every finalist failed a measurement.
    """
    # A study measures each point once (tuner.driver.drive), so its best trials are distinct.
    finalists = sorted(ok, key=lambda t: t.wall_ms or 0.0)[:FINALISTS]
    kept = study.user_attrs.get(FINALS_ATTR)
    measured: dict[str, list[float | None]] = {
        k: list(v) for k, v in (kept if isinstance(kept, dict) else {}).items()
    }
    for r in range(FINAL_ROUNDS):
        for t in finalists:
            runs = measured.setdefault(_final_key(t.params), [])
            if len(runs) > r:
                continue
            again = scorer(canonical(dict(t.params)))
            runs.append(again.wall_ms)
            study.set_user_attr(FINALS_ATTR, measured)
            if again.wall_ms is None:
                log.warning(
                    "%s: finalist %s failed a measurement: %s",
                    graph_class,
                    point_label(t.params, algorithm),
                    again.error,
                )
    scored: list[tuple[float, Trial]] = []
    for t in finalists:
        runs = measured[_final_key(t.params)][:FINAL_ROUNDS]
        if any(ms is None for ms in runs):
            continue
        ms = float(np.median([t.wall_ms, *runs]))
        log.info(
            "%s: finalist %s: %.3f ms (trial %.3f, again %s)",
            graph_class,
            point_label(t.params, algorithm),
            ms,
            t.wall_ms,
            ", ".join(f"{x:.3f}" for x in runs if x is not None),
        )
        scored.append((ms, t))
    if not scored:
        raise TuningError(f"every finalist of {graph_class} failed a measurement")
    return min(scored, key=lambda p: p[0])[1]


MANY_MODES = ("search", "skip", "only")


@dataclass(frozen=True)
class EngineOptions:
    """What ``tune engine`` searches, and how (the class search's :class:`TuneOptions`)."""

    algorithm: str = "auto"
    variant: str = "successors"
    budget: int = 30
    sources: int = 5
    seed: int = 0
    device: int = 0
    replay: bool = False
    """Score points from the measured runs of the same class in the database (no GPU)."""
    many: str = "search"
    """The many-source choices (:mod:`tuner.many_search`): ``"search"`` them after the class
    search, ``"skip"`` them, or search ``"only"`` them, on the class's stored record."""

    def __post_init__(self) -> None:
        from sssp.result import GPU_ALGORITHMS

        if self.many not in MANY_MODES:
            raise TuningError(
                f"many-source mode {self.many!r} is invalid: use one of {', '.join(MANY_MODES)}"
            )

        if self.algorithm not in ("auto", *GPU_ALGORITHMS):
            raise TuningError(
                f"unknown algorithm {self.algorithm!r} for the class search: expected auto or "
                f"one of {', '.join(GPU_ALGORITHMS)}"
            )
        if self.budget < 1 or self.sources < 1:
            raise TuningError(f"budget {self.budget} and sources {self.sources} must be positive")


def engine_kernel_version() -> KernelVersionRecord:
    return KernelVersionRecord(
        kernels.digest(kernels.ENGINE_SOURCE_FILE), " ".join(kernels.NVCC_OPTIONS)
    )


@dataclass(frozen=True)
class Recorded:
    """A measured class-search run to replay: its key's device and kernels, its trials and its
    finalists' measurements (:data:`FINALS_ATTR`; None where the run predates them)."""

    run: RunRecord
    sources: tuple[int, ...]
    trials: tuple[Trial, ...]
    finals: dict[str, Any] | None = None


def recorded_run(store: Store, graph_class: GraphClass, opts: EngineOptions) -> Recorded:
    """The newest finished, measured class-search run of ``graph_class`` (the algorithm,
    variant, seed and number of sources of ``opts``) in ``store``, for a replay.

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
        and r.key.strategy == strategy_label(opts.sources)
    ]
    if not runs:
        raise TuningError(
            f"no measured class-search run of {graph_class} ({opts.algorithm}/{opts.variant}, "
            f"seed {opts.seed}, {opts.sources} sources) in {store.url}; replay needs one "
            "(tune engine on a GPU)"
        )
    run = runs[-1]
    study = store.recorded_study(run, STUDY_KERNEL)
    attrs = study.user_attrs
    return Recorded(
        run, tuple(attrs.get("sources", ())), tuple(study_trials(study)), attrs.get(FINALS_ATTR)
    )


def tune_class(
    graph_class: GraphClass,
    opts: EngineOptions,
    *,
    store: Store,
    claim: driver.Claim | None = None,
    scorer: Scorer | None = None,
    progress: Callable[[Trial], None] | None = None,
    many_scorer: Any = None,
) -> driver.TuneOutcome | None:
    """Search ``graph_class`` (its paper instance) in a tuning run and store the best record;
    then, with ``opts.many == "search"``, its many-source choices on that record
    (:func:`tuner.many_search.tune_many`, a run of its own; ``"only"``: just those, on the
    class's stored record).

    The run (:func:`tuner.driver.hold_run`, key: device, engine kernels, class, algorithm,
    variant, instance) holds the search's Optuna study: an interrupted search resumes where it
    stopped, measuring nothing twice; ``claim`` shares classes between workers. ``scorer``
    replaces the GPU (tests); with ``opts.replay`` points are scored from the class's measured
    run in ``store`` (:func:`recorded_run`). The stored best record is the search's pick when it
    passes :func:`tuner.driver.accepts`, else the default with the pick beside it. Returns
    ``None`` when ``claim`` gave the run to another worker or found it finished.
    """
    from . import many_search
    from .pipeline import device_record
    from .workload import class_instances, instance_label

    interrupt.check()
    if opts.many == "only":
        return _tune_many_only(graph_class, opts, store=store, claim=claim, scorer=many_scorer)
    made: list[tuple[Graph, str]] = []
    recorded: Recorded | None = None
    if opts.replay:
        recorded = recorded_run(store, graph_class, opts)
        device, version = recorded.run.key.device, recorded.run.key.kernel_version
        instance, sources = recorded.run.key.instance, list(recorded.sources)
        scorer = scorer or RecordedScorer.from_trials(
            list(recorded.trials), f"recorded run {recorded.run.id}"
        )
    else:
        device, version = device_record(opts.device), engine_kernel_version()
        made = class_instances(graph_class, seed=opts.seed)
        instance = instance_label(made)
        sources = []
    key = RunKey(
        device=device,
        kernel_version=version,
        graph_class=graph_class,
        algorithm=opts.algorithm,
        variant=opts.variant,
        kernel=STUDY_KERNEL,
        strategy=strategy_label(opts.sources),
        instance=instance,
        replay=opts.replay,
    )
    with driver.hold_run(store, key, budget=opts.budget, seed=opts.seed, claim=claim) as held:
        if held is None:
            return None
        run = held.run
        study = store.study(run, STUDY_KERNEL)
        if held.resumed:
            log.info(
                "resuming run %d of %s (%d configurations measured)",
                run.id,
                graph_class,
                len(driver.measured_trials(study, MARKER)),
            )
        if made:
            picked = [representative_sources(g, opts.sources, run.seed + 29) for g, _ in made]
            sources = picked[0]
            if scorer is None:
                parts = [
                    (
                        label,
                        SolveScorer.for_graph(
                            g, src, algorithm=opts.algorithm, variant=opts.variant,
                            device=opts.device,
                        ),
                    )
                    for (g, label), src in zip(made, picked, strict=True)
                ]  # fmt: skip
                scorer = parts[0][1] if len(parts) == 1 else CompositeScorer(tuple(parts))
            if len(made) > 1 and "instance_sources" not in study.user_attrs:
                study.set_user_attr("instance_sources", [[int(s) for s in p] for p in picked])
        if "sources" not in study.user_attrs:  # the first instance's
            study.set_user_attr("sources", [int(s) for s in sources])
        if recorded is not None and recorded.finals and FINALS_ATTR not in study.user_attrs:
            study.set_user_attr(FINALS_ATTR, recorded.finals)  # the replay's finalists
        assert scorer is not None

        ids = driver.TrialIds(store.storage, study)

        def on_ask(trial: Any) -> None:
            assert held.beat is not None
            held.beat.trial(None if trial is None else ids(trial))

        result = search(
            study,
            scorer,
            graph_class=graph_class,
            algorithm=opts.algorithm,
            variant=opts.variant,
            budget=opts.budget,
            n_sources=len(sources) or opts.sources,
            seed=run.seed,
            previous=previous_best(store, device.name, graph_class, opts),
            progress=progress,
            on_ask=on_ask,
        )
        best = to_best(result, device, kernel_version=version, run_id=run.id, replay=opts.replay)
        old = store.best(device.uuid, version.digest, graph_class, opts.algorithm, opts.variant)
        best = many_search.carry_pick(old, best)  # measured on the same single-source pick
        store.put_best(best)
    outcome = driver.TuneOutcome(best, run.id, held.resumed, held.wall_seconds, len(result.trials))
    if opts.many == "search":
        many = many_search.tune_many(
            graph_class,
            opts,
            store=store,
            record=best,
            made=made[0] if made else None,  # the first instance's
            claim=claim,
            scorer=many_scorer,
        )
        if many is not None:
            outcome = dataclasses.replace(outcome, best=many.best)
    return outcome


def _tune_many_only(
    graph_class: GraphClass,
    opts: EngineOptions,
    *,
    store: Store,
    claim: driver.Claim | None,
    scorer: Any,
) -> driver.TuneOutcome | None:
    """``tune engine --many-sources only``: the many-source search on the class's stored
    record of these kernels on this GPU model (the newest), none when there is none."""
    from . import many_search
    from .pipeline import device_record

    if opts.replay:
        name = None
    else:
        name = device_record(opts.device).name
    digest = engine_kernel_version().digest
    mine = [
        r
        for r in store.all_best(device_name=name)
        if (r.algorithm, r.variant) == (opts.algorithm, opts.variant)
        and r.graph_class == graph_class
        and r.kernel_version.digest == digest
    ]
    if not mine:
        log.warning(
            "%s: no stored %s/%s record of kernels %s%s: the many-source search needs the "
            "class's single-source pick (tune engine)",
            graph_class,
            opts.algorithm,
            opts.variant,
            digest,
            f" for {name}" if name else "",
        )
        return None
    record = max(mine, key=lambda r: r.updated_at)
    return many_search.tune_many(
        graph_class, opts, store=store, record=record, claim=claim, scorer=scorer
    )


def previous_best(
    store: Store, device_name: str, graph_class: GraphClass, opts: EngineOptions
) -> dict | None:
    """The point of the class's latest stored best record on this GPU model (any kernel
    version), so that a re-tune measures what won before right after the default; None when
    there is none or it lies outside the searched space."""
    mine = [
        r
        for r in store.all_best(device_name=device_name)
        if (r.algorithm, r.variant) == (opts.algorithm, opts.variant)
        and r.config.loop != "legacy"
        and r.graph_class == graph_class
    ]
    if not mine:
        return None
    latest = max(mine, key=lambda r: r.updated_at)
    point = previous_point(latest, opts.algorithm)
    if point is not None:
        log.info(
            "class %s: measuring the stored best of kernels %s after the default",
            graph_class,
            latest.kernel_version.digest,
        )
    return point


def summary(out: driver.TuneOutcome) -> str:
    """One line of a class's outcome, for the command line."""
    b = out.best
    verdict = "kept the default" if b.kept_default else "stored"
    picked = str(b.options.get("tuned.algorithm", b.options.get("algorithm", b.algorithm)))
    scale = b.options.get("tuned.delta_scale", b.options.get("delta_scale"))
    if scale is not None:
        picked += f" delta x{float(scale):g}"
    from .many_search import summary as many_summary

    return (
        f"default {b.default_median_ms:.3f} ms  searched {b.tuned_median_ms:.3f} ms  "
        f"({b.speedup:.2f}x, {verdict})  {picked}  {b.tuned_config}{many_summary(b)}"
    )


def to_best(
    result: SearchResult,
    device: DeviceRecord,
    *,
    kernel_version: KernelVersionRecord | None = None,
    run_id: int | None = None,
    replay: bool = False,
) -> BestRecord:
    """The best record of a search: engine 2's kernel version, the searched configuration with
    its structural options, or the default when the search's pick does not pass
    :func:`tuner.driver.accepts` (the rule of every tuning)."""
    searched = result.best
    kept_default = not result.accepted
    chosen = _default_config(result.algorithm) if kept_default else searched
    return BestRecord(
        device=device,
        kernel_version=kernel_version or engine_kernel_version(),
        graph_class=result.graph_class,
        algorithm=result.algorithm,
        variant=result.variant,
        config=chosen,
        tuned_config=searched,
        tuned_median_ms=result.best_ms,
        default_median_ms=result.default_ms,
        speedup=result.speedup,
        n_sources=result.n_sources,
        kept_default=kept_default,
        replay=replay,
        run_id=run_id,
        # The search's own structural picks ride along (prefixed) when the default is kept.
        options=_stored_options(result, chosen, searched, kept_default),
    )


def algorithm_options(point: Mapping[str, Any], algorithm: str) -> dict:
    """What a record of an ``"auto"`` (or near-far) search stores beside the launch options for
    ``point``: the algorithm it runs and, for near-far, the Δ scale."""
    if algorithm not in ("auto", "near-far"):
        return {}
    algo, scale = choice(dict(point), algorithm)
    return {"algorithm": algo, **({"delta_scale": scale} if scale is not None else {})}


def _default_config(algorithm: str) -> LaunchConfig:
    """The configuration a search compared against: the default one, or for near-far alone its
    first start point."""
    return (
        to_config(start_points("near-far")[0])
        if algorithm == "near-far"
        else LaunchConfig.default()
    )


def _fallback(result: SearchResult, chosen: LaunchConfig) -> dict:
    """For a pick on the phast loop, the options that store its fallback
    (:func:`tuning_db.records.fallback_options`): the fastest measured point of the search on
    another loop, which runs while the graph's hierarchy is not built. Nothing for other picks,
    or where no such point was measured."""
    if chosen.loop != "phast":
        return {}
    others = [
        t
        for t in result.trials
        if t.wall_ms is not None and canonical(dict(t.params))["loop"] != "phast"
    ]
    if not others:
        return {}
    best = min(others, key=lambda t: t.wall_ms or math.inf)
    point = canonical(dict(best.params))
    algo, scale = choice(point, result.algorithm)
    return fallback_options(TunedFallback(to_config(point), algo, scale, best.wall_ms))


def _stored_options(
    result: SearchResult, chosen: LaunchConfig, searched: LaunchConfig, kept_default: bool
) -> dict:
    """The stored record's options: the chosen configuration's, its algorithm choice (records of
    "auto": Crauser OUT when the default is kept), and the search's own picks, prefixed
    ``tuned.``, when the default is kept."""
    picked = algorithm_options(result.best_point, result.algorithm)
    if not kept_default:
        return {**chosen.options(), **picked, **_fallback(result, chosen)}
    default_algo = algorithm_options(start_points(result.algorithm)[0], result.algorithm)
    tuned = {f"tuned.{k}": v for k, v in {**searched.options(), **picked}.items()}
    return {**chosen.options(), **default_algo, **tuned}
