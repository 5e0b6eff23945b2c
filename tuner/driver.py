"""The tuning driver: what every tuning objective shares.

Two objectives are tuned: the paper's kernels one at a time, each configuration measured by
Kernel Tuner (``tune run``, :mod:`tuner.pipeline` with :mod:`tuner.search`), and a class's
structural choices (algorithm, Δ, loop, mapping, launch), each scored by the wall time of whole
solves (``tune engine``, :mod:`tuner.class_search`). Both go through this module:

- **A held run.** :func:`hold_run` opens (or, for workers sharing a database, claims) the run of
  a :class:`~tuning_db.records.RunKey` in ``sssp_tuning_runs``, renews its heartbeat while the
  work goes on (:class:`Heartbeat`), stores it as finished when the work ends and as interrupted
  when an exception or a signal (Ctrl-C) ends it, so that the next call resumes it. Several workers (``--workers``/``--devices``, :mod:`tuner.workers`) share classes
  through those rows.
- **One ask/tell loop.** :func:`drive` asks the run's Optuna study for configurations (an
  exhaustive search enqueues every point with ``study.enqueue_trial``; ``TPESampler`` samples
  under a budget, after start points enqueued the same way), skips what the study holds a
  measurement of already (found with ``study.get_trials(states=...)``), measures the rest and
  tells the study.
  A resumed run therefore measures nothing twice. Whether the measurements come from a GPU or
  are replayed from recorded ones is the measurer's business, not the loop's.
- **One acceptance rule.** :func:`accepts`: a tuned configuration replaces the default only when
  it is faster by more than :data:`NOISE_FLOOR` and by more than twice the A/A spread.
- **One result.** :class:`TuneOutcome`, frozen, whatever was tuned.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sssp.errors import TuningError
from tuning_db import Store, studies
from tuning_db.records import BestRecord, RunKey, RunRecord, RunStatus

from . import interrupt

if TYPE_CHECKING:
    import optuna
    from optuna.distributions import BaseDistribution
    from optuna.trial import FrozenTrial, Trial

log = logging.getLogger(__name__)

NOISE_FLOOR = 0.02
"""A tuned configuration must beat the default by more than 2 % (see :func:`accepts`)."""


def accepts(default_ms: float, tuned_ms: float, spread: float = 0.0) -> bool:
    """Whether a tuned configuration replaces the default: the acceptance rule of every tuning.

    The tuned configuration is accepted when ``default_ms / tuned_ms > 1 + max(NOISE_FLOOR,
    2 * spread)``: faster than the default by more than the noise floor (2 %) and by more than
    twice the A/A spread, the relative difference between two measurements of the default
    itself taken beside the tuned one. Otherwise the default is kept (and the search's pick is
    stored beside it, for the record).

    Parameters
    ----------
    default_ms, tuned_ms : float
        Median times of the default and the tuned configuration, in ms, measured interleaved.
    spread : float
        ``|d1 - d2| / mean(d1, d2)`` of two measurements ``d1, d2`` of the default (0 when the
        figures are recorded ones, which have no spread to show).

    Raises
    ------
    TuningError
        A time that is not finite and positive, or a negative or non-finite spread.
    """
    for name, value in (("default", default_ms), ("tuned", tuned_ms)):
        if not (math.isfinite(value) and value > 0):
            raise TuningError(f"{name} time {value!r} ms is not a finite positive time")
    if not (math.isfinite(spread) and spread >= 0):
        raise TuningError(f"A/A spread {spread!r} is not a finite non-negative fraction")
    return default_ms / tuned_ms > 1.0 + max(NOISE_FLOOR, 2.0 * spread)


def aa_spread(first_ms: float, second_ms: float) -> float:
    """The A/A spread of two measurements of one configuration (see :func:`accepts`)."""
    return abs(first_ms - second_ms) / (0.5 * (first_ms + second_ms))


@dataclass(frozen=True)
class TuneOutcome:
    """What tuning one class gave: the stored best record and the run that produced it."""

    best: BestRecord
    run_id: int
    resumed: bool
    wall_seconds: float
    trials: int
    """Configurations measured in the run (all its sessions together)."""


def worker_id() -> str:
    """``host:pid``: who holds a run while it is tuned."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Heartbeat:
    """While a run is tuned, a thread renews its heartbeat and that of the Optuna trial being
    measured, so that other workers can tell a live worker from a killed one."""

    def __init__(
        self, store: Store, run_id: int, owner: str, interval: float = studies.HEARTBEAT_SECONDS
    ) -> None:
        self.store, self.run_id, self.owner, self.interval = store, run_id, owner, interval
        self.trial_id: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sssp-heartbeat", daemon=True)

    def trial(self, trial_id: int | None) -> None:
        """Beat for the storage trial ``trial_id`` from now on (None: no trial is measured)."""
        self.trial_id = trial_id
        if trial_id is not None:
            self.store.storage.record_heartbeat(trial_id)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                if not self.store.beat(self.run_id, self.owner):
                    # Taken over after a stall longer than the grace period: the next trial's
                    # slot is refused, which stops this process.
                    log.warning("run %d is no longer held by %s", self.run_id, self.owner)
                    return
                if self.trial_id is not None:
                    self.store.storage.record_heartbeat(self.trial_id)
            except Exception as err:  # a missed beat is not fatal; the next one may succeed
                log.warning("heartbeat of run %d failed: %s", self.run_id, err)

    def __enter__(self) -> Heartbeat:
        if self.store.shared:  # no other worker can see an in-memory database
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


Claim = Callable[[RunKey], "tuple[RunRecord, bool] | None"]
"""``claim(key)``: a worker's claim of a run (None when another worker holds it or it is done)."""


@dataclass
class HeldRun:
    """A run this process holds, as :func:`hold_run` yields it."""

    store: Store
    run: RunRecord
    resumed: bool
    owner: str
    started: float = field(default_factory=time.perf_counter)
    beat: Heartbeat | None = None

    @property
    def wall_seconds(self) -> float:
        return time.perf_counter() - self.started


@contextlib.contextmanager
def hold_run(
    store: Store,
    key: RunKey,
    *,
    budget: int | None,
    seed: int,
    claim: Claim | None = None,
) -> Iterator[HeldRun | None]:
    """Hold the run of ``key`` for the block: its heartbeat beats while the block runs, and it
    is stored as finished when the block ends, as interrupted when an exception or a signal ends
    it (the next call resumes it). Yields None when there is nothing to hold.

    With ``claim`` (workers sharing a database, :meth:`tuning_db.Store.claim_run`) the claim
    decides, and ``None`` means another worker holds the run or it is finished. Without it the
    newest unfinished run of ``key`` that no live process holds is resumed, or a new one starts
    (:meth:`tuning_db.Store.open_run`).

    A signal is held back from the claim until the cleanup that stores the run is armed: no
    signal can leave a claimed run stored as running.
    """
    owner = worker_id()
    held: HeldRun | None = None
    status = RunStatus.INTERRUPTED
    try:
        with interrupt.held():  # a signal meanwhile is raised at the block's end, inside the try
            claimed = (
                claim(key)
                if claim is not None
                else store.open_run(key, budget=budget, seed=seed, owner=owner)
            )
            if claimed is not None:
                held = HeldRun(store, claimed[0], claimed[1], owner)
        if held is None:
            yield None
            return
        held.beat = Heartbeat(store, held.run.id, owner).__enter__()
        yield held
        status = RunStatus.FINISHED
    finally:
        if held is not None:
            if held.beat is not None:
                held.beat.__exit__(None, None, None)
            store.finish_run(held.run.id, status, wall_seconds=held.wall_seconds, owner=owner)
            if status is RunStatus.INTERRUPTED:
                log.info("run %d stored as interrupted", held.run.id)


# -- the ask/tell loop ------------------------------------------------------------------------
def _measured_states() -> tuple[Any, ...]:
    from optuna.trial import TrialState

    return (TrialState.COMPLETE, TrialState.FAIL)


@dataclass(frozen=True)
class Measured:
    """One measured configuration, as the loop tells it to the study.

    ``value`` is the objective (ms, minimised), ``None`` when the configuration failed (a
    failed configuration is data: the trial is told ``FAIL`` and is not measured again);
    ``attrs`` are the trial's user attributes, which must hold ``marker`` (see :func:`drive`);
    ``detail`` is what the measurer keeps beside them for its own ``tell`` (e.g. the kernel
    search's :class:`~tuning_db.records.TrialRecord`).
    """

    value: float | None
    attrs: Mapping[str, Any]
    detail: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.value is not None and not (math.isfinite(self.value) and self.value >= 0):
            raise TuningError(f"measured value {self.value!r} ms is not a finite time")


def measured_trials(study: optuna.Study, marker: str) -> list[FrozenTrial]:
    """The trials of ``study`` that hold a measurement: finished (``COMPLETE`` or ``FAIL``) and
    carrying the user attribute ``marker``. A ``FAIL`` trial without it was never measured (a
    trial a killed process left running, failed by Optuna's stale-trial check)."""
    return [
        t
        for t in study.get_trials(deepcopy=False, states=_measured_states())
        if marker in t.user_attrs
    ]


def enqueue_new(
    study: optuna.Study,
    points: list[dict[str, Any]],
    key: Callable[[dict[str, Any]], Hashable],
    marker: str,
) -> int:
    """Enqueue the start ``points`` that the study neither measured nor holds waiting (a resumed
    run keeps its queue); returns how many were enqueued."""
    from optuna.trial import TrialState

    have = {key(t.params) for t in measured_trials(study, marker)}
    have |= {
        _keyed(key, t.params)
        for t in study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
        if t.params
    }
    added = 0
    for point in points:
        if key(point) not in have:
            study.enqueue_trial(point)
            have.add(key(point))
            added += 1
    return added


def drive(
    study: optuna.Study,
    dists: Mapping[str, BaseDistribution],
    *,
    budget: int,
    key: Callable[[dict[str, Any]], Hashable],
    measure: Callable[[dict[str, Any]], Measured | None],
    marker: str,
    tell: Callable[[Trial, Measured], bool] | None = None,
    on_ask: Callable[[Trial | None], None] | None = None,
    on_result: Callable[[dict[str, Any], Measured], None] | None = None,
    max_repeats: int = 200,
) -> int:
    """Measure configurations until ``study`` holds ``budget`` measured ones.

    Each round asks the study (``study.ask(dists)``: an enqueued point first, else its sampler),
    maps the asked parameters to ``key`` (configurations of one key run the same thing), and
    skips a key the study measured already (the asked trial is told ``PRUNED``: no measurement).
    Otherwise ``measure(params)`` measures it and the result is told: by ``tell(trial,
    measured)`` when given (it returns ``False`` when someone else stored that configuration
    first), else with the study's own ``set_user_attr`` and ``tell``.

    An exception or a signal during a measurement tells the asked trial ``PRUNED`` (it holds no
    measurement, and is asked again by a resumed run) before it goes on up. ``measure`` returns
    ``None`` when its own budget is spent (Kernel Tuner's), which ends the loop. The loop also
    ends after ``max_repeats`` proposals in a row that were measured already (a small space,
    exhausted). Returns how many configurations this call measured.
    """
    import optuna
    from optuna.trial import TrialState

    with quiet_optuna():  # trials a killed process left running: failed once their beat is stale
        optuna.storages.fail_stale_trials(study)
    done = {key(t.params) for t in measured_trials(study, marker)}
    requeue_lost(study, key, marker)
    count, repeats, measured = len(done), 0, 0
    while count < budget and repeats < max_repeats:
        interrupt.check()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "heartbeat is supposed to be used with optimize"
            trial = study.ask(dict(dists))
        params = dict(trial.params)
        k = key(params)
        if k in done:  # a sampler may propose a measured configuration again: ask anew
            if not _tell(study, trial, state=TrialState.PRUNED):
                break
            repeats += 1
            continue
        repeats = 0
        if on_ask:
            on_ask(trial)
        try:
            result = measure(params)
        except BaseException:
            with contextlib.suppress(Exception), interrupt.held():
                _tell(study, trial, state=TrialState.PRUNED)
            raise
        if result is None:  # the measurer's own budget is spent
            _tell(study, trial, state=TrialState.PRUNED)
            break
        done.add(k)
        with interrupt.held():  # the attributes and the state belong together
            if tell is not None:
                stored = tell(trial, result)
            else:
                for name, value in result.attrs.items():
                    trial.set_user_attr(name, value)
                if result.value is None:
                    _tell(study, trial, state=TrialState.FAIL)
                else:
                    _tell(study, trial, result.value)
                stored = True
        if not stored:
            continue
        count += 1
        measured += 1
        if on_result:
            on_result(params, result)
    if on_ask:
        on_ask(None)
    return measured


def requeue_lost(
    study: optuna.Study, key: Callable[[dict[str, Any]], Hashable], marker: str
) -> int:
    """Enqueue again the configurations whose trials ended without a measurement and that the
    study has not measured since (duplicate proposals, ``PRUNED`` too, are of measured ones):
    one whose measurement an interrupt cut short (told ``PRUNED``), or one a killed process left
    running (failed by Optuna's stale-trial check, or abandoned by
    :meth:`tuning_db.Store.reclaim_run`). Exhaustive samplers count every finished
    trial as visited, so without this a resumed run would never measure them. Returns how many
    were enqueued."""
    from optuna.trial import TrialState

    # PRUNED never holds a measurement, even with its attributes written (a process stopped
    # between the attributes and the state); FAIL holds one when it has the marker.
    lost = [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.PRUNED, TrialState.FAIL))
        if t.params
        and (t.state == TrialState.PRUNED or marker not in t.user_attrs)
        and _keyed(key, t.params) is not None
    ]
    return enqueue_new(study, [dict(t.params) for t in lost], key, marker) if lost else 0


def _keyed(key: Callable[[dict[str, Any]], Hashable], params: dict[str, Any]) -> Hashable | None:
    """``key(params)``, or None for the params of a trial that a process killed while it was
    being asked (Optuna stores them one at a time): such a trial names no configuration."""
    try:
        return key(params)
    except KeyError:
        return None


def _tell(study: optuna.Study, trial: Trial, *args: Any, **kwargs: Any) -> bool:
    """``study.tell``; False when the sampler ended the study. ``BruteForceSampler`` (and
    ``GridSampler``) call ``study.stop()`` once the space is exhausted, which outside
    ``study.optimize`` raises ``RuntimeError`` after the trial was stored: a finished trial
    after that error is the sampler's stop, anything else is a real error."""
    try:
        study.tell(trial, *args, **kwargs)
    except RuntimeError:
        if not study.get_trials(deepcopy=False)[trial.number].state.is_finished():
            raise
        return False
    return True


class TrialIds:
    """The ids in ``storage`` (the study's storage, e.g. :attr:`tuning_db.Store.storage`) of a
    study's asked trials: what heartbeats and the storage's ``set_trial_*`` take. Through the
    storage's public interface, by study name and trial number, each looked up once."""

    def __init__(self, storage: Any, study: optuna.Study) -> None:
        self.storage = storage
        self.study_id = storage.get_study_id_from_name(study.study_name)
        self._ids: dict[int, int] = {}

    def __call__(self, trial: Trial) -> int:
        if trial.number not in self._ids:
            self._ids[trial.number] = int(
                self.storage.get_trial_id_from_study_id_trial_number(self.study_id, trial.number)
            )
        return self._ids[trial.number]


@contextlib.contextmanager
def quiet_optuna() -> Iterator[None]:
    """Optuna's experimental warnings (stale-trial checks) silenced for a block."""
    import optuna

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        yield
