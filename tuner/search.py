"""Optuna as the search driver, plugged into Kernel Tuner as a user-defined strategy (ask/tell).

``exhaustive`` enqueues every unmeasured point of the space into the study (the paper's space is
small); ``tpe`` samples it with TPE under a budget. The study is the run's named study in the
tuning database (Optuna's RDB storage), so the trials are the record of what was measured: a
measured configuration is told to the study with Kernel Tuner's result as user attributes before
the next one is asked for. An interrupted run resumes from its study; a trial that a killed
worker left running is failed by Optuna's stale-trial check and measured again.

A measured configuration is stored through ``store`` (:meth:`tuning_db.Store.store_measurement`:
a running trial, the configuration's slot in the run, the finished trial), which refuses a
second measurement of a configuration in a run and stops a process whose run was taken over.
Those writes happen with signals held, so that an interrupt cannot cut them apart.
"""

from __future__ import annotations

import itertools
import logging
import random
import warnings
from collections.abc import Callable
from typing import Any

from sssp.errors import TuningError
from tuning_db import studies
from tuning_db.records import TrialRecord, TrialStatus

from . import interrupt, space

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


class OptunaStrategy:
    """A Kernel Tuner strategy (``tune(searchspace, runner, tuning_options)``) driven by Optuna,
    on ``study`` (the run's study of ``kernel`` in the tuning database)."""

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
        on_ask: Callable[[int | None], None] | None = None,
        store: Callable[[TrialRecord, int | None, dict[str, Any]], bool] | None = None,
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
        self.on_ask = on_ask  # told the Optuna trial id being measured (None when done)
        # store(record, asked trial id or None, params) -> stored (False: the run holds it)
        self.store = store

    def _stored(self, record: TrialRecord, trial: Any, params: dict[str, Any], dists: dict) -> bool:
        """Store a measured configuration (``trial``: the Optuna trial asked for, or None)."""
        from optuna.trial import TrialState

        with interrupt.held():
            if self.store is not None:
                stored = self.store(record, None if trial is None else trial._trial_id, params)
                if not stored:
                    log.info(
                        "%s %s was stored by another process: not stored again",
                        self.kernel,
                        record.config.label,
                    )
                return stored
            if trial is None:
                self.study.add_trial(studies.frozen_trial(record, params, dists))
                return True
            for name, value in studies.trial_attrs(record).items():
                trial.set_user_attr(name, value)
            if record.status is TrialStatus.OK:
                self.study.tell(trial, record.median_ms)
            else:
                self.study.tell(trial, state=TrialState.FAIL)
            return True

    def measured(self) -> list[TrialRecord]:
        import optuna

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            optuna.storages.fail_stale_trials(self.study)
        recs = (studies.to_record(t) for t in self.study.get_trials(deepcopy=False))
        return [r for r in recs if r is not None]

    def remaining(self) -> int:
        return max(0, self.budget - len(self.measured()))

    def tune(self, searchspace: Any, runner: Any, tuning_options: Any) -> list[dict]:
        import optuna
        from optuna.trial import TrialState

        tp = tuning_options.tune_params
        names = list(tp)
        dists, _ = studies.search_space(self.kernel, self.scope)
        seen = {
            tuple(space.from_config(t.config, self.kernel, self.scope)[k] for k in names)
            for t in self.measured()
        }
        # A waiting trial (a worker of an earlier version, killed between enqueue and ask) is
        # retired (FAIL, no measurement), or ask() would hand it out instead of a TPE point.
        storage = self.study._storage
        for t in self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
            storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
        if self.strategy == "exhaustive":
            return self._exhaustive(runner, tuning_options, names, dists, seen)
        self.study.sampler = optuna.samplers.TPESampler(
            seed=self.seed + len(seen), n_startup_trials=min(10, self.budget)
        )
        results: list[dict] = []
        done, stale = len(seen), 0
        while done < self.budget and stale < 200:
            interrupt.check()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "heartbeat is supposed to be used with optimize"
                trial = self.study.ask(dists)
            if self.on_ask:
                self.on_ask(trial._trial_id)
            key = tuple(trial.params[k] for k in names)
            if key in seen:  # TPE can propose a measured point again: skip it, ask anew
                self.study.tell(trial, state=TrialState.PRUNED)
                stale += 1
                continue
            stale = 0
            result = runner.run([list(key)], tuning_options)[0]
            if result is None:  # Kernel Tuner's own budget is spent
                self.study.tell(trial, state=TrialState.FAIL)
                break
            record = to_trial(self.kernel, dict(trial.params), result)
            seen.add(key)
            if not self._stored(record, trial, dict(trial.params), dists):
                continue
            if self.on_trial:
                self.on_trial(record)
            results.append(result)
            done += 1
        if self.on_ask:
            self.on_ask(None)
        return results

    def _exhaustive(
        self, runner: Any, tuning_options: Any, names: list[str], dists: dict, seen: set[tuple]
    ) -> list[dict]:
        """Every unmeasured point, in a seeded random order (so that drift during the run does
        not line up with block size). No sampler to consult: each point is measured, then
        written whole with its slot (three transactions: the running trial, the slot, the final
        state), not asked and told, which costs a dozen storage round trips per trial. A worker
        killed mid-point leaves no measurement behind; whoever takes the run over measures that
        point again."""
        todo = list(itertools.product(*tuning_options.tune_params.values()))
        random.Random(self.seed).shuffle(todo)
        todo = [values for values in todo if values not in seen]
        results: list[dict] = []
        for values in todo[: max(0, self.budget - len(seen))]:
            interrupt.check()
            result = runner.run([list(values)], tuning_options)[0]
            if result is None:  # Kernel Tuner's own budget is spent
                break
            params = dict(zip(names, values, strict=True))
            record = to_trial(self.kernel, params, result)
            if not self._stored(record, None, params, dists):
                continue
            if self.on_trial:
                self.on_trial(record)
            results.append(result)
        return results
