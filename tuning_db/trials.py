"""Trials as Optuna trials (the trial part of :class:`tuning_db.Store`; see
:mod:`tuning_db.studies` for how they are named and stored)."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from sssp.config import KernelConfig
from sssp.errors import StoreError

from . import studies
from .models import TrialSlot, TuningRun
from .records import RunRecord, RunStatus, TrialRecord
from .storebase import StoreBase

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

logger = logging.getLogger(__name__)


class TrialsMixin(StoreBase):
    """Trials of :class:`tuning_db.Store` (its Optuna storage and runs come from the store)."""

    # -- trials (Optuna studies) ----------------------------------------------------------------

    def study(self, run: RunRecord, kernel: str) -> optuna.Study:
        """The Optuna study holding ``kernel``'s trials of ``run`` (created on first use)."""
        import optuna

        with studies.optuna_errors(self.where):
            study = optuna.create_study(
                storage=self.storage,
                study_name=studies.study_name(run, kernel),
                direction="minimize",
                load_if_exists=True,
            )
            if not study.user_attrs:
                for k, v in studies.study_attrs(run, kernel).items():
                    study.set_user_attr(k, v)
        return study

    def recorded_study(self, run: RunRecord, kernel: str) -> optuna.Study:
        """The Optuna study of ``kernel``'s trials of the measured ``run``, for a replay.

        Raises
        ------
        StoreError
            The database holds the run but not its study: a run imported from an export
            (``tune export`` writes Optuna's trials of the paper's kernels, not a search's)."""
        import optuna

        name = studies.study_name(run, kernel)
        with studies.optuna_errors(self.where):
            try:
                return optuna.load_study(storage=self.storage, study_name=name)
            except KeyError:
                raise StoreError(
                    f"{self.where}: run {run.id} ({run.key.graph_class}, {kernel}) has no "
                    f"Optuna study {name!r}, so it cannot be replayed: an imported run carries "
                    "no search trials; replay in the database the run was measured in"
                ) from None

    def study_trials(
        self, run: RunRecord, kernel: str
    ) -> list[tuple[TrialRecord, dt.datetime | None]]:
        """The measured trials of one kernel of ``run`` with their completion times."""
        import optuna

        if self.read_only:
            return []
        with studies.optuna_errors(self.where):
            try:
                study = optuna.load_study(
                    storage=self.storage, study_name=studies.study_name(run, kernel)
                )
            except KeyError:
                return []
            out = []
            for ft in study.get_trials(deepcopy=False):
                rec = studies.to_record(ft)
                if rec is not None:
                    out.append((rec, studies.completed_at(ft)))
        return out

    def trials(self, run_id: int, kernel: str | None = None) -> list[TrialRecord]:
        """The measured trials of run ``run_id`` (of one ``kernel`` when given), by kernel and
        Optuna trial number; trials a killed worker left unfinished are not among them."""
        run = self.run(run_id)
        return [
            t
            for k in self.run_kernels(run)
            if kernel in (None, k)
            for t, _ in self.study_trials(run, k)
        ]

    def run_kernels(self, run: RunRecord) -> list[str]:
        """The kernels that have a study in ``run``, in the order relax, min, update."""
        from sssp.config import KERNELS

        if self.read_only:
            return []
        with studies.optuna_errors(self.where):
            names = {s.study_name for s in self.storage.get_all_studies()}
        return [k for k in KERNELS if studies.study_name(run, k) in names]

    def add_trial(self, run_id: int, trial: TrialRecord) -> TrialRecord:
        """Record one measured configuration of run ``run_id`` as a finished Optuna trial.

        Idempotent per (run, kernel, configuration): when the run already holds it, that trial
        is returned unchanged (a resumed run never duplicates a measurement).
        """
        run = self.run(run_id)
        self.add_trials(run, [(trial, None)])
        found = [t for t in self.trials(run_id, trial.kernel) if t.config == trial.config]
        return found[0]

    def reserve_trials(
        self, run_id: int, kernel: str, configs: Iterable[KernelConfig], owner: str | None = None
    ) -> list[KernelConfig]:
        """Take the slots of ``configs`` in run ``run_id`` (one transaction); returns those taken,
        in order. A configuration the run already holds a slot for is left out: it was stored
        (or is being stored) by whoever took its slot first, so storing it again would be a
        second measurement (the slots' unique key refuses one).

        With ``owner``, the slots are taken only while ``owner`` holds the run; a process whose
        run was taken over (it stopped beating for too long) gets :class:`StoreError` naming the
        new holder, and stores nothing more.
        """
        wanted = list(dict.fromkeys(configs))

        def work(session: Session) -> list[KernelConfig]:
            if owner is not None:  # two columns, not the run with its joined rows: once a trial
                run = session.execute(
                    select(TuningRun.owner, TuningRun.status).where(TuningRun.id == run_id)
                ).one_or_none()
                if run is None:
                    raise StoreError(f"{self.where} has no tuning run with id {run_id}")
                if run.owner != owner or run.status != RunStatus.RUNNING.value:
                    raise StoreError(
                        f"{self.where}: tuning run {run_id} is no longer held by this process "
                        f"({owner}; now {run.status}, held by {run.owner or 'nobody'}): it was taken "
                        "over after this process stopped renewing its heartbeat, so it stops here"
                    )
            taken = set(
                session.scalars(
                    select(TrialSlot.config).where(
                        TrialSlot.run_id == run_id,
                        TrialSlot.kernel == kernel,
                        TrialSlot.config.in_([c.label for c in wanted]),
                    )
                )
            )
            fresh = [c for c in wanted if c.label not in taken]
            session.add_all(
                TrialSlot(run_id=run_id, kernel=kernel, config=c.label, owner=owner or "")
                for c in fresh
            )
            session.flush()  # a slot another process took meanwhile fails here: retried once
            return fresh

        return self.transact(work)

    def reserve_trial(
        self, run_id: int, kernel: str, config: KernelConfig, owner: str | None = None
    ) -> bool:
        """Take the slot of one configuration (see :meth:`reserve_trials`); whether it was free."""
        return bool(self.reserve_trials(run_id, kernel, [config], owner))

    def store_measurement(
        self,
        study: optuna.Study,
        run_id: int,
        trial: TrialRecord,
        owner: str,
        *,
        trial_id: int | None = None,
        params: dict | None = None,
        dists: dict | None = None,
    ) -> bool:
        """Store one measured configuration of run ``run_id`` (held by ``owner``) in ``study``.

        The trial is written ``RUNNING`` (or is ``trial_id``, a trial Optuna asked for), then its
        slot is taken (:meth:`reserve_trials`), then it is finished. Returns ``False``, the trial
        abandoned (``PRUNED``), when the run holds the configuration already.

        Raises
        ------
        StoreError
            The run is no longer held by ``owner`` (it was taken over after this process stopped
            renewing its heartbeat): nothing is stored, and the process must stop.
        """
        from optuna.exceptions import UpdateFinishedTrialError

        storage = self.storage
        asked = trial_id is not None
        with studies.optuna_errors(self.where):
            if trial_id is None:
                template = studies.running_trial(trial, params or {}, dists or {})
                study_id = storage.get_study_id_from_name(study.study_name)
                trial_id = storage.create_new_trial(study_id, template_trial=template)
        try:
            free = self.reserve_trial(run_id, trial.kernel, trial.config, owner)
        except BaseException:
            self._abandon(trial_id)
            raise
        if not free:
            self._abandon(trial_id)
            return False
        state, values = studies.final_state(trial)
        try:
            with studies.optuna_errors(self.where):
                if asked:
                    for name, value in studies.trial_attrs(trial).items():
                        storage.set_trial_user_attr(trial_id, name, value)
                storage.set_trial_state_values(trial_id, state, values)
        except UpdateFinishedTrialError as err:
            raise StoreError(
                f"{self.where}: tuning run {run_id} was taken over while this process ({owner}) "
                f"was storing {trial.kernel} {trial.config.label}: its trial was abandoned, and "
                "this process stops here"
            ) from err
        return True

    def _abandon(self, trial_id: int) -> None:
        """Prune an unfinished trial (no measurement); one already finished is left as it is."""
        from optuna.exceptions import UpdateFinishedTrialError
        from optuna.trial import TrialState

        with contextlib.suppress(UpdateFinishedTrialError), studies.optuna_errors(self.where):
            self.storage.set_trial_state_values(trial_id, TrialState.PRUNED)

    def reclaim_run(self, run: RunRecord) -> int:
        """Tidy a run just taken over from a process that is gone (:meth:`open_run`,
        :meth:`claim_run`): its unfinished trials are abandoned, so that it can finish none of
        them if it was only stalled, and the slots it took without finishing their trial are
        freed, so that those configurations are measured again. Returns how many were freed."""
        from optuna.trial import TrialState

        if self.read_only:
            return 0
        freed = 0
        for kernel in self.run_kernels(run):
            study = self.study(run, kernel)
            with studies.optuna_errors(self.where):
                study_id = self.storage.get_study_id_from_name(study.study_name)
                for ft in study.get_trials(
                    deepcopy=False, states=(TrialState.RUNNING, TrialState.WAITING)
                ):
                    self._abandon(
                        self.storage.get_trial_id_from_study_id_trial_number(study_id, ft.number)
                    )
                measured = {
                    rec.config.label
                    for rec in map(studies.to_record, study.get_trials(deepcopy=False))
                    if rec is not None
                }

            def work(session: Session, kernel: str = kernel, measured: set[str] = measured) -> int:
                stale = [
                    s
                    for s in session.scalars(
                        select(TrialSlot).where(
                            TrialSlot.run_id == run.id, TrialSlot.kernel == kernel
                        )
                    )
                    if s.config not in measured
                ]
                for slot in stale:
                    session.delete(slot)
                return len(stale)

            freed += self.transact(work, retries=0)
        if freed:
            logger.info(
                "run %d: %d configuration(s) its last holder did not finish storing are "
                "measured again",
                run.id,
                freed,
            )
        return freed

    def add_trials(
        self, run: RunRecord, trials: list[tuple[TrialRecord, dt.datetime | None]]
    ) -> int:
        """Add the (trial, completion time) pairs whose configuration ``run`` does not hold yet
        as finished Optuna trials; returns how many were added. Each takes its slot first
        (:meth:`reserve_trials`), so concurrent imports of one run add each trial once."""
        written = 0
        for kernel in dict.fromkeys(t.kernel for t, _ in trials):
            have = {t.config for t, _ in self.study_trials(run, kernel)}
            dists, params = studies.search_space(kernel, studies.scope_of(run))
            # Built (and so validated) before any slot is taken: a bad trial must not leave a
            # slot without its trial behind.
            built: dict[KernelConfig, FrozenTrial] = {}
            for t, done in trials:
                if t.kernel == kernel and t.config not in have and t.config not in built:
                    try:
                        built[t.config] = studies.frozen_trial(t, params(t.config), dists, done)
                    except ValueError as err:
                        raise StoreError(f"{self.where}: trial {t.config.label}: {err}") from err
            new = [built[c] for c in self.reserve_trials(run.id, kernel, built)] if built else []
            if new:
                study = self.study(run, kernel)
                with studies.optuna_errors(self.where):
                    study.add_trials(new)
                written += len(new)
        return written
