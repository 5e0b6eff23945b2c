"""Optuna as the search of a kernel's launch configurations, plugged into Kernel Tuner as a
user-defined strategy: the driver's ask/tell loop (:func:`tuner.driver.drive`) with Kernel
Tuner's runner as the measurement.

``exhaustive`` measures every point of the space, in a seeded random order (every point is
enqueued in the study, ``study.enqueue_trial``: the paper's space is small, and a random order
keeps drift during the run from lining up with block size); ``tpe`` samples it with TPE under
a budget. The study is the run's named study in the tuning database (Optuna's RDB storage), so
the trials are the record of what was measured: a measured configuration is told to the study
with Kernel Tuner's result as user attributes before the next one is asked for. An interrupted
run resumes from its study; a trial that a killed worker left running is failed by Optuna's
stale-trial check and measured again.

A measured configuration is stored through ``store`` (:meth:`tuning_db.Store.store_measurement`:
a running trial, the configuration's slot in the run, the finished trial), which refuses a
second measurement of a configuration in a run and stops a process whose run was taken over.
Those writes happen with signals held (:func:`tuner.driver.drive`), so that an interrupt cannot cut
them apart.
"""

from __future__ import annotations

import itertools
import logging
import random
from collections.abc import Callable
from typing import Any

from sssp.errors import TuningError
from tuning_db import studies
from tuning_db.records import TrialRecord, TrialStatus

from . import driver, space

log = logging.getLogger(__name__)

STRATEGIES = ("exhaustive", "tpe")
_KT_FIELDS = (
    "weighted_ms",
    "rep_ms",
    "state_ms",
    "time",
    "times",
    "compile_time",
    "verification_time",
    "benchmark_time",
    "framework_time",
    "strategy_time",
)


def classify(result: dict) -> TrialStatus:
    """Status of one Kernel Tuner result, by error type (never by message text)."""
    from kernel_tuner.util import CompilationFailedConfig, InvalidConfig, RuntimeFailedConfig

    err = result.get("__error__")
    if isinstance(err, CompilationFailedConfig):
        return TrialStatus.COMPILE_FAILED
    if isinstance(err, RuntimeFailedConfig):
        return TrialStatus.LAUNCH_FAILED
    if isinstance(err, InvalidConfig) or err is not None:
        return TrialStatus.INVALID
    if result.get("verified", 1) == 0:
        return TrialStatus.WRONG_RESULT
    return TrialStatus.OK


def _json_value(v: Any) -> Any:
    if isinstance(v, bool | int | str) or v is None:
        return v
    if isinstance(v, float):
        return v if v == v and abs(v) != float("inf") else None
    if isinstance(v, list | tuple):
        return [_json_value(x) for x in v]
    return str(v)


def to_trial(kernel: str, params: dict, result: dict) -> TrialRecord:
    status = classify(result)
    times = tuple(float(t) for t in result.get("rep_ms", ())) if status is TrialStatus.OK else ()
    return TrialRecord(
        kernel=kernel,
        config=space.to_config(params),
        status=status,
        times_ms=times,
        applied_l1=str(result.get("applied_l1", "")),
        message=str(result.get("verify_message", "") or result.get("__error__", "") or ""),
        measurements={k: _json_value(result[k]) for k in _KT_FIELDS if k in result},
    )


def queue_exhaustive(
    study: Any, grid: dict[str, list], key: Callable[[dict[str, Any]], tuple], seed: int
) -> int:
    """Make ``study`` an exhaustive search of ``grid``: every point it has neither measured nor
    holds waiting is enqueued, in a seeded random order, and the loop (:func:`tuner.driver.drive`,
    with the grid's size as budget) ends once all are measured. Returns how many were enqueued.

    The sampler is asked for nothing and keeps no state (``RandomSampler``): Optuna's
    ``BruteForceSampler`` rebuilds its tree from every trial at each tell and fails on a trial
    that a killed worker left with part of its parameters (tests/test_workers.py).
    """
    import optuna

    with driver.quiet_optuna():
        study.sampler = optuna.samplers.RandomSampler(seed=seed)
    points = [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]
    random.Random(seed).shuffle(points)
    return driver.enqueue_new(study, points, key, studies.MEASUREMENT)


class OptunaStrategy:
    """A Kernel Tuner strategy (``tune(searchspace, runner, tuning_options)``) driven by Optuna,
    on ``study`` (the run's study of ``kernel`` in the tuning database).

    ``on_ask(trial)`` is told the Optuna trial being measured (None when done); ``store(record,
    trial, params)`` stores a measured configuration (False: the run holds it already); without
    it the trial is told to the study directly."""

    def __init__(
        self,
        *,
        kernel: str,
        scope: str,
        strategy: str,
        budget: int | None,
        seed: int,
        study: Any,
        on_trial: Callable[[TrialRecord], None] | None = None,
        on_ask: Callable[[Any], None] | None = None,
        store: Callable[[TrialRecord, Any, dict[str, Any]], bool] | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise TuningError(
                f"unknown strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}"
            )
        self.kernel, self.scope, self.strategy, self.seed = kernel, scope, strategy, seed
        total = space.size(kernel, scope)
        self.budget = total if strategy == "exhaustive" else min(budget or 40, total)
        self.study = study
        self.on_trial = on_trial
        self.on_ask = on_ask
        self.store = store

    def measured(self) -> list[TrialRecord]:
        import optuna

        with driver.quiet_optuna():
            optuna.storages.fail_stale_trials(self.study)
        recs = (
            studies.to_record(t) for t in driver.measured_trials(self.study, studies.MEASUREMENT)
        )
        return [r for r in recs if r is not None]

    def remaining(self) -> int:
        return max(0, self.budget - len(self.measured()))

    def tune(self, searchspace: Any, runner: Any, tuning_options: Any) -> list[dict]:
        import optuna

        names = list(tuning_options.tune_params)
        dists, _ = studies.search_space(self.kernel, self.scope)
        done = len(self.measured())

        def key(params: dict[str, Any]) -> tuple:
            return tuple(params[k] for k in names)

        if self.strategy == "exhaustive":
            queue_exhaustive(self.study, space.tune_params(self.kernel, self.scope), key, self.seed)
        else:
            self.study.sampler = optuna.samplers.TPESampler(
                seed=self.seed + done, n_startup_trials=min(10, self.budget)
            )
        results: list[dict] = []

        def measure(params: dict[str, Any]) -> driver.Measured | None:
            result = runner.run([list(key(params))], tuning_options)[0]
            if result is None:  # Kernel Tuner's own budget is spent
                return None
            record = to_trial(self.kernel, params, result)
            return driver.Measured(
                record.median_ms if record.status is TrialStatus.OK else None,
                studies.trial_attrs(record),
                (record, result),
            )

        def tell(trial: Any, measured: driver.Measured) -> bool:
            record, _ = measured.detail
            assert self.store is not None
            stored = self.store(record, trial, dict(trial.params))
            if not stored:
                log.info(
                    "%s %s was stored by another process: not stored again",
                    self.kernel,
                    record.config.label,
                )
            return stored

        def on_result(params: dict[str, Any], measured: driver.Measured) -> None:
            record, result = measured.detail
            if self.on_trial:
                self.on_trial(record)
            results.append(result)

        driver.drive(
            self.study,
            dists,
            budget=self.budget,
            key=key,
            measure=measure,
            marker=studies.MEASUREMENT,
            tell=tell if self.store is not None else None,
            on_ask=self.on_ask,
            on_result=on_result,
        )
        return results
