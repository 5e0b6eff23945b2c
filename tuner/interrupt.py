"""SIGTERM (and Ctrl-C) unwind a tuning run: the run is stored as interrupted and temporary
folders are removed.

The handler raises ``KeyboardInterrupt`` where the signal lands, with two exceptions, and leaves
a flag that the search loops and the command line check at safe points (:func:`check`):

- Inside the database code (SQLAlchemy, the SQLite and PostgreSQL drivers, Optuna's storage,
  ``tuning_db``) it does not raise. An exception there can leave a connection inside its write
  transaction, referenced by the traceback, and storing the run as interrupted would then wait
  on that lock (SQLite: for its 60 s busy timeout). The next :func:`check` raises instead, after
  the transaction has ended.
- Inside a weakref callback or a ``__del__`` (a garbage collection) Python cannot raise it: it
  would print "Exception ignored ... Traceback" and go on. Such a swallowed interrupt is not
  printed (``sys.unraisablehook``); the flag stands in for it.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import Any

_pending = False

STORAGE_MODULES = ("sqlalchemy", "sqlite3", "_sqlite3", "psycopg", "optuna.storages", "tuning_db")
"""Packages whose frames an interrupt is not raised in (see the module docstring)."""


def _unraisable(info: Any) -> None:
    if isinstance(info.exc_value, KeyboardInterrupt) and _pending:
        return  # the flag stands in for it: check() raises it at the next safe point
    sys.__unraisablehook__(info)


def in_storage(frame: FrameType | None) -> bool:
    """Whether ``frame`` or a caller of it runs code of :data:`STORAGE_MODULES`."""
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if any(name == m or name.startswith(m + ".") for m in STORAGE_MODULES):
            return True
        frame = frame.f_back
    return False


def _handler(signum: int, frame: FrameType | None) -> None:
    global _pending
    _pending = True
    if not in_storage(frame):
        raise KeyboardInterrupt


def install() -> None:
    """Route SIGTERM and SIGINT to :func:`_handler` in this process."""
    global _pending
    _pending = False
    signal.signal(signal.SIGTERM, _handler)
    signal.signal(signal.SIGINT, _handler)
    sys.unraisablehook = _unraisable


def check() -> None:
    """Raise ``KeyboardInterrupt`` if a signal arrived and was held back or swallowed."""
    if _pending:
        raise KeyboardInterrupt
