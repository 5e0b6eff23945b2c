"""The look-up behind ``solve(tuned=True)``: never fails a solve because of the database.

The records read from a SQLite file are kept for the process, keyed by the file and by its
state (size, modification time and inode of the file and of its write-ahead log): a process that
solves many graphs opens the database once, and a database changed since (a ``tune`` run, an
import) is read again. Other databases (PostgreSQL) have no such cheap state and are read on
every look-up.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from pathlib import Path

from sssp.errors import StoreError

from .records import BestRecord

logger = logging.getLogger(__name__)

_cache: dict[tuple[str, str | None], tuple[tuple, list[BestRecord]]] = {}
_where_cache: dict[tuple, tuple[str, Path, Path]] = {}
_problems: dict[str, str] = {}  # the last look-up's failure, by the database's URL as given
_lock = threading.Lock()


def _file_state(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _where(url: str | None) -> tuple[str, Path, Path] | None:
    """(resolved URL, SQLite file, its write-ahead log) of ``url``, or None when it is not a
    SQLite file or cannot be resolved. Remembered per ``url`` and everything its resolution
    reads (``$SSSP_TUNING_DB``, the user data folder's variables, the working folder): on the
    GPU host resolving it took most of a one-shot ``solve``'s look-up of its kept solver."""
    from .connection import ENV_VAR

    env = os.environ
    key = (url, env.get(ENV_VAR), env.get("XDG_DATA_HOME"), env.get("HOME"), os.getcwd())
    hit = _where_cache.get(key)
    if hit is not None:
        return hit
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from .connection import as_url, default_url, sqlite_file

    try:
        resolved = default_url() if url is None else as_url(url)
        path = sqlite_file(make_url(resolved))
    except (StoreError, ArgumentError):
        return None  # not remembered: a file named by its path may appear
    if path is None:
        return None
    path = path.expanduser().absolute()
    where = (resolved, path, path.with_name(path.name + "-wal"))
    with _lock:
        if len(_where_cache) >= 64:
            _where_cache.clear()
        _where_cache[key] = where
    return where


def state(url: str | None) -> tuple[str, tuple] | None:
    """(resolved URL, a fingerprint of the database's state), or None when the database is not
    a SQLite file (no cheap fingerprint) or the URL cannot be resolved. Two equal fingerprints
    mean nothing was written in between."""
    where = _where(url)
    if where is None:
        return None
    resolved, path, wal = where
    return resolved, (str(path), _file_state(path), _file_state(wal))


def tuned_records(url: str | None, device_name: str | None = None) -> list[BestRecord]:
    """The stored best configurations of ``device_name`` (None: of every GPU) in the database
    at ``url`` (the default database when ``None``).

    A database that cannot be used (missing, unreachable, damaged, of another schema) gives
    ``[]`` and a warning naming it, so the caller falls back to the default configuration. A
    read-only database is read as usual; a look-up never creates a named database file.
    """
    from .store import Store

    before = state(url)
    if before is not None:
        with _lock:
            hit = _cache.get((before[0], device_name))
        if hit is not None and hit[0] == before[1]:
            return list(hit[1])
    try:
        with Store(url, create=False) as store:
            records = store.all_best(device_name=device_name)
    except StoreError as err:
        with _lock:
            _problems[url or ""] = str(err)
        msg = f"tuned configuration unavailable, using the default: {err}"
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
        return []
    with _lock:
        _problems.pop(url or "", None)
    # Opening may have created or seeded the file: key on what is there now, unless the file
    # changed while it was read (another process wrote: the records may predate that write).
    after = state(url)
    if after is not None and (before is None or before[1][1] is None or before == after):
        with _lock:
            _cache[(after[0], device_name)] = (after[1], list(records))
    return records


def problem(url: str | None) -> str | None:
    """Why the last :func:`tuned_records` of ``url`` found the database unusable (its error),
    None when it read it (or has not tried)."""
    with _lock:
        return _problems.get(url or "")
