"""SIGTERM unwinds a tuning run like Ctrl-C: the run is stored as interrupted and temporary
folders are removed.

The handler raises ``KeyboardInterrupt`` where the signal lands. When that is inside a weakref
callback or a ``__del__`` (a garbage collection), Python prints "Exception ignored" and goes
on, and the run would finish as if nothing had happened; so the handler also leaves a flag that
the search loops check between measurements (:func:`check`).
"""

from __future__ import annotations

import signal
from typing import Any

_pending = False


def _handler(signum: int, frame: Any) -> None:
    global _pending
    _pending = True
    raise KeyboardInterrupt


def install() -> None:
    """Route SIGTERM to :func:`_handler` in this process."""
    global _pending
    _pending = False
    signal.signal(signal.SIGTERM, _handler)


def check() -> None:
    """Raise ``KeyboardInterrupt`` if a SIGTERM arrived and its exception was swallowed."""
    if _pending:
        raise KeyboardInterrupt
