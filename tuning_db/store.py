"""The tuning database's repository: the only code that opens SQLAlchemy sessions.

:class:`Store` takes and returns the plain records of :mod:`tuning_db.records`; ORM objects
never leave the package. Every session goes through :meth:`Store.transact`, which commits,
rolls back on error and re-raises database errors as :class:`sssp.errors.StoreError` naming the
database. Trials go to Optuna studies in the same database (:mod:`tuning_db.studies`); export,
import and seeding are in :mod:`tuning_db.transfer`.

The default database is the SQLite file ``tuning.sqlite`` in the user data directory; the
environment variable ``SSSP_TUNING_DB`` overrides it with any SQLAlchemy URL (PostgreSQL for
several tuning workers and hosts) or an existing file. A new default database is seeded with the
measurements shipped in ``tuning_db/data/*.json``; an older one takes them when they name a
kernel version it has never seen (:func:`tuning_db.transfer.take_newer_shipped`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from sssp.errors import StoreError

from . import schema, studies, transfer
from .bests import BestsMixin
from .connection import (
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
from .runs import RunsMixin, advisory_lock, lock_number
from .trials import TrialsMixin

if TYPE_CHECKING:
    import optuna

__all__ = ["Store", "open_store"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

_SHIPPED_CHECKED: set[str] = set()
"""Default databases this process has compared with the shipped records (:meth:`Store._take_newer_shipped`)."""


class Store(RunsMixin, TrialsMixin, BestsMixin):
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
    upgrade
        Migrate a database of an older schema revision (``tune upgrade``) instead of refusing it.
    create
        Create the SQLite file of ``url`` when it does not exist (the default). ``False`` for
        commands that only read: a missing file is then a :class:`StoreError` naming it, and
        nothing is created. The default database is created either way.

    Raises
    ------
    StoreError
        The value is neither a URL nor an existing file; the file is missing and ``create`` is
        false; the database is unreachable, empty (0 bytes), damaged, not SQLite, belongs to
        another application or holds another schema revision. The message names the URL and
        the fix.

    Notes
    -----
    A SQLite file this process may not write is opened read-only (``read_only``): reports and
    look-ups work, writes raise :class:`StoreError`. Opening never writes to an existing
    database. A new SQLite file is built whole in a temporary file beside it and then linked
    into place, so that processes opening it at the same moment see either no file or a
    complete database, never an empty one; one of them creates it, the others open it.
    """

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        seed: bool | None = None,
        upgrade: bool = False,
        create: bool = True,
        _in_place: bool = False,
    ):
        is_default = url is None
        text_url = default_url() if url is None else _url_text(url)
        try:
            self._url = make_url(text_url)
        except (SQLAlchemyError, ValueError) as err:
            raise StoreError(
                f"tuning database {text_url!r}: not a valid database URL ({err})"
            ) from err
        self.url = self._url.render_as_string(hide_password=True)
        self.where = f"tuning database {self.url}"
        """How messages name this database."""
        seed = is_default if seed is None else seed
        path = sqlite_file(self._url)
        made = False
        if path is not None and not path.exists() and not _in_place:
            if is_default and not os.environ.get(ENV_VAR, "").strip():
                default_path().parent.mkdir(parents=True, exist_ok=True)
            elif not create:
                raise StoreError(
                    f"{self.where}: no such file {path} (this command only reads a "
                    "database and creates none: check the path)"
                )
            if not is_read_only(self._url):
                made = self._create_sqlite_file(path, seed=seed)
        if path is not None and path.exists() and not _in_place:
            check_sqlite_file(path, self.where)
            if not is_read_only(self._url) and not writable(path):
                logger.info("%s is not writable here: opened read-only", self.where)
                self._url = read_only_url(self._url, path)
        self.read_only = is_read_only(self._url)
        self.backend = self._url.get_backend_name()
        """The SQLAlchemy dialect: ``"sqlite"`` or ``"postgresql"``."""
        self.shared = not is_sqlite_memory(self._url)
        """Whether other processes can open this database (not an in-memory one)."""
        try:
            self._engine = make_engine(self._url)
        except ImportError as err:
            raise StoreError(
                f"{self.where}: the database driver is not installed ({err}); "
                "install it or use a SQLite URL"
            ) from err
        except SQLAlchemyError as err:
            raise StoreError(f"{self.where}: {describe(err)}") from err
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        self._storage: optuna.storages.RDBStorage | None = None
        try:
            self.created = self._open(seed=seed, upgrade=upgrade) or made
        except BaseException:
            self._engine.dispose()  # don't keep a refused file open
            raise
        if is_default and seed and not self.created and not self.read_only and not _in_place:
            self._take_newer_shipped()

    def _take_newer_shipped(self) -> None:
        """A default database made by an older version of the package takes the records shipped
        since (:func:`tuning_db.transfer.take_newer_shipped`), once per process and database.
        A database busy or refusing the writes is left as it is, with a warning: the look-up
        goes on with what it holds."""
        if self.url in _SHIPPED_CHECKED:
            return
        _SHIPPED_CHECKED.add(self.url)
        try:
            n = transfer.take_newer_shipped(self)
        except StoreError as err:
            logger.warning("%s: the newer shipped records were not imported: %s", self.where, err)
            return
        if n:
            logger.info("%s took %d records shipped since it was made", self.where, n)

    def _create_sqlite_file(self, path: Path, *, seed: bool) -> bool:
        """Build a new database (schema, Optuna's tables, seeds) in a temporary file beside
        ``path``, then link it into place unless another process got there first; returns
        whether this call created ``path``.

        SQLite creates a file at its first connection and fills it at the first commit: a
        second process that opened the path in between found an empty file, which the opening
        checks rightly refuse. A hard link appears whole, and only if nothing is there yet.
        """
        if not path.parent.is_dir():
            raise StoreError(
                f"{self.where}: cannot open the database file: its directory "
                f"{path.parent} does not exist"
            )
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.new")
        try:
            try:
                Store(
                    self._url.set(database=str(tmp)).render_as_string(hide_password=False),
                    seed=seed,
                    _in_place=True,
                ).close()
            except StoreError as err:
                raise StoreError(str(err).replace(str(tmp), str(path))) from err
            # One self-contained file: the write-ahead log folded back in and removed.
            conn = sqlite3.connect(tmp)
            try:
                conn.execute("PRAGMA journal_mode=DELETE").fetchall()
            finally:
                conn.close()
            try:
                os.link(tmp, path)
            except FileExistsError:
                logger.info("%s was created by another process meanwhile", self.where)
                return False
            except OSError as err:
                # A file system without hard links: a rename is atomic too, but replaces a file
                # created meanwhile; take it only when none is there.
                logger.debug("no hard link for %s (%s): renaming", path, err)
                if path.exists():
                    return False
                os.replace(tmp, path)
            return True
        except OSError as err:
            raise StoreError(
                f"{self.where}: cannot create the database file: {err.strerror or err}"
            ) from err
        finally:
            for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
                with contextlib.suppress(OSError):
                    leftover.unlink()

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
            raise StoreError(f"{self.where}: {describe(err)}") from err
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def transact(self, work: Callable[[Session], _T], *, retries: int = 1) -> _T:
        """Run ``work`` in one session (through :meth:`_session`: committed, rolled back on
        error, database errors as :class:`StoreError`) and return its result; retry up to
        ``retries`` times when a concurrent writer won a unique key. The store's parts and
        :mod:`tuning_db.transfer` write through this, with the key rows of
        :mod:`tuning_db.rows`."""
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

    def _open(self, *, seed: bool, upgrade: bool = False) -> bool:
        """Check the schema, or create it in a new database; returns whether it was created."""

        def check(session: Session) -> str | None:
            conn = session.connection()
            problem = schema.check(conn, self.where)
            if problem is None and self._url.get_backend_name() == "sqlite":
                result = conn.exec_driver_sql("PRAGMA quick_check").scalar()
                if result != "ok":
                    raise StoreError(f"{self.where} is damaged (SQLite quick_check: {result})")
            return problem

        problem = self.transact(check, retries=0)
        if isinstance(problem, schema.Legacy) and upgrade and not self.read_only:
            self._convert_schema_1()
            return False
        if isinstance(problem, schema.Outdated) and upgrade and not self.read_only:
            revision = self.upgrade()
            logger.info("upgraded %s to schema revision %s", self.url, revision)
            return False
        if problem is None:
            return False
        if problem != "new":
            raise StoreError(problem)
        if self.read_only:
            raise StoreError(f"{self.where} is read-only and holds no tuning database")
        # Parse before the creating transaction: a broken shipped file must not leave a new,
        # half-seeded database behind (the next open would not try again).
        shipped = transfer.shipped_documents() if seed else []

        def create(session: Session) -> bool:
            conn = session.connection()
            if self._url.get_backend_name() == "postgresql":
                advisory_lock(session, "create")
            if schema.check(conn, self.where) != "new":  # another process created it meanwhile
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

        created = self.transact(create, retries=0)
        with studies.optuna_errors(self.where):
            self.storage  # noqa: B018 - Optuna's tables belong in every new database
        return created

    @property
    def storage(self) -> optuna.storages.RDBStorage:
        """Optuna's RDB storage on this database (opened on first use)."""
        if self._storage is None:
            if self.read_only:
                raise StoreError(f"{self.where} is read-only here: trials cannot be written")
            memory = None
            if is_sqlite_memory(self._url):
                memory = self._engine.raw_connection().driver_connection
            with studies.optuna_errors(self.where), self._optuna_lock():
                self._storage = studies.make_storage(self._url, memory_connection=memory)
        return self._storage

    @contextmanager
    def _optuna_lock(self) -> Iterator[None]:
        """On PostgreSQL, one process at a time opens Optuna's storage: it creates its tables
        in a new database, and two processes creating them at once collide in PostgreSQL's
        catalog (a duplicate key in ``pg_type``). SQLite's write lock serialises that itself."""
        if self._url.get_backend_name() != "postgresql":
            yield
            return
        key = {"k": lock_number("optuna-storage")}
        with self._engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), key)
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), key)
                conn.commit()

    def _convert_schema_1(self) -> None:
        """Move a schema-1 database to the current tables and its trials to Optuna studies.

        The old tables are read and validated first; a SQLite file gets a JSON copy of them
        beside it (``<file>.schema1.json``) before anything changes, since the trials are
        written by Optuna's storage after the tables' transaction.
        """
        from . import export
        from . import schema_v1 as legacy

        def read(session: Session) -> str:
            return json.dumps(legacy.read_schema_1(session.connection()), indent=1, sort_keys=True)

        text_doc = self.transact(read, retries=0)
        doc = export.parse_text(text_doc, f"{self.where} (schema 1)")
        path = sqlite_file(self._url)
        if path is not None:
            backup = path.with_name(path.name + ".schema1.json")
            try:
                backup.write_text(text_doc + "\n", encoding="utf-8")
            except OSError as err:
                raise StoreError(
                    f"cannot write the copy {backup} before converting: {err}"
                ) from err
            logger.warning("schema-1 tables of %s copied to %s", self.url, backup)

        def convert(session: Session) -> list:
            conn = session.connection()
            legacy.drop_schema_1(conn)
            schema.upgrade(conn)
            return transfer.import_rows(self, session, doc)[1]

        pending = self.transact(convert, retries=0)
        for run, trials in pending:
            self.add_trials(run, trials)
        logger.info("converted %s from schema 1 to revision %s", self.url, schema.head_revision())

    def upgrade(self) -> str:
        """Migrate the project's tables to this code's revision; returns that revision."""
        if self._url.get_backend_name() == "sqlite":
            return self._upgrade_sqlite()

        def work(session: Session) -> str:
            schema.upgrade(session.connection())
            return schema.head_revision()

        return self.transact(work, retries=0)

    def _upgrade_sqlite(self) -> str:
        """SQLite changes a table's constraints by copying the table, which its foreign keys
        forbid while they are on (the rows that refer to it would lose their parent for a
        moment); SQLite's own procedure turns them off around the change, outside any
        transaction, and checks every reference before the commit."""
        with self._engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            assert raw is not None  # an open connection's
            raw.execute("PRAGMA foreign_keys=OFF")
            try:
                with conn.begin():
                    schema.upgrade(conn)
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
                    if broken:
                        raise StoreError(
                            f"{self.where}: the upgrade would break {len(broken)} references "
                            f"(first: {tuple(broken[0])}); nothing was changed"
                        )
            except SQLAlchemyError as err:
                raise StoreError(f"{self.where}: {describe(err)}") from err
            finally:
                raw.execute("PRAGMA foreign_keys=ON")
        return schema.head_revision()

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

    # -- export / import (tuning_db.transfer) ----------------------------------------------

    def export_json(
        self,
        path: str | os.PathLike[str],
        *,
        device_name: str | None = None,
        kernel: str | None = None,
        trials: bool = True,
        newest: bool = False,
    ) -> None:
        """Write the database, or one GPU model's records of one kernel, as a JSON document
        (see :func:`transfer.export_json`)."""
        transfer.export_json(
            self,
            Path(path),
            device_name=device_name,
            kernel=kernel,
            trials=trials,
            newest=newest,
        )

    def import_json(self, path: str | os.PathLike[str], *, trials: bool = True) -> int:
        """Import a document written by :meth:`export_json` (see :func:`transfer.import_json`)."""
        return transfer.import_json(self, Path(path), trials=trials)

    def seed_from_package(self) -> int:
        """Import the runs and best configurations of every shipped ``tuning_db/data/*.json``."""
        return sum(
            transfer.import_document(self, doc, trials=False)
            for _, doc in transfer.shipped_documents()
        )


def _url_text(url: str | os.PathLike[str]) -> str:
    from .connection import as_url

    return as_url(url)


def open_store(url: str | os.PathLike[str] | None = None, *, seed: bool | None = None) -> Store:
    """Open the tuning database at ``url`` (the default database when ``None``)."""
    return Store(url, seed=seed)
