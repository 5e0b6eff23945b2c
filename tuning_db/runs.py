"""Tuning runs: opening, resuming and claiming them (the run part of :class:`tuning_db.Store`)."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from sssp.classes import GraphClass

from . import rows as rows_
from . import studies
from .mapping import run_record
from .models import Device, GraphClassRow, TuningRun, utcnow
from .records import RunKey, RunRecord, RunStatus
from .storebase import StoreBase

logger = logging.getLogger(__name__)

_OPEN_STATUSES = (RunStatus.RUNNING.value, RunStatus.INTERRUPTED.value)


class RunsMixin(StoreBase):
    """Runs of :class:`tuning_db.Store`: sessions come from its :meth:`~tuning_db.Store.transact`,
    key rows from :mod:`tuning_db.rows`."""

    # -- runs ---------------------------------------------------------------------------------

    def _lock_key(self, session: Session, key: RunKey) -> None:
        """Serialise the transactions that open or claim runs of ``key``: on PostgreSQL an
        advisory lock of the key (identical GPUs share one), on SQLite the write lock that
        every transaction takes up front (``BEGIN IMMEDIATE``)."""
        if self.backend == "postgresql":
            model = (key.device.name, key.device.compute_capability, key.device.sm_count)
            advisory_lock(
                session,
                repr(
                    (
                        model,
                        key.kernel_version,
                        key.graph_class,
                        key.algorithm,
                        key.variant,
                        key.kernel,
                        key.strategy,
                        key.instance,
                        key.replay,
                    )
                ),
            )

    def open_run(
        self,
        key: RunKey,
        *,
        budget: int | None,
        seed: int,
        owner: str = "",
        stale_after: float = studies.GRACE_SECONDS,
    ) -> tuple[RunRecord, bool]:
        """Take over the newest unfinished run of ``key`` that no live process holds, or start a
        new run (a plain ``tune``).

        A run is taken over when it was stored as interrupted, or when the process holding it
        stopped renewing its heartbeat for ``stale_after`` seconds (killed); a run whose holder
        is alive is left to it, and this call starts a run of its own. Concurrent calls take a
        run over one at a time (see :meth:`_lock_key`), so two processes never hold one run.
        A resumed run keeps its own seed (see the returned record) and takes the new ``budget``.

        Returns
        -------
        (RunRecord, bool)
            The run, now ``RUNNING`` and held by ``owner``, and whether it was resumed.
        """

        def work(session: Session) -> tuple[RunRecord, bool]:
            self._lock_key(session, key)
            rows = rows_.key_rows(session, key)
            stmt = (
                select(TuningRun)
                .where(*rows_.run_key_clauses(key, *rows), TuningRun.status.in_(_OPEN_STATUSES))
                .order_by(TuningRun.started_at.desc(), TuningRun.id.desc())
            )
            row = next(
                (r for r in session.scalars(stmt).unique() if not _held(r, owner, stale_after)),
                None,
            )
            if row is not None:
                logger.info(
                    "resuming tuning run %d (%s) after %r", row.id, key.graph_class, row.owner
                )
                _take(row, budget, owner)
                session.flush()
                return run_record(row), True
            row = rows_.new_run(key, rows, budget=budget, seed=seed, owner=owner)
            session.add(row)
            session.flush()
            logger.info("started tuning run %d (%s)", row.id, key.graph_class)
            return run_record(row), False

        run, resumed = self.transact(work)
        if resumed:
            self.reclaim_run(run)
        return run, resumed

    def claim_run(
        self,
        key: RunKey,
        *,
        budget: int | None,
        seed: int,
        owner: str,
        stale_after: float = studies.GRACE_SECONDS,
    ) -> tuple[RunRecord, bool] | str:
        """Claim the work of ``key`` for worker ``owner`` (``tune --workers``).

        ``"finished"`` when a run of ``key`` has finished, ``"busy"`` when another worker holds
        it and its heartbeat is fresh; else (run, resumed). An interrupted run, or one whose worker stopped beating for
        ``stale_after`` seconds (killed), is taken over and resumed; otherwise a new run starts.
        Workers on several hosts may claim at once: on PostgreSQL the claim holds an advisory
        lock of the key, on SQLite the write lock.
        """

        model = (key.device.name, key.device.compute_capability, key.device.sm_count)

        def work(session: Session) -> tuple[RunRecord, bool] | str:
            self._lock_key(session, key)
            rows = rows_.key_rows(session, key)
            # Identical GPUs (same model, compute capability and SM count; e.g. the two H200s of
            # `--devices 0,1`) share the work: a class tuned on one is done for all of them. A
            # run taken over keeps the device it started on, and with it its Optuna study.
            peers = select(Device.id).where(
                Device.name == model[0],
                Device.compute_capability == model[1],
                Device.sm_count == model[2],
            )
            stmt = (
                select(TuningRun)
                .where(*rows_.run_key_clauses(key, *rows, device=TuningRun.device_id.in_(peers)))
                .order_by(TuningRun.started_at.desc(), TuningRun.id.desc())
            )
            runs = list(session.scalars(stmt).unique())
            if any(r.status == RunStatus.FINISHED.value for r in runs):
                return "finished"
            row = next((r for r in runs if r.status in _OPEN_STATUSES), None)
            if row is not None:
                if _held(row, owner, stale_after):
                    return "busy"
                logger.info(
                    "taking over tuning run %d (%s) from %r", row.id, key.graph_class, row.owner
                )
                _take(row, budget, owner)
                session.flush()
                return run_record(row), True
            row = rows_.new_run(key, rows, budget=budget, seed=seed, owner=owner)
            session.add(row)
            session.flush()
            return run_record(row), False

        got = self.transact(work)
        if isinstance(got, tuple) and got[1]:
            self.reclaim_run(got[0])
        return got

    def beat(self, run_id: int, owner: str) -> bool:
        """Renew the heartbeat of a run ``owner`` holds; ``False`` when it holds it no more."""

        def work(session: Session) -> bool:
            row = rows_.run_row(session, run_id, self.where)
            if row.owner != owner or row.status != RunStatus.RUNNING.value:
                return False
            row.heartbeat_at = utcnow()
            return True

        return self.transact(work, retries=0)

    def run(self, run_id: int) -> RunRecord:
        """The run with id ``run_id``; :class:`StoreError` when there is none."""
        return self.transact(lambda s: run_record(rows_.run_row(s, run_id, self.where)), retries=0)

    def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        wall_seconds: float | None = None,
        *,
        owner: str | None = None,
    ) -> RunRecord:
        """Close a run with ``status`` (``FINISHED``, ``INTERRUPTED``, ``FAILED``).

        With ``owner``, only while ``owner`` holds the run: a process whose run was taken over
        (it stopped beating, then woke up) leaves the run to its new holder; the record is
        returned unchanged then.
        """
        status = RunStatus(status)

        def work(session: Session) -> RunRecord:
            row = rows_.run_row(session, run_id, self.where)
            if owner is not None and row.owner != owner:
                logger.warning(
                    "tuning run %d is held by %r now, not %r: left as it is",
                    run_id,
                    row.owner,
                    owner,
                )
                return run_record(row)
            row.status = status.value
            row.finished_at = None if status is RunStatus.RUNNING else utcnow()
            if wall_seconds is not None:
                row.wall_seconds = float(wall_seconds)
            session.flush()
            return run_record(row)

        return self.transact(work, retries=0)

    def runs(
        self,
        device_name: str | None = None,
        graph_class: GraphClass | None = None,
        *,
        status: RunStatus | None = None,
    ) -> list[RunRecord]:
        """Runs, oldest first, optionally only of one device name, class or status."""

        def work(session: Session) -> list[RunRecord]:
            stmt = select(TuningRun).join(TuningRun.device).join(TuningRun.graph_class)
            if device_name is not None:
                stmt = stmt.where(Device.name == device_name)
            if graph_class is not None:
                stmt = stmt.where(
                    GraphClassRow.size == graph_class.size,
                    GraphClassRow.degree == graph_class.degree,
                    GraphClassRow.diameter == graph_class.diameter,
                )
            if status is not None:
                stmt = stmt.where(TuningRun.status == RunStatus(status).value)
            stmt = stmt.order_by(TuningRun.started_at, TuningRun.id)
            return [run_record(r) for r in session.scalars(stmt).unique()]

        return self.transact(work, retries=0)


def _held(row: TuningRun, owner: str, stale_after: float) -> bool:
    """Whether another live process holds ``row``: it is running, and its holder renewed the
    heartbeat within ``stale_after`` seconds (plus one heartbeat interval: the trial being
    measured beat at most that long after the run did, and must be stale too when the run is
    taken over)."""
    if row.status != RunStatus.RUNNING.value or row.owner == owner or row.heartbeat_at is None:
        return False
    limit = utcnow() - dt.timedelta(seconds=stale_after + studies.HEARTBEAT_SECONDS)
    return row.heartbeat_at > limit


def _take(row: TuningRun, budget: int | None, owner: str) -> None:
    row.status = RunStatus.RUNNING.value
    row.finished_at = None
    row.budget = budget
    row.owner = owner
    row.heartbeat_at = utcnow()


def lock_number(name: str) -> int:
    """The PostgreSQL advisory-lock number of ``name`` (64 bits of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


def advisory_lock(session: Session, name: str) -> None:
    """Serialise PostgreSQL transactions that work on the same ``name`` (released at commit)."""
    session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_number(name)})
