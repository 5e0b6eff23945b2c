"""The tuning database: the only code that opens SQLAlchemy sessions.

:class:`Store` takes and returns the plain records of :mod:`tuning_db.records`; ORM objects
never leave this module. Every session goes through :meth:`Store._session`, which commits, rolls
back on error and re-raises SQLAlchemy errors as :class:`sssp.errors.StoreError` naming the
database.

The default database is the SQLite file ``tuning.sqlite`` in the user data directory
(``platformdirs.user_data_dir("sssp-tune")``); the environment variable ``SSSP_TUNING_DB``
overrides it with any SQLAlchemy URL (PostgreSQL for several tuning workers) or a file path.
A new default database is seeded with the measurements shipped in ``tuning_db/data/*.json``.
"""

from __future__ import annotations

import datetime as dt
import importlib.resources
import json
import logging
import math
import os
import sqlite3
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import platformdirs
from sqlalchemy import create_engine, event, func, inspect, select
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from sssp.classes import GraphClass
from sssp.config import KernelConfig, LaunchConfig
from sssp.errors import StoreError

from .models import (
    SCHEMA_TABLE,
    SCHEMA_VERSION,
    Base,
    BestConfig,
    Device,
    GraphClassRow,
    KernelVersion,
    SchemaInfo,
    Trial,
    TuningRun,
    utcnow,
)
from .records import (
    BestRecord,
    DeviceRecord,
    KernelVersionRecord,
    RunKey,
    RunRecord,
    RunStatus,
    TrialRecord,
    TrialStatus,
)

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "Store",
    "as_url",
    "default_path",
    "default_url",
    "open_store",
]

logger = logging.getLogger(__name__)

ENV_VAR = "SSSP_TUNING_DB"
APP_NAME = "sssp-tune"
DB_FILENAME = "tuning.sqlite"
EXPORT_FORMAT = "sssp-tune tuning database"

# Optuna's own tables: a database that holds only these is not "foreign", so studies and tuning
# results can share one file (our tables are all prefixed ``sssp_``).
OPTUNA_TABLES = frozenset(
    {
        "alembic_version",
        "studies",
        "study_directions",
        "study_system_attributes",
        "study_user_attributes",
        "trial_heartbeats",
        "trial_intermediate_values",
        "trial_params",
        "trial_system_attributes",
        "trial_user_attributes",
        "trial_values",
        "trials",
        "version_info",
    }
)

_OPEN_STATUSES = (RunStatus.RUNNING.value, RunStatus.INTERRUPTED.value)
_T = TypeVar("_T")


# --------------------------------------------------------------------------------------------
# URLs


def default_path() -> Path:
    """The default database file: ``tuning.sqlite`` in the user data directory."""
    return Path(platformdirs.user_data_dir(APP_NAME)) / DB_FILENAME


def as_url(text: str | os.PathLike[str]) -> str:
    """An SQLAlchemy URL for ``text``: URLs pass through, a plain path becomes a SQLite URL."""
    s = os.fspath(text).strip()
    if "://" in s:
        return s
    return f"sqlite:///{Path(s).expanduser().absolute()}"


def default_url() -> str:
    """The database URL used when none is given.

    ``$SSSP_TUNING_DB`` (a URL or a file path) when set, else the SQLite file
    :func:`default_path`.
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return as_url(env)
    return as_url(default_path())


def _is_sqlite_memory(url: URL) -> bool:
    return url.database in (None, "", ":memory:") or "mode=memory" in str(url)


def _make_engine(url: URL) -> Engine:
    if url.get_backend_name() != "sqlite":
        return create_engine(url, future=True)
    memory = _is_sqlite_memory(url)
    if memory:
        # One connection for the whole store: each new connection would be a new empty database.
        engine = create_engine(
            url, future=True, poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
    else:
        # Wait for a concurrent writer (another tuning worker) instead of failing at once.
        engine = create_engine(url, future=True, connect_args={"timeout": 30})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not pysqlite, emit BEGIN (pysqlite delays it to the first write, so a
        # read-then-write such as numbering a trial would not be one transaction).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys=ON")
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")  # durable enough under WAL
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # Take the write lock up front: two workers that both read and then write would
        # otherwise deadlock on the lock upgrade, which no busy timeout resolves.
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _describe(err: SQLAlchemyError) -> str:
    """The reason of a database error, worded the same way every time."""
    orig = getattr(err, "orig", None)
    code = getattr(orig, "sqlite_errorcode", None)
    if code is not None:
        primary = code & 0xFF  # extended codes keep the primary code in the low byte
        if primary == sqlite3.SQLITE_NOTADB:
            return "the file is not a SQLite database (or it is corrupt or encrypted)"
        if primary == sqlite3.SQLITE_CANTOPEN:
            return "cannot open the database file: check that its directory exists and is writable"
        if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return "the database is locked by another process; try again"
    if isinstance(err, IntegrityError):
        return f"constraint violated: {orig}"
    if isinstance(err, OperationalError):
        return f"database unreachable or failing: {orig}"
    return f"{type(err).__name__}: {orig if orig is not None else err}"


# --------------------------------------------------------------------------------------------
# Row <-> record conversion (the only place both kinds of object meet)


def _device_record(row: Device) -> DeviceRecord:
    return DeviceRecord(
        name=row.name,
        uuid=row.uuid,
        compute_capability=row.compute_capability,
        sm_count=row.sm_count,
        driver_version=row.driver_version,
        cuda_version=row.cuda_version,
    )


def _kernel_version_record(row: KernelVersion) -> KernelVersionRecord:
    return KernelVersionRecord(digest=row.digest, compile_options=row.compile_options)


def _class_record(row: GraphClassRow) -> GraphClass:
    return GraphClass(row.size, row.degree)


def _run_record(row: TuningRun) -> RunRecord:
    key = RunKey(
        device=_device_record(row.device),
        kernel_version=_kernel_version_record(row.kernel_version),
        graph_class=_class_record(row.graph_class),
        algorithm=row.algorithm,
        variant=row.variant,
        kernel=row.kernel,
        strategy=row.strategy,
        instance=row.instance,
        replay=row.replay,
    )
    return RunRecord(
        id=row.id,
        key=key,
        status=RunStatus(row.status),
        budget=row.budget,
        seed=row.seed,
        started_at=row.started_at,
        finished_at=row.finished_at,
        wall_seconds=row.wall_seconds,
    )


def _trial_record(row: Trial) -> TrialRecord:
    return TrialRecord(
        kernel=row.kernel,
        config=KernelConfig(row.block_size, row.l1, row.lanes),
        status=TrialStatus(row.status),
        times_ms=tuple(float(t) for t in json.loads(row.times_ms)),
        applied_l1=row.applied_l1,
        message=row.message,
        number=row.number,
    )


def _launch(relax: str, min_: str, update: str) -> LaunchConfig:
    return LaunchConfig(
        KernelConfig.parse(relax), KernelConfig.parse(min_), KernelConfig.parse(update)
    )


def _best_record(row: BestConfig) -> BestRecord:
    return BestRecord(
        device=_device_record(row.device),
        kernel_version=_kernel_version_record(row.kernel_version),
        graph_class=_class_record(row.graph_class),
        algorithm=row.algorithm,
        variant=row.variant,
        config=_launch(row.relax_label, row.min_label, row.update_label),
        tuned_config=_launch(row.tuned_relax_label, row.tuned_min_label, row.tuned_update_label),
        tuned_median_ms=row.tuned_median_ms,
        default_median_ms=row.default_median_ms,
        speedup=row.speedup,
        n_sources=row.n_sources,
        kept_default=row.kept_default,
        replay=row.replay,
        run_id=row.run_id,
        updated_at=row.updated_at,
    )


def _fill_best(row: BestConfig, best: BestRecord, run_id: int | None) -> None:
    row.relax_label = best.config.relax.label
    row.min_label = best.config.min.label
    row.update_label = best.config.update.label
    row.tuned_relax_label = best.tuned_config.relax.label
    row.tuned_min_label = best.tuned_config.min.label
    row.tuned_update_label = best.tuned_config.update.label
    row.tuned_median_ms = float(best.tuned_median_ms)
    row.default_median_ms = float(best.default_median_ms)
    row.speedup = float(best.speedup)
    row.n_sources = int(best.n_sources)
    row.kept_default = bool(best.kept_default)
    row.replay = bool(best.replay)
    row.run_id = run_id
    row.updated_at = best.updated_at


def _check_times(times: tuple[float, ...]) -> tuple[float, ...]:
    out = tuple(float(t) for t in times)
    for t in out:
        if not math.isfinite(t) or t < 0:
            raise StoreError(
                f"trial time {t!r} ms is invalid: times must be finite and non-negative"
            )
    return out


def _stats(times: tuple[float, ...]) -> dict[str, float | None]:
    if not times:
        return dict.fromkeys(("median_ms", "mean_ms", "std_ms", "min_ms", "max_ms"))
    probe = TrialRecord(kernel="", config=KernelConfig(), status=TrialStatus.OK, times_ms=times)
    return {
        "median_ms": probe.median_ms,  # the records' definition, so reports agree with the store
        "mean_ms": statistics.fmean(times),
        "std_ms": statistics.pstdev(times),
        "min_ms": min(times),
        "max_ms": max(times),
    }


# --------------------------------------------------------------------------------------------
# Export documents


class _Malformed(ValueError):
    """An export document that does not have the expected shape."""


@dataclass(frozen=True)
class _TrialDoc:
    trial: TrialRecord
    created_at: dt.datetime | None


@dataclass(frozen=True)
class _RunDoc:
    run: RunRecord  # ``id`` is the exporting database's id, used only to link best configs
    trials: tuple[_TrialDoc, ...]


@dataclass(frozen=True)
class _ExportDoc:
    devices: tuple[DeviceRecord, ...]
    kernel_versions: tuple[KernelVersionRecord, ...]
    runs: tuple[_RunDoc, ...]
    bests: tuple[BestRecord, ...]  # ``run_id`` refers to a ``_RunDoc.run.id`` of this document


def _field(
    obj: Any, key: str, kind: type | tuple[type, ...], where: str, *, null: bool = False
) -> Any:
    if not isinstance(obj, dict):
        raise _Malformed(f"{where} must be an object, got {type(obj).__name__}")
    if key not in obj:
        raise _Malformed(f"{where} lacks {key!r}")
    value = obj[key]
    if value is None and null:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool) and bool not in kinds:
        raise _Malformed(f"{where}.{key} must be {kinds[0].__name__}, got {value!r}")
    if not isinstance(value, kinds):
        raise _Malformed(f"{where}.{key} must be {kinds[0].__name__}, got {value!r}")
    return value


@contextmanager
def _at(where: str) -> Iterator[None]:
    """Prefix errors of the records' own validation with where in the document they are."""
    try:
        yield
    except _Malformed:
        raise
    except (ValueError, TypeError) as err:
        raise _Malformed(f"{where}: {err}") from err


def _time(text: str | None) -> dt.datetime | None:
    if text is None:
        return None
    value = dt.datetime.fromisoformat(text)
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).isoformat()


def _device_doc(d: DeviceRecord) -> dict[str, Any]:
    return {
        "name": d.name,
        "uuid": d.uuid,
        "compute_capability": d.compute_capability,
        "sm_count": d.sm_count,
        "driver_version": d.driver_version,
        "cuda_version": d.cuda_version,
    }


def _kv_doc(k: KernelVersionRecord) -> dict[str, Any]:
    return {"digest": k.digest, "compile_options": k.compile_options}


def _class_doc(g: GraphClass) -> dict[str, Any]:
    return {"size": g.size, "degree": g.degree}


def _parse_kv(obj: Any, where: str) -> KernelVersionRecord:
    return KernelVersionRecord(
        digest=_field(obj, "digest", str, where),
        compile_options=_field(obj, "compile_options", str, where),
    )


def _parse_class(obj: Any, where: str) -> GraphClass:
    return GraphClass(_field(obj, "size", str, where), _field(obj, "degree", str, where))


def _parse_launch(obj: Any, where: str) -> LaunchConfig:
    return _launch(
        _field(obj, "relax", str, where),
        _field(obj, "min", str, where),
        _field(obj, "update", str, where),
    )


def _parse_document(doc: Any) -> _ExportDoc:
    """Validate a whole export document before anything is written.

    Raises
    ------
    _Malformed
        Naming the offending place, e.g. ``runs[1].trials[0]: block size 999 is invalid``.
    """
    fmt = _field(doc, "format", str, "document")
    if fmt != EXPORT_FORMAT:
        raise _Malformed(f"format is {fmt!r}, expected {EXPORT_FORMAT!r}")
    version = _field(doc, "schema_version", int, "document")
    if version != SCHEMA_VERSION:
        raise _Malformed(
            f"it was exported by schema version {version}; this code reads version {SCHEMA_VERSION}"
        )
    devices: dict[str, DeviceRecord] = {}
    for i, d in enumerate(_field(doc, "devices", list, "document")):
        with _at(f"devices[{i}]"):
            rec = _parse_device(d, f"devices[{i}]")
        devices[rec.uuid] = rec
    kvs = []
    for i, k in enumerate(_field(doc, "kernel_versions", list, "document")):
        with _at(f"kernel_versions[{i}]"):
            kvs.append(_parse_kv(k, f"kernel_versions[{i}]"))
    runs: dict[int, _RunDoc] = {}
    for i, r in enumerate(_field(doc, "runs", list, "document")):
        with _at(f"runs[{i}]"):
            run_doc = _parse_run(r, f"runs[{i}]", devices)
        if run_doc.run.id in runs:
            raise _Malformed(f"runs[{i}].id {run_doc.run.id} appears twice")
        runs[run_doc.run.id] = run_doc
    bests = []
    for i, b in enumerate(_field(doc, "best", list, "document")):
        with _at(f"best[{i}]"):
            best = _parse_best(b, f"best[{i}]", devices)
        if best.run_id is not None and best.run_id not in runs:
            raise _Malformed(f"best[{i}].run {best.run_id} is not among the document's runs")
        bests.append(best)
    return _ExportDoc(tuple(devices.values()), tuple(kvs), tuple(runs.values()), tuple(bests))


def _parse_device(d: Any, where: str) -> DeviceRecord:
    return DeviceRecord(
        name=_field(d, "name", str, where),
        uuid=_field(d, "uuid", str, where),
        compute_capability=_field(d, "compute_capability", str, where),
        sm_count=_field(d, "sm_count", int, where),
        driver_version=_field(d, "driver_version", str, where),
        cuda_version=_field(d, "cuda_version", str, where),
    )


def _device_ref(obj: Any, where: str, devices: dict[str, DeviceRecord]) -> DeviceRecord:
    uuid = _field(obj, "device", str, where)
    if uuid not in devices:
        raise _Malformed(f"{where}.device {uuid!r} is not among the document's devices")
    return devices[uuid]


def _parse_run(r: Any, where: str, devices: dict[str, DeviceRecord]) -> _RunDoc:
    key = RunKey(
        device=_device_ref(r, where, devices),
        kernel_version=_parse_kv(
            _field(r, "kernel_version", dict, where), f"{where}.kernel_version"
        ),
        graph_class=_parse_class(_field(r, "graph_class", dict, where), f"{where}.graph_class"),
        algorithm=_field(r, "algorithm", str, where),
        variant=_field(r, "variant", str, where),
        kernel=_field(r, "kernel", str, where),
        strategy=_field(r, "strategy", str, where),
        instance=_field(r, "instance", str, where),
        replay=_field(r, "replay", bool, where),
    )
    run = RunRecord(
        id=_field(r, "id", int, where),
        key=key,
        status=RunStatus(_field(r, "status", str, where)),
        budget=_field(r, "budget", int, where, null=True),
        seed=_field(r, "seed", int, where),
        started_at=_time(_field(r, "started_at", str, where)),
        finished_at=_time(_field(r, "finished_at", str, where, null=True)),
        wall_seconds=_field(r, "wall_seconds", float, where, null=True),
    )
    trials = []
    for j, t in enumerate(_field(r, "trials", list, where)):
        tw = f"{where}.trials[{j}]"
        with _at(tw):
            trials.append(_parse_trial(t, tw))
    return _RunDoc(run, tuple(trials))


def _parse_trial(t: Any, where: str) -> _TrialDoc:
    times = _field(t, "times_ms", list, where)
    ok = all(
        isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
        for x in times
    )
    if not ok:
        raise _Malformed(f"{where}.times_ms must be a list of finite non-negative numbers")
    trial = TrialRecord(
        kernel=_field(t, "kernel", str, where),
        config=KernelConfig.parse(_field(t, "config", str, where)),
        status=TrialStatus(_field(t, "status", str, where)),
        times_ms=tuple(float(x) for x in times),
        applied_l1=_field(t, "applied_l1", str, where),
        message=_field(t, "message", str, where),
        number=_field(t, "number", int, where),
    )
    return _TrialDoc(trial, _time(_field(t, "created_at", str, where, null=True)))


def _parse_best(b: Any, where: str, devices: dict[str, DeviceRecord]) -> BestRecord:
    return BestRecord(
        device=_device_ref(b, where, devices),
        kernel_version=_parse_kv(
            _field(b, "kernel_version", dict, where), f"{where}.kernel_version"
        ),
        graph_class=_parse_class(_field(b, "graph_class", dict, where), f"{where}.graph_class"),
        algorithm=_field(b, "algorithm", str, where),
        variant=_field(b, "variant", str, where),
        config=_parse_launch(_field(b, "config", dict, where), f"{where}.config"),
        tuned_config=_parse_launch(_field(b, "tuned_config", dict, where), f"{where}.tuned_config"),
        tuned_median_ms=_field(b, "tuned_median_ms", float, where),
        default_median_ms=_field(b, "default_median_ms", float, where),
        speedup=_field(b, "speedup", float, where),
        n_sources=_field(b, "n_sources", int, where),
        kept_default=_field(b, "kept_default", bool, where),
        replay=_field(b, "replay", bool, where),
        run_id=_field(b, "run", int, where, null=True),
        updated_at=_time(_field(b, "updated_at", str, where)),
    )


def _shipped_exports() -> list[tuple[str, str]]:
    """``(name, text)`` of every ``tuning_db/data/*.json`` shipped with the package, by name."""
    root = importlib.resources.files("tuning_db") / "data"
    if not root.is_dir():
        return []
    return [
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in sorted(root.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".json") and entry.is_file()
    ]


# --------------------------------------------------------------------------------------------
# The store


class Store:
    """The tuning database.

    Parameters
    ----------
    url
        Any SQLAlchemy URL (``sqlite:///path``, ``sqlite://`` in memory,
        ``postgresql+psycopg://...``) or a plain file path (a SQLite file). ``None`` opens
        :func:`default_url`, creating its directory when needed.
    seed
        Import the shipped measurements (:meth:`seed_from_package`) when this call creates the
        database. ``None`` (the default) seeds only the default database (``url=None``).

    Raises
    ------
    StoreError
        The database is unreachable, is not a SQLite file, belongs to another application or was
        written by another schema version. The message names the URL and the fix.

    Notes
    -----
    Opening an empty database creates the tables and records :data:`SCHEMA_VERSION`; opening an
    existing one checks that version. A database that holds only Optuna's tables is not foreign:
    our tables (all prefixed ``sssp_``) are added beside them.

    A store on a file or a server may be used from several threads and processes (SQLite
    transactions take the write lock up front, so numbering trials is race-free); an in-memory
    store has a single connection and belongs to one thread at a time.
    """

    def __init__(self, url: str | os.PathLike[str] | None = None, *, seed: bool | None = None):
        is_default = url is None
        text = default_url() if url is None else as_url(url)
        try:
            self._url = make_url(text)
        except SQLAlchemyError as err:
            raise StoreError(f"tuning database {text!r}: not a valid database URL ({err})") from err
        self.url = self._url.render_as_string(hide_password=True)
        self._where = f"tuning database {self.url}"
        if is_default and not os.environ.get(ENV_VAR, "").strip():
            default_path().parent.mkdir(parents=True, exist_ok=True)
        try:
            self._engine = _make_engine(self._url)
        except ImportError as err:
            raise StoreError(
                f"{self._where}: the database driver is not installed ({err}); "
                "install it or use a SQLite URL"
            ) from err
        except SQLAlchemyError as err:
            raise StoreError(f"{self._where}: {_describe(err)}") from err
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        try:
            self.created = self._open(seed=is_default if seed is None else seed)
        except BaseException:
            self._engine.dispose()  # don't keep a refused file open
            raise

    # -- plumbing --------------------------------------------------------------------------

    @contextmanager
    def _session(self) -> Iterator[Session]:
        """The one way into the database: commit on success, roll back and re-raise on error.

        Raises
        ------
        StoreError
            For any SQLAlchemy error, chained to it, naming the database URL.
        """
        session = self._sessions()
        try:
            yield session
            session.commit()
        except SQLAlchemyError as err:
            session.rollback()
            raise StoreError(f"{self._where}: {_describe(err)}") from err
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

    def _open(self, *, seed: bool) -> bool:
        """Create or check the schema; returns whether the database was created."""
        if not self._transact(self._is_new, retries=0):
            return False
        shipped: list[tuple[str, _ExportDoc]] = []
        if seed:
            # Parse before the creating transaction: a broken shipped file must not leave a new,
            # half-seeded database behind (the next open would not try again).
            shipped = [
                (name, self._parse_text(text, f"shipped data {name}"))
                for name, text in _shipped_exports()
            ]

        def create(session: Session) -> bool:
            if not self._is_new(session):  # another process created it meanwhile
                return False
            Base.metadata.create_all(session.connection())
            session.add(SchemaInfo(id=1, version=SCHEMA_VERSION))
            session.flush()
            for name, doc in shipped:
                n = self._import_document(session, doc)
                logger.info("seeded %s with %d records from %s", self.url, n, name)
            logger.info("created %s (schema version %d)", self.url, SCHEMA_VERSION)
            return True

        return self._transact(create, retries=0)

    def _is_new(self, session: Session) -> bool:
        """Whether the database has none of our tables; checks the version of one that has."""
        tables = set(inspect(session.connection()).get_table_names())
        if SCHEMA_TABLE in tables:
            self._check_version(session)
            Base.metadata.create_all(session.connection())  # adds tables of this version only
            return False
        foreign = sorted(tables - OPTUNA_TABLES)
        if foreign:
            shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
            raise StoreError(
                f"{self._where} belongs to another application (tables {shown}; no "
                f"{SCHEMA_TABLE} table): point --db or ${ENV_VAR} at a new file"
            )
        return True

    def _check_version(self, session: Session) -> None:
        versions = session.scalars(select(SchemaInfo.version)).all()
        if len(versions) != 1:
            raise StoreError(
                f"{self._where} has a damaged {SCHEMA_TABLE} table ({len(versions)} rows instead "
                "of 1): move the file away or delete it, and a new database is created"
            )
        if versions[0] != SCHEMA_VERSION:
            raise StoreError(
                f"{self._where} was written by schema version {versions[0]}; this code needs "
                f"{SCHEMA_VERSION}: move the file away or delete it (a new database is created), "
                "or open it with the sssp-tune release that wrote it and export it"
            )

    def close(self) -> None:
        """Release the engine's connections (an in-memory database is gone afterwards)."""
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

    # -- runs ---------------------------------------------------------------------------------

    def open_run(self, key: RunKey, *, budget: int | None, seed: int) -> tuple[RunRecord, bool]:
        """Resume the newest unfinished run of ``key``, or start a new one.

        Parameters
        ----------
        key
            What identifies the run (device, kernel version, class, kernel, strategy, ...).
        budget
            Number of configurations to try; ``None`` for the whole space. A resumed run takes
            the new budget (so an interrupted run can be extended).
        seed
            Seed of a new run. A resumed run keeps its own seed (see the returned record), so its
            search continues as it began.

        Returns
        -------
        (RunRecord, bool)
            The run, now ``RUNNING``, and whether it was resumed (a ``RUNNING`` or
            ``INTERRUPTED`` run of the same key existed).
        """

        def work(session: Session) -> tuple[RunRecord, bool]:
            dev = self._device_row(session, key.device, update=True)
            kv = self._kernel_version_row(session, key.kernel_version)
            gc = self._class_row(session, key.graph_class)
            stmt = (
                select(TuningRun)
                .where(*self._key_clauses(key, dev, kv, gc), TuningRun.status.in_(_OPEN_STATUSES))
                .order_by(TuningRun.started_at.desc(), TuningRun.id.desc())
                .limit(1)
            )
            row = session.scalars(stmt).first()
            if row is not None:
                if row.seed != seed:
                    logger.info(
                        "run %d resumes with its own seed %d (not %d)", row.id, row.seed, seed
                    )
                row.status = RunStatus.RUNNING.value
                row.finished_at = None
                row.budget = budget
                session.flush()
                logger.info("resuming tuning run %d (%s)", row.id, key.graph_class)
                return _run_record(row), True
            row = TuningRun(
                device=dev,
                kernel_version=kv,
                graph_class=gc,
                algorithm=key.algorithm,
                variant=key.variant,
                kernel=key.kernel,
                strategy=key.strategy,
                instance=key.instance,
                replay=key.replay,
                budget=budget,
                seed=seed,
                status=RunStatus.RUNNING.value,
                started_at=utcnow(),
            )
            session.add(row)
            session.flush()
            logger.info("started tuning run %d (%s)", row.id, key.graph_class)
            return _run_record(row), False

        return self._transact(work)

    def run(self, run_id: int) -> RunRecord:
        """The run with id ``run_id``; :class:`StoreError` when there is none."""
        return self._transact(lambda s: _run_record(self._run_row(s, run_id)), retries=0)

    def finish_run(
        self, run_id: int, status: RunStatus, wall_seconds: float | None = None
    ) -> RunRecord:
        """Close a run with ``status`` (``FINISHED``, ``INTERRUPTED``, ``FAILED``).

        ``finished_at`` is set to now (cleared when ``status`` is ``RUNNING``).
        """
        status = RunStatus(status)

        def work(session: Session) -> RunRecord:
            row = self._run_row(session, run_id)
            row.status = status.value
            row.finished_at = None if status is RunStatus.RUNNING else utcnow()
            if wall_seconds is not None:
                row.wall_seconds = float(wall_seconds)
            session.flush()
            return _run_record(row)

        return self._transact(work, retries=0)

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
                )
            if status is not None:
                stmt = stmt.where(TuningRun.status == RunStatus(status).value)
            stmt = stmt.order_by(TuningRun.started_at, TuningRun.id)
            return [_run_record(r) for r in session.scalars(stmt).unique()]

        return self._transact(work, retries=0)

    # -- trials -------------------------------------------------------------------------------

    def _find_trial(self, session: Session, run_id: int, kernel: str, label: str) -> Trial | None:
        stmt = select(Trial).where(
            Trial.run_id == run_id, Trial.kernel == kernel, Trial.config_label == label
        )
        return session.scalars(stmt).one_or_none()

    def _insert_trial(
        self,
        session: Session,
        run_id: int,
        trial: TrialRecord,
        *,
        number: int | None = None,
        created_at: dt.datetime | None = None,
    ) -> tuple[Trial, bool]:
        existing = self._find_trial(session, run_id, trial.kernel, trial.config.label)
        if existing is not None:
            return existing, False
        times = _check_times(trial.times_ms)
        if number is None:
            count = select(func.count()).select_from(Trial).where(Trial.run_id == run_id)
            number = int(session.scalar(count) or 0)
        row = Trial(
            run_id=run_id,
            number=number,
            kernel=trial.kernel,
            config_label=trial.config.label,
            block_size=trial.config.block_size,
            l1=trial.config.l1,
            lanes=trial.config.lanes,
            status=TrialStatus(trial.status).value,
            times_ms=json.dumps(list(times)),
            applied_l1=trial.applied_l1,
            message=trial.message,
            created_at=created_at or utcnow(),
            **_stats(times),
        )
        session.add(row)
        session.flush()
        return row, True

    def add_trial(self, run_id: int, trial: TrialRecord) -> TrialRecord:
        """Record one trial of run ``run_id``; idempotent per (run, kernel, configuration).

        The stored trial gets ``number`` = the count of trials already in the run, and its
        median, mean, (population) standard deviation, min and max computed from ``times_ms``.

        Returns
        -------
        TrialRecord
            The stored trial; when the run already holds this kernel's configuration, that trial
            unchanged (a resumed run never duplicates a measurement).
        """

        def insert(session: Session) -> TrialRecord:
            self._run_row(session, run_id)
            row, _ = self._insert_trial(session, run_id, trial)
            return _trial_record(row)

        def find(session: Session) -> TrialRecord | None:
            row = self._find_trial(session, run_id, trial.kernel, trial.config.label)
            return None if row is None else _trial_record(row)

        try:
            return self._transact(insert, retries=0)
        except StoreError as err:
            if not isinstance(err.__cause__, IntegrityError):
                raise
            # Another worker stored the same configuration between our check and our insert.
            found = self._transact(find, retries=0)
            if found is None:
                raise
            return found

    def trials(self, run_id: int, kernel: str | None = None) -> list[TrialRecord]:
        """The trials of run ``run_id`` (of one ``kernel`` when given), by number."""

        def work(session: Session) -> list[TrialRecord]:
            stmt = select(Trial).where(Trial.run_id == run_id)
            if kernel is not None:
                stmt = stmt.where(Trial.kernel == kernel)
            stmt = stmt.order_by(Trial.number, Trial.id)
            return [_trial_record(r) for r in session.scalars(stmt)]

        return self._transact(work, retries=0)

    # -- best configurations -------------------------------------------------------------------

    @staticmethod
    def _best_row(
        session: Session,
        dev: Device,
        kv: KernelVersion,
        gc: GraphClassRow,
        algorithm: str,
        variant: str,
    ) -> BestConfig | None:
        stmt = select(BestConfig).where(
            BestConfig.device_id == dev.id,
            BestConfig.kernel_version_id == kv.id,
            BestConfig.graph_class_id == gc.id,
            BestConfig.algorithm == algorithm,
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
                row = BestConfig(
                    device=dev,
                    kernel_version=kv,
                    graph_class=gc,
                    algorithm=best.algorithm,
                    variant=best.variant,
                )
                session.add(row)
            _fill_best(row, best, best.run_id)
            session.flush()

        self._transact(work)

    def _best_select(self) -> Any:
        return (
            select(BestConfig)
            .join(BestConfig.device)
            .join(BestConfig.kernel_version)
            .join(BestConfig.graph_class)
        )

    def best(
        self,
        device_uuid: str,
        digest: str,
        graph_class: GraphClass,
        algorithm: str,
        variant: str,
    ) -> BestRecord | None:
        """The stored best configuration of exactly this key, or ``None``.

        When the digest was tuned under several compile-option sets, the newest wins.
        """

        def work(session: Session) -> BestRecord | None:
            stmt = (
                self._best_select()
                .where(
                    Device.uuid == device_uuid,
                    KernelVersion.digest == digest,
                    GraphClassRow.size == graph_class.size,
                    GraphClassRow.degree == graph_class.degree,
                    BestConfig.algorithm == algorithm,
                    BestConfig.variant == variant,
                )
                .order_by(BestConfig.updated_at.desc(), BestConfig.id.desc())
                .limit(1)
            )
            row = session.scalars(stmt).first()
            return None if row is None else _best_record(row)

        return self._transact(work, retries=0)

    def best_for_device(
        self,
        device_uuid: str,
        digest: str | None = None,
        algorithm: str = "crauser",
        variant: str = "successors",
    ) -> list[BestRecord]:
        """Every class's best configuration on one device (for the nearest-class lookup).

        With ``digest=None`` all kernel versions are included. Ordered by class size, then
        degree, newest first within a class.
        """

        def work(session: Session) -> list[BestRecord]:
            stmt = self._best_select().where(
                Device.uuid == device_uuid,
                BestConfig.algorithm == algorithm,
                BestConfig.variant == variant,
            )
            if digest is not None:
                stmt = stmt.where(KernelVersion.digest == digest)
            return [_best_record(r) for r in session.scalars(stmt).unique()]

        out = self._transact(work, retries=0)
        out.sort(key=lambda b: b.updated_at, reverse=True)
        out.sort(key=lambda b: (b.graph_class.nodes, b.graph_class.mean_degree))
        return out

    def all_best(self, device_name: str | None = None) -> list[BestRecord]:
        """All best configurations (of one device name when given), for reports.

        Ordered by device name, class (size, degree), algorithm, variant.
        """

        def work(session: Session) -> list[BestRecord]:
            stmt = self._best_select()
            if device_name is not None:
                stmt = stmt.where(Device.name == device_name)
            return [_best_record(r) for r in session.scalars(stmt).unique()]

        out = self._transact(work, retries=0)
        out.sort(
            key=lambda b: (
                b.device.name,
                b.device.uuid,
                b.graph_class.nodes,
                b.graph_class.mean_degree,
                b.algorithm,
                b.variant,
                b.kernel_version.digest,
                b.kernel_version.compile_options,
            )
        )
        return out

    def devices(self) -> list[DeviceRecord]:
        """Every device the store has seen, by name then UUID."""

        def work(session: Session) -> list[DeviceRecord]:
            stmt = select(Device).order_by(Device.name, Device.uuid)
            return [_device_record(r) for r in session.scalars(stmt)]

        return self._transact(work, retries=0)

    # -- export / import -----------------------------------------------------------------------

    def export_json(self, path: str | os.PathLike[str]) -> None:
        """Write the whole database as a human-readable JSON document.

        The document (``indent=1``, sorted keys, no export timestamp so re-exports diff
        cleanly) holds the schema version, devices, kernel versions, runs with their trials,
        and best configurations. :meth:`import_json` reads it back.
        """

        def work(session: Session) -> dict[str, Any]:
            devices = session.scalars(select(Device).order_by(Device.uuid)).all()
            kvs = session.scalars(
                select(KernelVersion).order_by(KernelVersion.digest, KernelVersion.compile_options)
            ).all()
            runs = session.scalars(select(TuningRun).order_by(TuningRun.id)).unique().all()
            bests = session.scalars(select(BestConfig).order_by(BestConfig.id)).unique().all()
            run_docs = []
            for run in runs:
                rec = _run_record(run)
                trial_rows = session.scalars(
                    select(Trial).where(Trial.run_id == run.id).order_by(Trial.number, Trial.id)
                ).all()
                run_docs.append(
                    {
                        "id": rec.id,
                        "device": rec.key.device.uuid,
                        "kernel_version": _kv_doc(rec.key.kernel_version),
                        "graph_class": _class_doc(rec.key.graph_class),
                        "algorithm": rec.key.algorithm,
                        "variant": rec.key.variant,
                        "kernel": rec.key.kernel,
                        "strategy": rec.key.strategy,
                        "instance": rec.key.instance,
                        "replay": rec.key.replay,
                        "status": rec.status.value,
                        "budget": rec.budget,
                        "seed": rec.seed,
                        "started_at": _iso(rec.started_at),
                        "finished_at": _iso(rec.finished_at),
                        "wall_seconds": rec.wall_seconds,
                        "trials": [
                            {
                                "number": t.number,
                                "kernel": t.kernel,
                                "config": t.config_label,
                                "status": t.status,
                                "times_ms": json.loads(t.times_ms),
                                # Derived, for readers of the file; recomputed on import.
                                "median_ms": t.median_ms,
                                "applied_l1": t.applied_l1,
                                "message": t.message,
                                "created_at": _iso(t.created_at),
                            }
                            for t in trial_rows
                        ],
                    }
                )
            best_docs = []
            for row in bests:
                b = _best_record(row)
                best_docs.append(
                    {
                        "device": b.device.uuid,
                        "kernel_version": _kv_doc(b.kernel_version),
                        "graph_class": _class_doc(b.graph_class),
                        "algorithm": b.algorithm,
                        "variant": b.variant,
                        "config": b.config.as_dict(),
                        "tuned_config": b.tuned_config.as_dict(),
                        "tuned_median_ms": b.tuned_median_ms,
                        "default_median_ms": b.default_median_ms,
                        "speedup": b.speedup,
                        "n_sources": b.n_sources,
                        "kept_default": b.kept_default,
                        "replay": b.replay,
                        "run": b.run_id,
                        "updated_at": _iso(b.updated_at),
                    }
                )
            return {
                "format": EXPORT_FORMAT,
                "schema_version": SCHEMA_VERSION,
                "devices": [_device_doc(_device_record(d)) for d in devices],
                "kernel_versions": [_kv_doc(_kernel_version_record(k)) for k in kvs],
                "runs": run_docs,
                "best": best_docs,
            }

        doc = self._transact(work, retries=0)
        target = Path(path)
        try:
            target.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        except OSError as err:
            raise StoreError(f"cannot write tuning export {target}: {err}") from err
        logger.info(
            "exported %d runs and %d best configs to %s", len(doc["runs"]), len(doc["best"]), target
        )

    def _parse_text(self, text: str, origin: str) -> _ExportDoc:
        try:
            return _parse_document(json.loads(text))
        except (ValueError, TypeError, KeyError) as err:
            # json.JSONDecodeError, _Malformed, ConfigError and UnknownClassError are ValueErrors.
            raise StoreError(f"{origin} is not a valid tuning-database export: {err}") from err

    def import_json(self, path: str | os.PathLike[str]) -> int:
        """Import a document written by :meth:`export_json`, in one transaction.

        Idempotent: devices are matched by UUID, kernel versions by (digest, options), runs by
        their key and start time, trials by (run, kernel, configuration), best configurations by
        their key (the newer ``updated_at`` wins). Records keep their ``replay`` flag.

        Returns
        -------
        int
            Number of runs, trials and best configurations written (0 when all were present).

        Raises
        ------
        StoreError
            The file cannot be read or is malformed; nothing is written then.
        """
        source = Path(path)
        try:
            text = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise StoreError(f"cannot read tuning export {source}: {err}") from err
        doc = self._parse_text(text, str(source))
        n = self._transact(lambda s: self._import_document(s, doc), retries=0)
        logger.info("imported %d records from %s into %s", n, source, self.url)
        return n

    def seed_from_package(self) -> int:
        """Import every ``tuning_db/data/*.json`` shipped with the package.

        Returns the number of records written (0 when nothing is shipped or all is present).
        """
        total = 0
        for name, text in _shipped_exports():
            doc = self._parse_text(text, f"shipped data {name}")
            total += self._transact(lambda s, d=doc: self._import_document(s, d), retries=0)
        return total

    def _import_document(self, session: Session, doc: _ExportDoc) -> int:
        written = 0
        devices: dict[str, Device] = {
            d.uuid: self._device_row(session, d, update=False) for d in doc.devices
        }
        for kv in doc.kernel_versions:
            self._kernel_version_row(session, kv)
        run_rows: dict[int, TuningRun] = {}
        for run_doc in doc.runs:
            rec = run_doc.run
            dev = devices[rec.key.device.uuid]
            kv = self._kernel_version_row(session, rec.key.kernel_version)
            gc = self._class_row(session, rec.key.graph_class)
            stmt = select(TuningRun).where(
                *self._key_clauses(rec.key, dev, kv, gc), TuningRun.started_at == rec.started_at
            )
            row = session.scalars(stmt).first()
            if row is None:
                row = TuningRun(
                    device=dev,
                    kernel_version=kv,
                    graph_class=gc,
                    algorithm=rec.key.algorithm,
                    variant=rec.key.variant,
                    kernel=rec.key.kernel,
                    strategy=rec.key.strategy,
                    instance=rec.key.instance,
                    replay=rec.key.replay,
                    budget=rec.budget,
                    seed=rec.seed,
                    status=rec.status.value,
                    started_at=rec.started_at,
                    finished_at=rec.finished_at,
                    wall_seconds=rec.wall_seconds,
                )
                session.add(row)
                session.flush()
                written += 1
            elif row.status in _OPEN_STATUSES and rec.status.value not in _OPEN_STATUSES:
                # The file saw this run finish after our copy was taken.
                row.status = rec.status.value
                row.finished_at = rec.finished_at
                row.wall_seconds = rec.wall_seconds
                written += 1
            run_rows[rec.id] = row
            for t in run_doc.trials:
                _, inserted = self._insert_trial(
                    session, row.id, t.trial, number=t.trial.number, created_at=t.created_at
                )
                written += inserted
        for best in doc.bests:
            dev = devices[best.device.uuid]
            kv = self._kernel_version_row(session, best.kernel_version)
            gc = self._class_row(session, best.graph_class)
            run_id = None if best.run_id is None else run_rows[best.run_id].id
            row = self._best_row(session, dev, kv, gc, best.algorithm, best.variant)
            if row is None:
                row = BestConfig(
                    device=dev,
                    kernel_version=kv,
                    graph_class=gc,
                    algorithm=best.algorithm,
                    variant=best.variant,
                )
                session.add(row)
            elif row.updated_at >= best.updated_at:
                continue  # ours is as new or newer
            _fill_best(row, best, run_id)
            written += 1
        session.flush()
        return written


def open_store(url: str | os.PathLike[str] | None = None, *, seed: bool | None = None) -> Store:
    """Open the tuning database at ``url`` (the default database when ``None``).

    A thin alias of :class:`Store` for callers (CLIs) that read better with a verb.
    """
    return Store(url, seed=seed)
