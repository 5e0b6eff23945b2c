"""Optuna as the search driver, plugged into Kernel Tuner as a user-defined strategy (ask/tell).

``exhaustive`` enqueues every point of the space into the study (the paper's space is small);
``tpe`` samples it with TPE under a budget. Every measured configuration is handed to
``on_trial`` (which stores it) before the next is asked for. Study state is rebuilt from the
stored trials, so an interrupted run resumes without repeating or losing a trial: the tuning
database is the single record of what was measured (a second copy in Optuna's own storage could
disagree with it after a crash between the two writes).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sssp.errors import TuningError
from tuning_db.records import TrialRecord, TrialStatus

from . import space

log = logging.getLogger(__name__)

STRATEGIES = ("exhaustive", "tpe")


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


def to_trial(kernel: str, params: dict, result: dict) -> TrialRecord:
    status = classify(result)
    times = tuple(float(t) for t in result.get("rep_ms", ())) if status is TrialStatus.OK else ()
    return TrialRecord(kernel=kernel, config=space.to_config(params), status=status, times_ms=times,
                       applied_l1=str(result.get("applied_l1", "")),
                       message=str(result.get("verify_message", "") or result.get("__error__", "") or ""))


class OptunaStrategy:
    """A Kernel Tuner strategy (``tune(searchspace, runner, tuning_options)``) driven by Optuna."""

    def __init__(
        self,
        *,
        kernel: str,
        scope: str,
        strategy: str,
        budget: int | None,
        seed: int,
        prior: list[TrialRecord],
        on_trial: Callable[[TrialRecord], TrialRecord],
        progress: Callable[[TrialRecord], None] | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise TuningError(f"unknown strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
        self.kernel, self.scope, self.strategy, self.seed = kernel, scope, strategy, seed
        total = space.size(kernel, scope)
        self.budget = total if strategy == "exhaustive" else min(budget or 40, total)
        self.prior = prior
        self.on_trial = on_trial
        self.progress = progress

    def remaining(self) -> int:
        return max(0, self.budget - len(self.prior))

    def tune(self, searchspace: Any, runner: Any, tuning_options: Any) -> list[dict]:
        import optuna
        from optuna.distributions import CategoricalDistribution
        from optuna.trial import TrialState, create_trial

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        tp = tuning_options.tune_params
        names = list(tp)
        dists = {k: CategoricalDistribution(list(v)) for k, v in tp.items()}
        if self.strategy == "exhaustive":
            # Every unmeasured point is enqueued (in a seeded random order, so that drift during
            # the run does not line up with block size); ask() hands them out one by one.
            sampler = optuna.samplers.RandomSampler(seed=self.seed)
        else:
            sampler = optuna.samplers.TPESampler(seed=self.seed, n_startup_trials=min(10, self.budget))
        study = optuna.create_study(direction="minimize", sampler=sampler)
        seen: set[tuple] = set()
        for t in self.prior:
            params = space.from_config(t.config, self.kernel, self.scope)
            seen.add(tuple(params[k] for k in names))
            if t.status is TrialStatus.OK:
                study.add_trial(create_trial(params=params, distributions=dists, value=t.median_ms))
            else:
                study.add_trial(create_trial(params=params, distributions=dists, state=TrialState.FAIL))
        if self.strategy == "exhaustive":
            import itertools
            import random

            grid = [dict(zip(names, values, strict=True)) for values in itertools.product(*tp.values())]
            random.Random(self.seed).shuffle(grid)
            for params in grid:
                if tuple(params[k] for k in names) not in seen:
                    study.enqueue_trial(params)
        results: list[dict] = []
        done, stale = len(self.prior), 0
        while done < self.budget and stale < 200:
            trial = study.ask(dists)
            key = tuple(trial.params[k] for k in names)
            if key in seen:  # TPE can propose a measured point again: skip it, ask anew
                study.tell(trial, state=TrialState.PRUNED)
                stale += 1
                continue
            stale = 0
            seen.add(key)
            result = runner.run([list(key)], tuning_options)[0]
            if result is None:  # Kernel Tuner's own budget is spent
                study.tell(trial, state=TrialState.FAIL)
                break
            record = self.on_trial(to_trial(self.kernel, dict(trial.params), result))
            if record.status is TrialStatus.OK:
                study.tell(trial, record.median_ms)
            else:
                study.tell(trial, state=TrialState.FAIL)
            if self.progress:
                self.progress(record)
            results.append(result)
            done += 1
        return results
