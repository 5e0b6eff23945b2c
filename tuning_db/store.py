"""The tuning database's repository: the only code that opens SQLAlchemy sessions.

:class:`Store` takes and returns the plain records of :mod:`tuning_db.records`; ORM objects
never leave the package. Every session goes through :meth:`Store._session`, which commits,
rolls back on error and re-raises database errors as :class:`sssp.errors.StoreError` naming the
database. Trials go to Optuna studies in the same database (:mod:`tuning_db.studies`); export,
import and seeding are in :mod:`tuning_db.transfer`.

The default database is the SQLite file ``tuning.sqlite`` in the user data directory; the
environment variable ``SSSP_TUNING_DB`` overrides it with any SQLAlchemy URL (PostgreSQL for
several tuning workers and hosts) or an existing file. A new default database is seeded with the
measurements shipped in ``tuning_db/data/*.json``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from sssp.classes import GraphClass
from sssp.errors import StoreError

from . import schema, studies, transfer
from .engine import (
    ENV_VAR,
    check_sqlite_file,
    default_path,
    default_url,
    describe,
    is_read_only,
    is_sqlite_memory,
    make_engine,
    read_only_url,
    sqlite_file,
    writable,
)
from .mapping import best_record, device_record, fill_best, run_record
from .models import BestConfig, Device, GraphClassRow, KernelVersion, TuningRun, utcnow
from .records import BestRecord, DeviceRecord, KernelVersionRecord, RunKey, RunRecord, RunStatus
from .records import TrialRecord as TrialRecord

if TYPE_CHECKING:
    import optuna

__all__ = ["Store", "open_store"]

logger = logging.getLogger(__name__)

_OPEN_STATUSES = (RunStatus.RUNNING.value, RunStatus.INTERRUPTED.value)
_T = TypeVar("_T")


class Store:
    """The tuning database.

    Parameters
    ----------
    url
        Any SQLAlchemy URL (``sqlite:///path``, ``sqlite://`` in memory,
        ``postgresql+psycopg://...``) or the path of an existing SQLite file. ``None`` opens
        :func:`default_url`, creating its directory when needed.
    seed
        Import the shipped measurements when this call creates the database. ``None`` (the
        default) seeds only the default database (``url=None``).

    Raises
    ------
    StoreError
        The value is neither a URL nor an existing file; the database is unreachable, empty
        (0 bytes), damaged, not SQLite, belongs to another application or holds another schema
        revision. The message names the URL and the fix.

    Notes
    -----
    A SQLite file this process may not write is opened read-only (``read_only``): reports and
    look-ups work, writes raise :class:`StoreError`. Opening never writes to an existing
    database.
    """

    def __init__(self, url: str | os.PathLike[str] | None = None, *, seed: bool | None = None):
        is_default = url is None
        text_url = default_url() if url is None else _url_text(url)
        try:
            self._url = make_url(text_url)
        except (SQLAlchemyError, ValueError) as err:
            raise StoreError(f"tuning database {text_url!r}: not a valid database URL ({err})") from err
        self.url = self._url.render_as_string(hide_password=True)
        self._where = f"tuning database {self.url}"
        path = sqlite_file(self._url)
        if path is not None and path.exists():
            check_sqlite_file(path, self._where)
            if not is_read_only(self._url) and not writable(path):
                logger.info("%s is not writable here: opened read-only", self._where)
                self._url = read_only_url(self._url, path)
        elif is_default and path is not None and not os.environ.get(ENV_VAR, "").strip():
            default_path().parent.mkdir(parents=True, exist_ok=True)
        self.read_only = is_read_only(self._url)
        try:
            self._engine = make_engine(self._url)
        except ImportError as err:
            raise StoreError(
                f"{self._where}: the database driver is not installed ({err}); "
                "install it or use a SQLite URL"
            ) from err
        except SQLAlchemyError as err:
            raise StoreError(f"{self._where}: {describe(err)}") from err
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        self._storage: optuna.storages.RDBStorage | None = None
        try:
            self.created = self._open(seed=is_default if seed is None else seed)
        except BaseException:
            self._engine.dispose()  # don't keep a refused file open
            raise

    # -- plumbing --------------------------------------------------------------------------

    @contextmanager
    def _session(self) -> Iterator[Session]:
        """The one way into the database: commit on success, roll back and re-raise on error."""
        session = self._sessions()
        try:
            yield session
            session.commit()
        except SQLAlchemyError as err:
            session.rollback()
            raise StoreError(f"{self._where}: {describe(err)}") from err
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def _transact(self, work: Callable[[Session], _T], *, retries: int = 1) -> _T:
        """Run ``work`` in one session; retry once when a concurrent writer won a unique key."""
        for attempt in range(retries + 1):
            try:
                with self._session() as session:
                    return work(session)
            except StoreError as err:
                if attempt < retries and isinstance(err.__cause__, IntegrityError):
                    logger.debug("retrying after a concurrent insert: %s", err)
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def _optuna(self) -> Iterator[None]:
        """Optuna's storage errors worded as ours."""
        from optuna.exceptions import StorageInternalError

        try:
            yield
        except (SQLAlchemyError, StorageInternalError) as err:
            raise StoreError(f"{self._where}: {describe(err)}") from err

    def _open(self, *, seed: bool) -> bool:
        """Check the schema, or create it in a new database; returns whether it was created."""

        def check(session: Session) -> str | None:
            conn = session.connection()
            problem = schema.check(conn, self._where)
            if problem is None and self._url.get_backend_name() == "sqlite":
                result = conn.exec_driver_sql("PRAGMA quick_check").scalar()
                if result != "ok":
                    raise StoreError(f"{self._where} is damaged (SQLite quick_check: {result})")
            return problem

        problem = self._transact(check, retries=0)
        if problem is None:
            return False
        if problem != "new":
            raise StoreError(problem)
        if self.read_only:
            raise StoreError(f"{self._where} is read-only and holds no tuning database")
        # Parse before the creating transaction: a broken shipped file must not leave a new,
        # half-seeded database behind (the next open would not try again).
        shipped = transfer.shipped_documents() if seed else []

        def create(session: Session) -> bool:
            conn = session.connection()
            if self._url.get_backend_name() == "postgresql":
                _advisory_lock(session, "create")
            if schema.check(conn, self._where) != "new":  # another process created it meanwhile
                return False
            schema.upgrade(conn)
            for name, doc in shipped:
                # Runs and best configurations, in the creating transaction; not the trials: the
                # replay reads the shipped Kernel Tuner caches, and Optuna's storage writes a
                # trial in ~30 ms (``tune import FILE`` brings them in).
                n, _ = transfer.import_rows(self, session, doc)
                logger.info("seeded %s with %d records from %s", self.url, n, name)
            logger.info("created %s (schema revision %s)", self.url, schema.head_revision())
            return True

        created = self._transact(create, retries=0)
        with self._optuna():
            self.storage  # noqa: B018 - Optuna's tables belong in every new database
        return created

    @property
    def storage(self) -> optuna.storages.RDBStorage:
        """Optuna's RDB storage on this database (opened on first use)."""
        if self._storage is None:
            if self.read_only:
                raise StoreError(f"{self._where} is read-only here: trials cannot be written")
            memory = None
            if is_sqlite_memory(self._url):
                memory = self._engine.raw_connection().driver_connection
            with self._optuna():
                self._storage = studies.make_storage(self._url, memory_connection=memory)
        return self._storage

    def upgrade(self) -> str:
        """Migrate the project's tables to this code's revision; returns that revision."""

        def work(session: Session) -> str:
            schema.upgrade(session.connection())
            return schema.head_revision()

        return self._transact(work, retries=0)

    def close(self) -> None:
        """Release the connections (an in-memory database is gone afterwards)."""
        if self._storage is not None:
            self._storage.remove_session()
            self._storage.engine.dispose()
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    # -- get-or-create of the key rows -------------------------------------------------------

    @staticmethod
    def _device_row(session: Session, rec: DeviceRecord, *, update: bool) -> Device:
        row = session.scalars(select(Device).where(Device.uuid == rec.uuid)).one_or_none()
        if row is None:
            row = Device(uuid=rec.uuid)
            session.add(row)
        elif not update:
            return row
        # A live device may have a newer driver than when it was first seen: keep the latest.
        row.name = rec.name
        row.compute_capability = rec.compute_capability
        row.sm_count = rec.sm_count
        row.driver_version = rec.driver_version
        row.cuda_version = rec.cuda_version
        session.flush()
        return row

    @staticmethod
    def _kernel_version_row(session: Session, rec: KernelVersionRecord) -> KernelVersion:
        stmt = select(KernelVersion).where(
            KernelVersion.digest == rec.digest, KernelVersion.compile_options == rec.compile_options
        )
        row = session.scalars(stmt).one_or_none()
        if row is None:
            row = KernelVersion(digest=rec.digest, compile_options=rec.compile_options)
            session.add(row)
            session.flush()
        return row

    @staticmethod
    def _class_row(session: Session, gc: GraphClass) -> GraphClassRow:
        stmt = select(GraphClassRow).where(
            GraphClassRow.size == gc.size, GraphClassRow.degree == gc.degree
        )
        row = session.scalars(stmt).one_or_none()
        if row is None:
            row = GraphClassRow(size=gc.size, degree=gc.degree)
            session.add(row)
            session.flush()
        return row

    def _run_row(self, session: Session, run_id: int) -> TuningRun:
        row = session.get(TuningRun, run_id)
        if row is None:
            raise StoreError(f"{self._where} has no tuning run with id {run_id}")
        return row

    @staticmethod
    def _key_clauses(key: RunKey, dev: Device, kv: KernelVersion, gc: GraphClassRow) -> list[Any]:
        return [
            TuningRun.device_id == dev.id,
            TuningRun.kernel_version_id == kv.id,
            TuningRun.graph_class_id == gc.id,
            TuningRun.algorithm == key.algorithm,
            TuningRun.variant == key.variant,
            TuningRun.kernel == key.kernel,
            TuningRun.strategy == key.strategy,
            TuningRun.instance == key.instance,
            TuningRun.replay == key.replay,
        ]

    def _key_rows(self, session: Session, key: RunKey) -> tuple[Device, KernelVersion, GraphClassRow]:
        return (
            self._device_row(session, key.device, update=True),
            self._kernel_version_row(session, key.kernel_version),
            self._class_row(session, key.graph_class),
        )

    @staticmethod
    def _new_run(key: RunKey, rows: tuple[Device, KernelVersion, GraphClassRow], *, budget: int | None,
                 seed: int, owner: str) -> TuningRun:
        dev, kv, gc = rows
        now = utcnow()
        return TuningRun(
            device=dev, kernel_version=kv, graph_class=gc, algorithm=key.algorithm,
            variant=key.variant, kernel=key.kernel, strategy=key.strategy, instance=key.instance,
            replay=key.replay, budget=budget, seed=seed, status=RunStatus.RUNNING.value,
            started_at=now, owner=owner, heartbeat_at=now,
        )

    # -- runs ---------------------------------------------------------------------------------

    def open_run(self, key: RunKey, *, budget: int | None, seed: int,
                 owner: str = "") -> tuple[RunRecord, bool]:
        """Resume the newest unfinished run of ``key``, or start a new one.

        A resumed run keeps its own seed (see the returned record) and takes the new ``budget``.

        Returns
        -------
        (RunRecord, bool)
            The run, now ``RUNNING``, and whether it was resumed.
        """

        def work(session: Session) -> tuple[RunRecord, bool]:
            rows = self._key_rows(session, key)
            stmt = (
                select(TuningRun)
                .where(*self._key_clauses(key, *rows), TuningRun.status.in_(_OPEN_STATUSES))
                .order_by(TuningRun.started_at.desc(), TuningRun.id.desc())
                .limit(1)
            )
            row = session.scalars(stmt).first()
            if row is not None:
                _take(row, budget, owner)
                session.flush()
                logger.info("resuming tuning run %d (%s)", row.id, key.graph_class)
                return run_record(row), True
            row = self._new_run(key, rows, budget=budget, seed=seed, owner=owner)
            session.add(row)
            session.flush()
            logger.info("started tuning run %d (%s)", row.id, key.graph_class)
            return run_record(row), False

        return self._transact(work)

    def claim_run(self, key: RunKey, *, budget: int | None, seed: int, owner: str,
                  stale_after: float = studies.GRACE_SECONDS) -> tuple[RunRecord, bool] | str:
        """Claim the work of ``key`` for worker ``owner`` (``tune --workers``).

        ``"finished"`` when a run of ``key`` has finished, ``"busy"`` when another worker holds
        it and its heartbeat is fresh; else (run, resumed). An interrupted run, or one whose worker stopped beating for
        ``stale_after`` seconds (killed), is taken over and resumed; otherwise a new run starts.
        Workers on several hosts may claim at once: on PostgreSQL the claim holds an advisory
        lock of the key, on SQLite the write lock.
        """

        def work(session: Session) -> tuple[RunRecord, bool] | str:
            if self._url.get_backend_name() == "postgresql":
                _advisory_lock(session, repr((key.device.uuid, key.kernel_version, key.graph_class,
                                              key.algorithm, key.variant, key.kernel, key.strategy,
                                              key.instance, key.replay)))
            rows = self._key_rows(session, key)
            stmt = (
                select(TuningRun)
                .where(*self._key_clauses(key, *rows))
                .order_by(TuningRun.started_at.desc(), TuningRun.id.desc())
            )
            runs = list(session.scalars(stmt).unique())
            if any(r.status == RunStatus.FINISHED.value for r in runs):
                return "finished"
            row = next((r for r in runs if r.status in _OPEN_STATUSES), None)
            if row is not None:
                limit = utcnow() - dt.timedelta(seconds=stale_after)
                alive = row.heartbeat_at is not None and row.heartbeat_at > limit
                if row.status == RunStatus.RUNNING.value and alive and row.owner != owner:
                    return "busy"
                logger.info("taking over tuning run %d (%s) from %r", row.id, key.graph_class,
                            row.owner)
                _take(row, budget, owner)
                session.flush()
                return run_record(row), True
            row = self._new_run(key, rows, budget=budget, seed=seed, owner=owner)
            session.add(row)
            session.flush()
            return run_record(row), False

        return self._transact(work)

    def beat(self, run_id: int, owner: str) -> bool:
        """Renew the heartbeat of a run ``owner`` holds; ``False`` when it holds it no more."""

        def work(session: Session) -> bool:
            row = self._run_row(session, run_id)
            if row.owner != owner or row.status != RunStatus.RUNNING.value:
                return False
            row.heartbeat_at = utcnow()
            return True

        return self._transact(work, retries=0)

    def run(self, run_id: int) -> RunRecord:
        """The run with id ``run_id``; :class:`StoreError` when there is none."""
        return self._transact(lambda s: run_record(self._run_row(s, run_id)), retries=0)

    def finish_run(self, run_id: int, status: RunStatus,
                   wall_seconds: float | None = None) -> RunRecord:
        """Close a run with ``status`` (``FINISHED``, ``INTERRUPTED``, ``FAILED``)."""
        status = RunStatus(status)

        def work(session: Session) -> RunRecord:
            row = self._run_row(session, run_id)
            row.status = status.value
            row.finished_at = None if status is RunStatus.RUNNING else utcnow()
            if wall_seconds is not None:
                row.wall_seconds = float(wall_seconds)
            session.flush()
            return run_record(row)

        return self._transact(work, retries=0)

    def runs(self, device_name: str | None = None, graph_class: GraphClass | None = None, *,
             status: RunStatus | None = None) -> list[RunRecord]:
        """Runs, oldest first, optionally only of one device name, class or status."""

        def work(session: Session) -> list[RunRecord]:
            stmt = select(TuningRun).join(TuningRun.device).join(TuningRun.graph_class)
            if device_name is not None:
                stmt = stmt.where(Device.name == device_name)
            if graph_class is not None:
                stmt = stmt.where(GraphClassRow.size == graph_class.size,
                                  GraphClassRow.degree == graph_class.degree)
            if status is not None:
                stmt = stmt.where(TuningRun.status == RunStatus(status).value)
            stmt = stmt.order_by(TuningRun.started_at, TuningRun.id)
            return [run_record(r) for r in session.scalars(stmt).unique()]

        return self._transact(work, retries=0)

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

    # -- best configurations -------------------------------------------------------------------

    @staticmethod
    def _best_row(session: Session, dev: Device, kv: KernelVersion, gc: GraphClassRow,
                  algorithm: str, variant: str) -> BestConfig | None:
        stmt = select(BestConfig).where(
            BestConfig.device_id == dev.id, BestConfig.kernel_version_id == kv.id,
            BestConfig.graph_class_id == gc.id, BestConfig.algorithm == algorithm,
            BestConfig.variant == variant,
        )
        return session.scalars(stmt).one_or_none()

    def put_best(self, best: BestRecord) -> None:
        """Insert or replace the best configuration of its (device, kernel version, class,
        algorithm, variant)."""

        def work(session: Session) -> None:
            dev = self._device_row(session, best.device, update=True)
            kv = self._kernel_version_row(session, best.kernel_version)
            gc = self._class_row(session, best.graph_class)
            row = self._best_row(session, dev, kv, gc, best.algorithm, best.variant)
            if row is None:
                row = BestConfig(device=dev, kernel_version=kv, graph_class=gc,
                                 algorithm=best.algorithm, variant=best.variant)
                session.add(row)
            fill_best(row, best, best.run_id)
            session.flush()

        self._transact(work)

    def _bests(self, *clauses: Any) -> list[BestRecord]:
        def work(session: Session) -> list[BestRecord]:
            stmt = (select(BestConfig).join(BestConfig.device).join(BestConfig.kernel_version)
                    .join(BestConfig.graph_class).where(*clauses))
            return [best_record(r) for r in session.scalars(stmt).unique()]

        return self._transact(work, retries=0)

    def best(self, device_uuid: str, digest: str, graph_class: GraphClass, algorithm: str,
             variant: str) -> BestRecord | None:
        """The stored best configuration of exactly this key, or ``None`` (when the digest was
        tuned under several compile-option sets, the newest)."""
        out = self._bests(Device.uuid == device_uuid, KernelVersion.digest == digest,
                          GraphClassRow.size == graph_class.size,
                          GraphClassRow.degree == graph_class.degree,
                          BestConfig.algorithm == algorithm, BestConfig.variant == variant)
        return max(out, key=lambda b: b.updated_at, default=None)

    def best_for_device(self, device_uuid: str, digest: str | None = None,
                        algorithm: str = "crauser", variant: str = "successors") -> list[BestRecord]:
        """Every class's best configuration on one device (all kernel versions with
        ``digest=None``), by class size, then degree, newest first within a class."""
        clauses = [Device.uuid == device_uuid, BestConfig.algorithm == algorithm,
                   BestConfig.variant == variant]
        if digest is not None:
            clauses.append(KernelVersion.digest == digest)
        out = self._bests(*clauses)
        out.sort(key=lambda b: b.updated_at, reverse=True)
        out.sort(key=lambda b: (b.graph_class.nodes, b.graph_class.mean_degree))
        return out

    def all_best(self, device_name: str | None = None) -> list[BestRecord]:
        """All best configurations (of one device name when given), for reports; by device,
        class (size, degree), algorithm, variant."""
        out = self._bests(*([] if device_name is None else [Device.name == device_name]))
        out.sort(key=lambda b: (b.device.name, b.device.uuid, b.graph_class.nodes,
                                b.graph_class.mean_degree, b.algorithm, b.variant,
                                b.kernel_version.digest, b.kernel_version.compile_options))
        return out

    def devices(self) -> list[DeviceRecord]:
        """Every device the store has seen, by name then UUID."""

        def work(session: Session) -> list[DeviceRecord]:
            stmt = select(Device).order_by(Device.name, Device.uuid)
            return [device_record(r) for r in session.scalars(stmt)]

        return self._transact(work, retries=0)

    # -- export / import (tuning_db.transfer) ----------------------------------------------

    def export_json(self, path: str | os.PathLike[str]) -> None:
        """Write the whole database as a JSON document (see :func:`transfer.export_json`)."""
        transfer.export_json(self, Path(path))

    def import_json(self, path: str | os.PathLike[str], *, trials: bool = True) -> int:
        """Import a document written by :meth:`export_json` (see :func:`transfer.import_json`)."""
        return transfer.import_json(self, Path(path), trials=trials)

    def seed_from_package(self) -> int:
        """Import the runs and best configurations of every shipped ``tuning_db/data/*.json``."""
        return sum(transfer.import_document(self, doc, trials=False)
                   for _, doc in transfer.shipped_documents())


def _url_text(url: str | os.PathLike[str]) -> str:
    from .engine import as_url

    return as_url(url)


def _take(row: TuningRun, budget: int | None, owner: str) -> None:
    row.status = RunStatus.RUNNING.value
    row.finished_at = None
    row.budget = budget
    row.owner = owner
    row.heartbeat_at = utcnow()


def _advisory_lock(session: Session, name: str) -> None:
    """Serialise PostgreSQL transactions that work on the same ``name`` (released at commit)."""
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})


def open_store(url: str | os.PathLike[str] | None = None, *, seed: bool | None = None) -> Store:
    """Open the tuning database at ``url`` (the default database when ``None``)."""
    return Store(url, seed=seed)
