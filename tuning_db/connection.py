"""Where the tuning database is and how to reach it: URL policy, SQLite checks, SQLAlchemy
engines, and the one wording of every database error.

* ``--db`` / ``$SSSP_TUNING_DB`` take an SQLAlchemy URL or the path of an *existing* SQLite file;
  anything else is refused (a typo must not silently create a new, empty database).
* An existing SQLite file is checked before it is used: an empty (0-byte), foreign or damaged
  file is refused with its path, never recreated.
* A SQLite file this process cannot write is opened read-only, so reports and tuned look-ups
  still work from it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

import platformdirs
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from sssp.errors import StoreError

logger = logging.getLogger(__name__)

ENV_VAR = "SSSP_TUNING_DB"
APP_NAME = "sssp-tune"
DB_FILENAME = "tuning.sqlite"
SQLITE_HEADER = b"SQLite format 3\x00"


def default_path() -> Path:
    """The default database file: ``tuning.sqlite`` in the user data directory."""
    return Path(platformdirs.user_data_dir(APP_NAME)) / DB_FILENAME


def as_url(text: str | os.PathLike[str]) -> str:
    """An SQLAlchemy URL for ``text``: URLs pass through, an existing file becomes a SQLite URL.

    Raises
    ------
    StoreError
        ``text`` is neither a URL nor the path of an existing file.
    """
    s = os.fspath(text).strip()
    if "://" in s:
        return s
    path = Path(s).expanduser()
    if not path.is_file():
        raise StoreError(
            f"tuning database {s!r} is neither a database URL nor an existing file: pass a URL "
            f"such as sqlite:///{path.absolute()} to create a new SQLite file there"
        )
    return f"sqlite:///{path.absolute()}"


def default_url() -> str:
    """The database URL used when none is given.

    ``$SSSP_TUNING_DB`` (a URL or an existing file) when set, else the SQLite file
    :func:`default_path`.
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return as_url(env)
    return f"sqlite:///{default_path()}"


def is_sqlite_memory(url: URL) -> bool:
    return url.get_backend_name() == "sqlite" and (
        url.database in (None, "", ":memory:") or "mode=memory" in str(url)
    )


def sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite URL (``None`` for other databases and in-memory ones)."""
    if url.get_backend_name() != "sqlite" or is_sqlite_memory(url):
        return None
    name = str(url.database)
    if name.startswith("file:"):  # URI filename (``?uri=true``)
        name = name[5:].split("?", 1)[0]
    return Path(name)


def check_sqlite_file(path: Path, where: str) -> None:
    """Refuse an existing file that is not an intact SQLite database (checked before opening,
    so that a damaged file is never taken for a new one)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as err:
        raise StoreError(f"{where}: cannot read the file: {err.strerror}") from err
    if size == 0:
        raise StoreError(
            f"{where}: the file is empty (0 bytes), so it is not a tuning database (it is "
            "not recreated): delete it, or restore it from a backup or an export"
        )
    if head != SQLITE_HEADER:
        raise StoreError(f"{where}: {NOT_A_DATABASE}")


NOT_A_DATABASE = "the file is not a SQLite database (or it is corrupt or encrypted)"


def writable(path: Path) -> bool:
    """Whether this process may write the SQLite file and its journal beside it."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def read_only_url(url: URL, path: Path) -> URL:
    """The URL opening ``path`` read-only (SQLite URI filename, ``mode=ro``)."""
    return url.set(database=f"file:{path.absolute()}", query={"mode": "ro", "uri": "true"})


def is_read_only(url: URL) -> bool:
    return url.get_backend_name() == "sqlite" and (
        url.query.get("mode") == "ro" or "mode=ro" in str(url.database)
    )


def make_engine(url: URL, **kwargs: Any) -> Engine:
    """An engine for ``url``; SQLite files get WAL, foreign keys and up-front write locks."""
    if url.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, **kwargs)
    memory = is_sqlite_memory(url)
    read_only = is_read_only(url)
    if memory:
        # One connection for the whole store: each new connection would be a new empty database.
        engine = create_engine(
            url, poolclass=StaticPool, connect_args={"check_same_thread": False}, **kwargs
        )
    else:
        # Wait for a concurrent writer (another tuning worker) instead of failing at once.
        engine = create_engine(url, connect_args={"timeout": 60}, **kwargs)
    sqlite_pragmas(engine, wal=not memory and not read_only)
    return engine


def sqlite_pragmas(engine: Engine, *, wal: bool) -> None:
    """Per-connection settings of a SQLite engine (ours and Optuna's alike)."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not pysqlite, emit BEGIN (pysqlite delays it to the first write, so a
        # read-then-write such as claiming a run would not be one transaction).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys=ON")
            if wal:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")  # durable enough under WAL
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # Take the write lock up front: two workers that both read and then write would
        # otherwise deadlock on the lock upgrade, which no busy timeout resolves. A read-only
        # connection cannot take it, and needs no lock.
        connection.exec_driver_sql("BEGIN" if not wal else "BEGIN IMMEDIATE")


def describe(err: BaseException) -> str:
    """The reason of a database error, worded the same way every time."""
    orig = getattr(err, "orig", None) or err.__cause__ or err
    code = getattr(orig, "sqlite_errorcode", None)
    if code is not None:
        primary = code & 0xFF  # extended codes keep the primary code in the low byte
        if primary in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
            return NOT_A_DATABASE
        if primary == sqlite3.SQLITE_CANTOPEN:
            return "cannot open the database file: check that its directory exists and is writable"
        if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return "the database is locked by another process; try again"
        if primary == sqlite3.SQLITE_READONLY:
            return "the database is read-only here: writing needs a database you may write"
    if isinstance(err, IntegrityError):
        return f"constraint violated: {orig}"
    if isinstance(err, OperationalError):
        return f"database unreachable or failing: {orig}"
    if isinstance(err, SQLAlchemyError):
        return f"{type(err).__name__}: {orig}"
    return f"{type(err).__name__}: {err}"
