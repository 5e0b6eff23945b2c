"""SIGTERM unwinds a tuning run like Ctrl-C: the run is stored as interrupted and temporary
folders are removed.

The handler raises ``KeyboardInterrupt`` where the signal lands. When that is inside a weakref
callback or a ``__del__`` (a garbage collection), Python cannot raise it: it would print
"Exception ignored ... Traceback" and go on, and the run would finish as if nothing had happened.
So the handler also leaves a flag that the search loops check between measurements
(:func:`check`), and such a swallowed interrupt is not printed (``sys.unraisablehook``).
"""

from __future__ import annotations

import signal
import sys
from typing import Any

_pending = False


def _unraisable(info: Any) -> None:
    if isinstance(info.exc_value, KeyboardInterrupt) and _pending:
        return  # the flag stands in for it: check() raises it at the next safe point
    sys.__unraisablehook__(info)


def _handler(signum: int, frame: Any) -> None:
    global _pending
    _pending = True
    raise KeyboardInterrupt


def install() -> None:
    """Route SIGTERM to :func:`_handler` in this process."""
    global _pending
    _pending = False
    signal.signal(signal.SIGTERM, _handler)
    sys.unraisablehook = _unraisable


def check() -> None:
    """Raise ``KeyboardInterrupt`` if a SIGTERM arrived and its exception was swallowed."""
    if _pending:
        raise KeyboardInterrupt
