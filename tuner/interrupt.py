"""Signals during tuning: the command line's one policy (:func:`sssp.cliutil.signal_policy`),
with database code spared.

SIGINT, SIGTERM and SIGHUP unwind a tuning run: it is stored as interrupted, temporary folders
are removed, worker processes are stopped, and the command exits with 128 + the signal's number.
The signal becomes :class:`~sssp.cliutil.Interrupted` where it lands, except:

- Inside the database code (SQLAlchemy, the SQLite and PostgreSQL drivers, Optuna's storage,
  ``tuning_db``) it is noted, not raised. An exception there can leave a connection inside its
  write transaction, referenced by the traceback, and storing the run as interrupted would then
  wait on that lock (SQLite: for its 60 s busy timeout). The next :func:`check` (per trial, per
  class, at the end of the command) raises it instead, after the transaction has ended.
- Inside :func:`held` (a measurement's slot and its trial, written one after the other) it is
  raised when the block ends.
- Inside a weakref callback or a ``__del__`` Python cannot raise it; the noted signal stands in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import FrameType

from sssp.cliutil import check_signals, holding_signals, signal_policy

STORAGE_MODULES = ("sqlalchemy", "sqlite3", "_sqlite3", "psycopg", "optuna.storages", "tuning_db")
"""Packages whose frames a signal is not raised in (see the module docstring)."""


def in_storage(frame: FrameType | None) -> bool:
    """Whether ``frame`` or a caller of it runs code of :data:`STORAGE_MODULES`."""
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if any(name == m or name.startswith(m + ".") for m in STORAGE_MODULES):
            return True
        frame = frame.f_back
    return False


def policy() -> contextlib.AbstractContextManager[None]:
    """The signal policy of a ``tune`` command (or worker), for the duration of a block."""
    return signal_policy(defer=in_storage)


_installed: contextlib.ExitStack | None = None


def install() -> None:
    """Install :func:`policy` for the rest of this process (a worker process's whole life)."""
    global _installed
    if _installed is not None:
        _installed.close()
    _installed = contextlib.ExitStack()
    _installed.enter_context(policy())


def check() -> None:
    """Raise :class:`~sssp.cliutil.Interrupted` if a signal arrived and was held back."""
    check_signals()


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Writes that belong together (see the module docstring): a signal waits for their end."""
    with holding_signals():
        yield
