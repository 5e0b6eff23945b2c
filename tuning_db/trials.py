"""Trials as Optuna trials (the trial part of :class:`tuning_db.Store`; see
:mod:`tuning_db.studies` for how they are named and stored)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sssp.errors import StoreError

from . import studies
from .records import RunRecord, TrialRecord

if TYPE_CHECKING:
    import optuna


class TrialsMixin:
    """Trials of :class:`tuning_db.Store` (its Optuna storage and runs come from the store)."""

    # -- trials (Optuna studies) ----------------------------------------------------------------

    def study(self, run: RunRecord, kernel: str) -> optuna.Study:
        """The Optuna study holding ``kernel``'s trials of ``run`` (created on first use)."""
        import optuna

        with self._optuna():
            study = optuna.create_study(storage=self.storage, study_name=studies.study_name(run, kernel),
                                        direction="minimize", load_if_exists=True)
            if not study.user_attrs:
                for k, v in studies.study_attrs(run, kernel).items():
                    study.set_user_attr(k, v)
        return study

    def study_trials(self, run: RunRecord, kernel: str) -> list[tuple[TrialRecord, dt.datetime | None]]:
        """The measured trials of one kernel of ``run`` with their completion times."""
        import optuna

        if self.read_only:
            return []
        with self._optuna():
            try:
                study = optuna.load_study(storage=self.storage, study_name=studies.study_name(run, kernel))
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
        return [t for k in self.run_kernels(run) if kernel in (None, k)
                for t, _ in self.study_trials(run, k)]

    def run_kernels(self, run: RunRecord) -> list[str]:
        """The kernels that have a study in ``run``, in the order relax, min, update."""
        from sssp.config import KERNELS

        if self.read_only:
            return []
        with self._optuna():
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

    def add_trials(self, run: RunRecord, trials: list[tuple[TrialRecord, dt.datetime | None]]) -> int:
        """Add the (trial, completion time) pairs whose configuration ``run`` does not hold yet
        as finished Optuna trials; returns how many were added."""
        written = 0
        for kernel in dict.fromkeys(t.kernel for t, _ in trials):
            have = {t.config for t, _ in self.study_trials(run, kernel)}
            dists, params = studies.search_space(kernel, studies.scope_of(run))
            new = []
            for t, done in trials:
                if t.kernel == kernel and t.config not in have:
                    have.add(t.config)
                    try:
                        new.append(studies.frozen_trial(t, params(t.config), dists, done))
                    except ValueError as err:
                        raise StoreError(f"{self._where}: trial {t.config.label}: {err}") from err
            if new:
                study = self.study(run, kernel)
                with self._optuna():
                    study.add_trials(new)
                written += len(new)
        return written
