"""One tuning run end to end: class instance -> workload -> per-kernel search and measurement ->
end-to-end check -> stored best configuration. Also its replay from recorded measurements."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

import kernels
from sssp.classes import GraphClass
from sssp.config import KERNELS, KernelConfig, LaunchConfig
from sssp.errors import TuningError
from sssp.graph import Graph, iter_sources
from tuning_db import Store, studies
from tuning_db.records import (
    BestRecord,
    DeviceRecord,
    KernelVersionRecord,
    RunKey,
    TrialRecord,
    TrialStatus,
)

from . import driver, measure
from .driver import TuneOutcome
from .search import OptunaStrategy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TuneOptions:
    kernels: tuple[str, ...] = KERNELS
    strategy: str = "exhaustive"
    budget: int | None = None
    scope: str = "extended"
    sources: int = 20
    capture_sources: int = 2
    states_per_source: int = 3
    repetitions: int = 5
    algorithm: str = "crauser"
    variant: str = "successors"
    seed: int = 0
    device: int = 0
    replay: bool = False


def private_cache_dir(*parts: str) -> Path:
    """A folder of this user's cache (``platformdirs`` user cache, mode 0700).

    Kernel Tuner trusts its cache files without re-measuring, so they must not sit where another
    user could plant one (as in a fixed folder under ``/tmp``).
    """
    root = Path(platformdirs.user_cache_dir("sssp-tune"))
    path = root.joinpath(*parts)
    try:
        for d in (root, path):
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = d.stat()
            if st.st_uid != os.getuid():
                raise TuningError(
                    f"cache folder {d} belongs to another user: set XDG_CACHE_HOME "
                    "to a folder of your own"
                )
            if st.st_mode & 0o077:
                os.chmod(d, 0o700)
    except OSError as err:
        raise TuningError(
            f"cannot use the cache folder {path}: {err.strerror}; set "
            "XDG_CACHE_HOME to a writable folder of your own"
        ) from err
    return path


def replay_workdir() -> Path:
    """A new private folder for one replay, named after this process; folders of processes that
    no longer exist (killed before they could clean up) are removed first."""
    root = private_cache_dir("replay")
    for old in root.glob("replay-*-*"):
        try:
            pid = int(old.name.split("-")[1])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except (ValueError, PermissionError):
            continue
    return Path(tempfile.mkdtemp(prefix=f"replay-{os.getpid()}-", dir=root))


def recorded_dir() -> Path:
    """Where the project ships recorded Kernel Tuner caches (package data)."""
    return Path(str(resources.files("tuning_db").joinpath("data")))


def cache_path(
    root: Path, digest: str, device_name: str, gc: GraphClass, kernel: str, opts: TuneOptions
) -> Path:
    """Kernel Tuner cache file of one kernel's search. Keyed by kernel sources and harness
    version too: Kernel Tuner trusts a cached entry without re-measuring or re-verifying it."""
    dev = device_name.replace(" ", "_")
    version = f"{digest}-h{measure.HARNESS_VERSION}"
    return (
        root
        / version
        / dev
        / f"{gc.size}-{gc.degree}-{opts.algorithm}-{opts.variant}-{opts.scope}-{kernel}.json"
    )


def device_record(ordinal: int) -> DeviceRecord:
    from sssp.gpu import device_info

    d = device_info(ordinal)
    return DeviceRecord(d.name, d.uuid, d.cc_string, d.sm_count, d.driver_version, d.cuda_version)


def best_kernel_config(trials: list[TrialRecord]) -> KernelConfig | None:
    ok = [
        (t.median_ms, i, t)
        for i, t in enumerate(trials)
        if t.status is TrialStatus.OK and t.median_ms is not None
    ]
    return min(ok)[2].config if ok else None


def end_to_end(graph: Graph, tuned: LaunchConfig, opts: TuneOptions) -> tuple[float, float, float]:
    """(default median ms, tuned median ms, A/A relative spread of the default) over
    ``opts.sources`` sources, default and tuned interleaved per source so drift hits both."""
    from sssp.gpu.runtime import GPUSolver

    sources = list(iter_sources(graph, opts.sources, seed=opts.seed + 17))
    with (
        GPUSolver(
            graph,
            algorithm=opts.algorithm,
            variant=opts.variant,
            config=LaunchConfig.paper(),
            device=opts.device,
        ) as d_solver,
        GPUSolver(
            graph, algorithm=opts.algorithm, variant=opts.variant, config=tuned, device=opts.device
        ) as t_solver,
    ):
        d_solver.solve(sources[0])
        t_solver.solve(sources[0])
        d1, d2, tt = [], [], []
        for s in sources:
            d1.append(d_solver.solve(s).timings["total"])
            tt.append(t_solver.solve(s).timings["total"])
            d2.append(d_solver.solve(s).timings["total"])
    m1, m2, mt = (1e3 * float(np.median(x)) for x in (d1, d2, tt))
    default = 0.5 * (m1 + m2)
    return default, mt, abs(m1 - m2) / default


def tune_class(
    graph_class: GraphClass,
    opts: TuneOptions,
    *,
    store: Store,
    cache_root: Path | None = None,
    graph: Graph | None = None,
    instance: str = "",
    progress: Callable[[str, TrialRecord], None] | None = None,
    claim: driver.Claim | None = None,
) -> TuneOutcome | None:
    """Tune relax, min and update for ``graph_class`` on this GPU (or replay recorded
    measurements with ``opts.replay``) and store the best configuration.

    ``claim`` (for workers sharing a database) takes the run of a key, or returns ``None`` when
    another worker holds it or it is done: then nothing is tuned and ``None`` is returned.
    Without it the newest unfinished run of the key that no live process holds (stored as
    interrupted, or its process stopped beating) is resumed, or a new one starts: concurrent
    plain ``tune`` commands each tune a run of their own.

    A partial run (``opts.kernels`` a subset) keeps the stored best configuration's picks for
    the other kernels; its figures are stored only when measured for that whole configuration.
    """
    from . import interrupt
    from .workload import capture, class_instance

    interrupt.check()  # a signal held back while the previous class was being stored
    t0 = time.perf_counter()
    digest = kernels.digest()
    replay_dir: Path | None = None
    if opts.replay:
        recorded = [
            r
            for r in store_recorded_bests()
            if r.graph_class == graph_class
            and r.algorithm == opts.algorithm
            and r.variant == opts.variant
        ]
        if not recorded:
            raise TuningError(
                f"no recorded measurements ship for class {graph_class} "
                f"({opts.algorithm}/{opts.variant}); replay needs them"
            )
        rec = recorded[0]
        device = rec.device
        digest = rec.kernel_version.digest
        # Kernel Tuner's simulation mode reads the cache files; work on a copy.
        replay_dir = replay_workdir()
        src_root = recorded_dir() / "kt_cache"
        try:  # an error or an interrupt (SIGTERM too) while copying leaves no folder behind
            for k in opts.kernels:
                src = cache_path(src_root, digest, device.name, graph_class, k, opts)
                if not src.exists():
                    raise TuningError(f"recorded Kernel Tuner cache {src} is missing")
                dst = cache_path(replay_dir, digest, device.name, graph_class, k, opts)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
        except BaseException:
            shutil.rmtree(replay_dir, ignore_errors=True)
            raise
        cache_root = replay_dir
    else:
        device = device_record(opts.device)
    cache_root = cache_root or private_cache_dir("kt-cache")

    if graph is None and not opts.replay:
        graph, instance = class_instance(graph_class, seed=opts.seed)
    instance = instance or (graph.name if graph is not None else f"class instance {graph_class}")
    key = RunKey(
        device=device,
        kernel_version=KernelVersionRecord(digest, " ".join(kernels.NVCC_OPTIONS)),
        graph_class=graph_class,
        algorithm=opts.algorithm,
        variant=opts.variant,
        kernel=",".join(opts.kernels),
        strategy=f"{opts.strategy}/{opts.scope}",
        instance=instance,
        replay=opts.replay,
    )
    unfinishable: TuningError | None = None
    outcome = None
    try:
        with driver.hold_run(store, key, budget=opts.budget, seed=opts.seed, claim=claim) as held:
            if held is None:
                return None
            run, resumed, owner = held.run, held.resumed, held.owner
            if resumed:
                log.info("resuming run %d (%d trials stored)", run.id, len(store.trials(run.id)))
            picks: dict[str, KernelConfig] = {}
            workload = None
            for kernel in opts.kernels:

                def on_trial(t: TrialRecord, kernel: str = kernel) -> None:
                    if progress:
                        progress(kernel, t)

                study = store.study(run, kernel)
                dists, _ = studies.search_space(kernel, opts.scope)
                ids = driver.TrialIds(store.storage, study)

                def write(
                    t: TrialRecord, trial: Any, params: dict, study=study, dists=dists, ids=ids
                ) -> bool:
                    return store.store_measurement(
                        study,
                        run.id,
                        t,
                        owner,
                        trial_id=ids(trial),
                        params=params,
                        dists=dists,
                    )

                def on_ask(trial: Any, ids=ids) -> None:
                    assert held.beat is not None
                    held.beat.trial(None if trial is None else ids(trial))

                strategy = OptunaStrategy(
                    kernel=kernel,
                    scope=opts.scope,
                    strategy=opts.strategy,
                    budget=opts.budget,
                    seed=run.seed,
                    study=study,
                    on_trial=on_trial,
                    on_ask=on_ask,
                    store=write,
                )
                if strategy.remaining():
                    if opts.replay:
                        dist_bits, weight_bits = kernels.widths_for(graph_class.nodes, 100)
                        problem = measure.replay_problem(
                            kernel,
                            graph_class.nodes,
                            algorithm=opts.algorithm,
                            variant=opts.variant,
                            dist_bits=dist_bits,
                            weight_bits=weight_bits,
                        )
                    else:
                        assert graph is not None  # made above unless replaying
                        if workload is None:
                            srcs = list(iter_sources(graph, opts.capture_sources, seed=run.seed))
                            workload = capture(
                                graph,
                                graph_class=graph_class,
                                instance=instance,
                                algorithm=opts.algorithm,
                                variant=opts.variant,
                                sources=srcs,
                                states_per_source=opts.states_per_source,
                                device=opts.device,
                            )
                        problem = measure.build_problem(workload, kernel)
                    measure.run_kernel_tuner(
                        problem,
                        strategy=strategy,
                        scope=opts.scope,
                        cache_file=cache_path(
                            cache_root, digest, device.name, graph_class, kernel, opts
                        ),
                        simulation=opts.replay,
                        repetitions=opts.repetitions,
                        device=opts.device,
                    )
                pick = best_kernel_config(store.trials(run.id, kernel))
                if pick is None:
                    raise TuningError(
                        f"no configuration of {kernel} ran correctly for {graph_class}"
                    )
                picks[kernel] = pick
            # The paper's kernels on their host loop: this pipeline characterises them (Table 1).
            default = LaunchConfig.paper()
            stored = store.best(device.uuid, digest, graph_class, opts.algorithm, opts.variant)
            # A partial re-tune completes the stored configuration, never replaces it by a partial one.
            base = stored.tuned_config if stored is not None else default
            relax, min_, update = (picks.get(k, base.kernel(k)) for k in KERNELS)
            tuned = LaunchConfig(relax, min_, update, loop="legacy")
            figures: tuple[float, float, float] | None
            if opts.replay:
                # The end-to-end timings cannot be replayed by Kernel Tuner: reuse the recorded ones,
                # and say so. They hold only for the configuration they were measured with.
                figures = (
                    (rec.default_median_ms, rec.tuned_median_ms, 0.0)
                    if tuned == rec.tuned_config
                    else None
                )
            else:
                assert graph is not None
                figures = end_to_end(graph, tuned, opts)
            if figures is None:
                log.warning(
                    "%s: no end-to-end figures were measured for %s (the recorded ones are for "
                    "%s): the stored best configuration is left unchanged",
                    graph_class,
                    tuned,
                    rec.tuned_config,
                )
                if stored is None:  # the run is finished all the same: nothing is left to do
                    unfinishable = TuningError(
                        f"{graph_class}: a partial replay ({', '.join(opts.kernels)}) has no "
                        f"recorded end-to-end figures for {tuned}, and the database holds "
                        "no configuration of this class to complete: replay all kernels"
                    )
                else:
                    outcome = stored
            else:
                d_ms, t_ms, spread = figures
                speedup = d_ms / t_ms
                kept_default = not driver.accepts(d_ms, t_ms, spread)
                best = BestRecord(
                    device=device,
                    kernel_version=key.kernel_version,
                    graph_class=graph_class,
                    algorithm=opts.algorithm,
                    variant=opts.variant,
                    config=default if kept_default else tuned,
                    tuned_config=tuned,
                    tuned_median_ms=t_ms,
                    default_median_ms=d_ms,
                    speedup=speedup,
                    n_sources=opts.sources if not opts.replay else rec.n_sources,
                    kept_default=kept_default,
                    replay=opts.replay,
                    run_id=run.id,
                    options=stored.options if stored is not None else {},
                )
                store.put_best(best)
                outcome = best
    finally:
        if replay_dir is not None:
            shutil.rmtree(replay_dir, ignore_errors=True)
    if unfinishable is not None:
        raise unfinishable
    assert outcome is not None
    wall = time.perf_counter() - t0
    return TuneOutcome(outcome, run.id, resumed, wall, len(store.trials(run.id)))


def summary(out: TuneOutcome) -> str:
    """One line of a class's outcome, for the command line."""
    b = out.best
    return f"{b.tuned_config}  speedup {b.speedup:.3f}x"


@cache
def store_recorded_bests() -> tuple[BestRecord, ...]:
    """Best configurations of the paper's kernels recorded in the shipped results (read once
    into a throwaway store; ``tune --replay --all`` asks for them once per class). Engine 2's
    shipped records come from end-to-end searches, which Kernel Tuner cannot replay."""
    data = recorded_dir()
    files = sorted(data.glob("*.json")) if data.exists() else []
    if not files:
        return ()
    with Store("sqlite://") as scratch:
        for f in files:
            scratch.import_json(f, trials=False)
        return tuple(r for r in scratch.all_best() if not r.replay and r.config.loop == "legacy")
