"""Many tuning workers on one database: ``tune run``/``tune engine`` with ``--workers N`` and
``--devices 0,1,...``.

Each worker is a process with at most one GPU (``CUDA_VISIBLE_DEVICES`` is set to its device
before CUDA is touched, so it sees its GPU as device 0). Workers share the work through the
database, not through this process: each goes through the classes (starting at a different one)
and claims a class's run with :meth:`tuning_db.Store.claim_run`, which gives a run to one worker
at a time. The same command on several hosts against one PostgreSQL URL therefore shares the
work too. A worker renews its run's and its trial's heartbeats; when a worker is killed, its run
is taken over by another worker once the heartbeat is stale (``$SSSP_STALE_SECONDS``, 30 s), and
its unfinished trial is failed by Optuna's stale-trial check and measured again. A class with a
finished run of the same key counts as done.

Workers die with their parent: SIGINT, SIGTERM or SIGHUP to ``tune`` stops every worker (each
stores its run as interrupted), and a worker whose parent is gone without a word (SIGKILL) gets
SIGTERM from the kernel (Linux's parent-death signal) or, elsewhere, from its own watch of the
parent's process id, so that no worker keeps a GPU busy after the command was killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Any

from sssp.classes import GraphClass
from sssp.errors import SSSPError, TuningError

from . import interrupt

log = logging.getLogger(__name__)


def parse_devices(text: str | None) -> list[int]:
    """``"0,1"`` -> ``[0, 1]``; a usage error names the bad value."""
    if not text:
        return []
    out = []
    for part in text.split(","):
        try:
            value = int(part)
        except ValueError:
            value = -1
        if value < 0:
            raise TuningError(
                f"--devices {text!r}: {part!r} is not a device ordinal (e.g. --devices 0,1)"
            )
        out.append(value)
    if len(set(out)) != len(out):
        raise TuningError(f"--devices {text!r} names a device twice")
    return out


def worker(
    index: int,
    device: int | None,
    classes: list[GraphClass],
    opts: Any,
    db: str | None,
    cache_dir: str | None,
) -> int:
    """One worker: tune every class it can claim until all are finished; returns the number of
    classes it tuned. ``opts`` says what is tuned: :class:`tuner.pipeline.TuneOptions` the
    kernels (``tune run``), :class:`tuner.class_search.EngineOptions` the class's structural
    choices (``tune engine``)."""
    if device is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(device)
        opts = dataclasses.replace(opts, device=0)
    from pathlib import Path

    from tuning_db import Store, studies

    from .driver import worker_id

    tune_class, summary = job(opts)

    owner = worker_id()
    label = " [REPLAY of recorded measurements]" if opts.replay else ""
    pending = classes[index % len(classes) :] + classes[: index % len(classes)] if classes else []
    tuned = 0
    with Store(db) as store:
        while pending:
            busy = []
            for gc in pending:
                state: dict[str, str] = {}

                def claim(key, state=state):
                    got = store.claim_run(key, budget=opts.budget, seed=opts.seed, owner=owner)
                    if isinstance(got, str):
                        state["claim"] = got
                        return None
                    return got

                extra = {} if cache_dir is None else {"cache_root": Path(cache_dir)}
                out = tune_class(gc, opts, store=store, claim=claim, **extra)
                if out is None:
                    if state.get("claim") == "busy":
                        busy.append(gc)
                    elif state.get("claim") == "finished":
                        log.info("%s: a finished run of this key holds it: nothing to do", gc)
                    continue
                tuned += 1
                print(
                    f"{gc}{label}: {summary(out)}  [worker {index} ({owner}), {out.trials} "
                    f"trials, {out.wall_seconds:.1f} s{', resumed' if out.resumed else ''}]",
                    flush=True,
                )
            pending = busy
            if pending:  # held by live workers: wait, and take over any whose worker died
                time.sleep(max(1.0, studies.HEARTBEAT_SECONDS))
    return tuned


def job(opts: Any) -> tuple[Any, Any]:
    """(``tune_class``, ``summary``) of what ``opts`` tunes (see :func:`worker`)."""
    from .class_search import EngineOptions

    if isinstance(opts, EngineOptions):
        from . import class_search

        return class_search.tune_class, class_search.summary
    from . import pipeline

    return pipeline.tune_class, pipeline.summary


PARENT_WATCH_SECONDS = 1.0
"""How often a worker checks that its parent is still there (where no parent-death signal)."""
_PR_SET_PDEATHSIG = 1
STOP_GRACE_SECONDS = 90.0
"""How long stopped workers get to store their runs before they are killed (a worker waits up to
60 s for SQLite's write lock)."""


def die_with_parent(parent: int) -> None:
    """Make this process get SIGTERM when process ``parent`` (its parent) ends."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    def watch() -> None:
        # Also where prctl did its work: it fires only for deaths after the call, and the
        # parent may have gone before.
        while os.getppid() == parent:
            time.sleep(PARENT_WATCH_SECONDS)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="sssp-parent-watch", daemon=True).start()


def _child(
    index: int,
    device: int | None,
    classes: list[GraphClass],
    opts: Any,
    db: str | None,
    cache_dir: str | None,
    level: int,
    parent: int | None = None,
) -> None:
    interrupt.install()  # before anything long: a signal must find the policy in place
    if parent is not None:
        die_with_parent(parent)
    logging.basicConfig(
        level=level, format=f"%(levelname)s worker {index} %(name)s: %(message)s", stream=sys.stderr
    )
    try:
        worker(index, device, classes, opts, db, cache_dir)
    except SSSPError as err:
        print(f"tune: worker {index}: error: {err}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt as err:
        # The parent says it in one line; the worker's own exit status says which signal.
        sys.exit(getattr(err, "exit_status", 130))


def run_pool(
    classes: list[GraphClass],
    opts: Any,
    db: str | None,
    *,
    workers: int | None,
    devices: list[int],
    cache_dir: str | None = None,
) -> None:
    """Run the workers (one per device when ``devices`` are given) and wait for them.

    Raises
    ------
    TuningError
        A worker failed (its own message is on stderr).
    """
    n = workers or len(devices) or 1
    if devices and n != len(devices):
        raise TuningError(f"--workers {n} with {len(devices)} devices: give one worker per device")
    if n > 1 and not devices and not opts.replay:
        # Workers that share a GPU time their kernels while the other's run on the same device.
        log.warning(
            "%d workers share GPU %d: their kernel timings disturb each other; give them "
            "one GPU each with --devices (several hosts: one PostgreSQL --db)",
            n,
            opts.device,
        )
    ctx = multiprocessing.get_context("spawn")  # no CUDA or database state is inherited
    level = logging.getLogger().getEffectiveLevel()
    procs = [
        ctx.Process(
            target=_child,
            name=f"tune-worker-{i}",
            args=(
                i,
                devices[i] if devices else None,
                classes,
                opts,
                db,
                cache_dir,
                level,
                os.getpid(),
            ),
        )
        for i in range(n)
    ]
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.join()
    except BaseException:
        stop(procs)
        raise
    failed = [(p.name, p.exitcode) for p in procs if p.exitcode != 0]
    if any(code is not None and code > 128 for _, code in failed):
        interrupt.check()  # a signal to this command too: say that, not "a worker failed"
    if failed:
        raise TuningError(
            "worker(s) failed: "
            + ", ".join(f"{name} (exit {code})" for name, code in failed)
            + "; run the same command again to resume"
        )


def stop(procs: list[Any]) -> None:
    """SIGTERM every live worker (each stores its run as interrupted), wait for them, and kill
    any that has not ended within :data:`STOP_GRACE_SECONDS`."""
    for p in procs:
        if p.pid is not None and p.is_alive():
            p.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for p in procs:
        if p.pid is None:
            continue
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            log.warning("%s did not stop within %.0f s: killed", p.name, STOP_GRACE_SECONDS)
            p.kill()
            p.join()
