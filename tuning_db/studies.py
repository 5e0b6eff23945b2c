"""Trials as Optuna studies, in the tuning database through Optuna's own RDB storage.

Each tuning run has one study per kernel it tunes, named by :func:`study_name` (device, kernel
version, class, algorithm and variant, kernel, run), so ``optuna.load_study``,
``optuna.get_all_study_summaries`` and ``optuna-dashboard <url>`` see every search. A measured
configuration is an Optuna trial: its parameters are the Kernel Tuner parameters, its value the
median time (ms) when the configuration ran correctly (``FAIL`` otherwise), and two user
attributes hold what Optuna has no field for: ``measurement`` (kernel, configuration label,
status, per-repetition times, applied L1 state, message) and ``kernel_tuner`` (Kernel Tuner's own
result). Two attributes, not one per field: each is a transaction of its own. A trial without
``measurement`` was never measured (one left ``RUNNING`` by a killed worker and failed by the
heartbeat check, or one still waiting): it is redone. A ``PRUNED`` trial holds no measurement
either: a configuration TPE proposed again, or one whose storing a process began and never
finished (it died, or its run was taken over), which the run's next holder abandoned.

A measurement is stored in three steps (:meth:`tuning_db.Store.store_measurement`): a
``RUNNING`` trial, the configuration's slot in the run (the unique key of
``sssp_trial_slots``), then the trial's final state. Optuna finishes a trial only while it is
still running, in a transaction that locks its row: that is what makes a run taken over from a
process that stopped beating safe, since its unfinished trials are abandoned (``PRUNED``) and it
can finish none of them afterwards.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import StaticPool

from sssp.config import KernelConfig
from sssp.errors import StoreError

from .connection import describe, is_sqlite_memory, sqlite_pragmas
from .records import RunRecord, TrialRecord, TrialStatus

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

logger = logging.getLogger(__name__)

GRACE_SECONDS = int(os.environ.get("SSSP_STALE_SECONDS", "") or 30)
"""After this long without a heartbeat a running trial (or run) is taken for dead
(``$SSSP_STALE_SECONDS`` overrides it, e.g. for tests)."""
HEARTBEAT_SECONDS = max(1, GRACE_SECONDS // 6)
"""How often a worker records that its running trial (and run) are alive."""

MEASUREMENT = "measurement"
KERNEL_TUNER = "kernel_tuner"


@contextmanager
def optuna_errors(where: str) -> Iterator[None]:
    """Optuna's storage errors worded as the store's (``where`` names the database)."""
    from optuna.exceptions import StorageInternalError

    try:
        yield
    except (SQLAlchemyError, StorageInternalError) as err:
        raise StoreError(f"{where}: {describe(err)}") from err


def study_name(run: RunRecord, kernel: str) -> str:
    """The study of ``kernel`` in ``run``, e.g.
    ``sssp/GPU-1234/9deb9bcf46142236/49k-deg200/crauser-successors/relax/run-3``."""
    k = run.key
    mode = "/replay" if k.replay else ""
    return (
        f"sssp/{k.device.uuid}/{k.kernel_version.digest}/{str(k.graph_class).replace('/', '-')}/"
        f"{k.algorithm}-{k.variant}/{kernel}/run-{run.id}{mode}"
    )


def study_attrs(run: RunRecord, kernel: str) -> dict[str, Any]:
    """What a study is about, for readers that only see Optuna (e.g. optuna-dashboard)."""
    k = run.key
    return {
        "device": k.device.name,
        "device_uuid": k.device.uuid,
        "kernel_digest": k.kernel_version.digest,
        "compile_options": k.kernel_version.compile_options,
        "graph_class": str(k.graph_class),
        "algorithm": k.algorithm,
        "variant": k.variant,
        "kernel": kernel,
        "strategy": k.strategy,
        "instance": k.instance,
        "replay": k.replay,
        "run_id": run.id,
    }


def scope_of(run: RunRecord) -> str:
    """The search scope of a run (its strategy is ``"<strategy>/<scope>"``)."""
    _, _, scope = run.key.strategy.partition("/")
    return scope or "extended"


def search_space(kernel: str, scope: str) -> tuple[dict[str, Any], Any]:
    """(Optuna distributions, ``KernelConfig -> params``) of one kernel's search space."""
    from optuna.distributions import CategoricalDistribution

    from . import space

    dists = {
        k: CategoricalDistribution(list(v)) for k, v in space.tune_params(kernel, scope).items()
    }
    return dists, lambda config: space.from_config(config, kernel, scope)


def trial_attrs(trial: TrialRecord) -> dict[str, Any]:
    return {
        MEASUREMENT: {
            "kernel": trial.kernel,
            "config": trial.config.label,
            "status": TrialStatus(trial.status).value,
            "times_ms": [float(t) for t in trial.times_ms],
            "applied_l1": trial.applied_l1,
            "message": trial.message,
        },
        KERNEL_TUNER: dict(trial.measurements),
    }


def check_times(times: tuple[float, ...]) -> tuple[float, ...]:
    out = tuple(float(t) for t in times)
    for t in out:
        if not math.isfinite(t) or t < 0:
            raise ValueError(
                f"trial time {t!r} ms is invalid: times must be finite and non-negative"
            )
    return out


def frozen_trial(
    trial: TrialRecord,
    params: dict[str, Any],
    dists: dict[str, Any],
    done: dt.datetime | None = None,
) -> FrozenTrial:
    """A finished Optuna trial holding ``trial``, completed at ``done`` (for imports)."""
    from optuna.trial import TrialState, create_trial

    check_times(trial.times_ms)
    ok = trial.status is TrialStatus.OK and trial.median_ms is not None
    ft = create_trial(
        state=TrialState.COMPLETE if ok else TrialState.FAIL,
        value=trial.median_ms if ok else None,
        params=params,
        distributions=dists,
        user_attrs=trial_attrs(trial),
    )
    if done is not None:  # Optuna keeps naive local times
        ft.datetime_start = ft.datetime_complete = done.astimezone().replace(tzinfo=None)
    return ft


def running_trial(trial: TrialRecord, params: dict[str, Any], dists: dict[str, Any]) -> FrozenTrial:
    """A ``RUNNING`` Optuna trial holding ``trial``, to be finished once its slot is taken."""
    from optuna.trial import TrialState, create_trial

    check_times(trial.times_ms)
    return create_trial(
        state=TrialState.RUNNING, params=params, distributions=dists, user_attrs=trial_attrs(trial)
    )


def final_state(trial: TrialRecord) -> tuple[Any, list[float] | None]:
    """The Optuna state and values a measured trial ends with."""
    from optuna.trial import TrialState

    if trial.status is TrialStatus.OK and trial.median_ms is not None:
        return TrialState.COMPLETE, [float(trial.median_ms)]
    return TrialState.FAIL, None


def completed_at(ft: FrozenTrial) -> dt.datetime | None:
    """When an Optuna trial finished, as aware UTC (Optuna keeps naive local times)."""
    t = ft.datetime_complete
    return None if t is None else t.astimezone(dt.UTC)


def to_record(ft: FrozenTrial) -> TrialRecord | None:
    """The measured configuration an Optuna trial holds, or ``None`` when it holds none."""
    from optuna.trial import TrialState

    a = ft.user_attrs.get(MEASUREMENT)
    if a is None or ft.state not in (TrialState.COMPLETE, TrialState.FAIL):
        return None
    try:
        return TrialRecord(
            kernel=str(a["kernel"]),
            config=KernelConfig.parse(str(a["config"])),
            status=TrialStatus(a["status"]),
            times_ms=check_times(tuple(a.get("times_ms", ()))),
            applied_l1=str(a.get("applied_l1", "")),
            message=str(a.get("message", "")),
            number=ft.number,
            measurements=dict(ft.user_attrs.get(KERNEL_TUNER, {})),
        )
    except (ValueError, TypeError, KeyError) as err:
        from sssp.errors import StoreError

        raise StoreError(f"Optuna trial {ft.number} holds an invalid value: {err}") from err


def make_storage(url: URL, *, memory_connection: Any = None) -> optuna.storages.RDBStorage:
    """Optuna's RDB storage on the tuning database, with heartbeats (stale trials are failed
    and redone) and, on SQLite, the same connection settings as the project's engine."""
    import optuna
    from optuna.storages import RDBStorage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    kwargs: dict[str, Any] = {}
    if is_sqlite_memory(url):
        # Optuna's engine must see the store's single in-memory connection, not a new database.
        kwargs = {"poolclass": StaticPool, "creator": lambda: memory_connection}
    elif url.get_backend_name() == "sqlite":
        kwargs = {"connect_args": {"timeout": 60}}
    else:
        kwargs = {"pool_pre_ping": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        storage = RDBStorage(
            url.render_as_string(hide_password=False),
            engine_kwargs=kwargs,
            heartbeat_interval=HEARTBEAT_SECONDS,
            grace_period=GRACE_SECONDS,
        )
    if url.get_backend_name() == "sqlite" and not is_sqlite_memory(url):
        sqlite_pragmas(storage.engine, wal=True)
        storage.engine.dispose()  # reconnect with the settings above
    return storage


__all__ = [
    "KERNEL_TUNER",
    "MEASUREMENT",
    "GRACE_SECONDS",
    "HEARTBEAT_SECONDS",
    "frozen_trial",
    "make_storage",
    "scope_of",
    "search_space",
    "study_attrs",
    "study_name",
    "to_record",
    "trial_attrs",
]
