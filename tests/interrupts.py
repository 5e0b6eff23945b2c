"""A check shared by the tests of compiled builds that Ctrl-C must stop."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import ModuleType

import pytest


def assert_ctrl_c_stops(monkeypatch, module: ModuleType, build: Callable[[], object]) -> None:
    """``build()``, which runs its compiled loop through ``module.run_stoppable``, timed once in
    full, then again with SIGINT sent to this thread shortly after the loop started: it must
    raise KeyboardInterrupt in less than half the full build's time."""
    t0 = time.perf_counter()
    build()
    full = time.perf_counter() - t0
    started = threading.Event()
    real = module.run_stoppable

    def announced(*args, **kwargs):
        started.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "run_stoppable", announced)
    main = threading.get_ident()
    sent: list[float] = []

    def interrupt() -> None:
        started.wait()
        time.sleep(min(0.05, full / 10))
        sent.append(time.perf_counter())
        signal.pthread_kill(main, signal.SIGINT)

    watcher = threading.Thread(target=interrupt)
    watcher.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            build()
        stopped = time.perf_counter() - sent[0]
    finally:
        watcher.join()
    assert stopped < full / 2, (stopped, full)
