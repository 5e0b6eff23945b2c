"""Many tuning workers on one database (``tune --workers``), on a SQLite file and on PostgreSQL:
claims share the classes, a worker killed with SIGKILL loses and duplicates nothing."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time

import pytest
from sqlalchemy import create_engine, text

from sssp.errors import TuningError
from tests.databases import database
from tuner import space, workers
from tuner.pipeline import TuneOptions, store_recorded_bests
from tuning_db import Store

pytestmark = pytest.mark.timeout(600)

RECORDED = {str(r.graph_class): r for r in store_recorded_bests()}
# Four classes the other replay tests do not replay.
CLASSES = [RECORDED[c].graph_class for c in ("24k/deg20", "24k/deg200", "49k/deg2", "49k/deg20")]
SPACE = sum(space.size(k) for k in ("relax", "min", "update"))


def test_parse_devices():
    assert workers.parse_devices("0,1") == [0, 1]
    assert workers.parse_devices(None) == []
    for bad in ("0,x", "-1", "1,1"):
        with pytest.raises(TuningError, match="--devices"):
            workers.parse_devices(bad)


def _start(ctx, index: int, url: str):
    opts = TuneOptions(replay=True)
    proc = ctx.Process(
        target=workers._child, args=(index, None, CLASSES, opts, url, None, logging.WARNING)
    )
    proc.start()
    return proc


def _held_by(url: str, pid: int) -> int:
    """Measured trials of the run the worker with ``pid`` holds (0 when it holds none)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            run = conn.execute(
                text("SELECT id FROM sssp_tuning_runs WHERE owner LIKE :o AND status = 'running'"),
                {"o": f"%:{pid}"},
            ).scalar()
    finally:
        engine.dispose()
    if run is None:
        return 0
    with Store(url) as s:
        return len(s.trials(run))


@pytest.mark.parametrize("kind", ["file", "postgresql"])
def test_killed_worker_loses_and_duplicates_nothing(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # Read by each worker process at start. Long enough that a live worker whose beat waits
    # behind three others on two cores keeps its run (3 s was not: CI saw a live worker's run
    # taken over), short enough that the killed worker's run is taken over soon.
    monkeypatch.setenv("SSSP_STALE_SECONDS", "10")
    monkeypatch.setenv("PYTHONWARNINGS", "ignore")
    with database(kind, tmp_path) as url:
        Store(url).close()  # created once, before the workers race to it
        ctx = multiprocessing.get_context("spawn")
        procs = [_start(ctx, i, url) for i in range(4)]
        victim = procs[1]
        deadline = time.monotonic() + 240
        while _held_by(url, victim.pid) < 20:  # mid-run: its class half-measured
            assert time.monotonic() < deadline and victim.is_alive(), "the victim never got going"
            time.sleep(0.2)
        os.kill(victim.pid, signal.SIGKILL)
        for p in procs:
            p.join(timeout=480)
        assert victim.exitcode == -signal.SIGKILL
        assert [p.exitcode for p in procs if p is not victim] == [0, 0, 0]  # the others finish

        resume = _start(ctx, 0, url)  # the same command again
        resume.join(timeout=240)
        assert resume.exitcode == 0

        with Store(url) as store:
            runs = store.runs()
            # One run per class, all finished: the killed worker's run was taken over, not redone.
            assert sorted(str(r.key.graph_class) for r in runs) == sorted(map(str, CLASSES))
            assert {r.status.value for r in runs} == {"finished"}
            for run in runs:
                trials = store.trials(run.id)
                keys = [(t.kernel, t.config.label) for t in trials]
                assert len(keys) == len(set(keys)) == SPACE  # nothing lost or duplicated
            bests = {str(b.graph_class): b for b in store.all_best() if b.replay}
            assert sorted(bests) == sorted(map(str, CLASSES))
            for name, b in bests.items():  # the same results as a one-process run
                assert b.tuned_config == RECORDED[name].tuned_config


def test_tune_workers_command_shares_one_class(tmp_path):
    """``tune --workers 2`` on one class: one worker tunes it, the other finds it taken."""
    import subprocess
    import sys

    db = tmp_path / "w.sqlite"
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PYTHONWARNINGS": "ignore",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }  # never the user's own database
    env.pop("SSSP_TUNING_DB", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tuner.cli",
            "--replay",
            "--graph-class",
            "deg2",
            "--size",
            "24k",
            "--workers",
            "2",
            "--db",
            f"sqlite:///{db}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("24k/deg2")]
    assert len(lines) == 1 and "relax=512-N/x4 min=128-S update=64-A" in lines[0]
    assert "# 1 class(es)" in done.stdout and "by 2 worker(s)" in done.stdout
    with Store(db) as store:
        (run,) = store.runs()
        assert run.status.value == "finished" and len(store.trials(run.id)) == SPACE
    bad = subprocess.run(
        [sys.executable, "-m", "tuner.cli", "--replay", "--all", "--devices", "0,x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and "'x' is not a device ordinal" in bad.stderr


def test_workers_sharing_one_gpu_are_warned_about(monkeypatch, caplog):
    """Measuring workers on one GPU time their kernels over each other's: say so (replay and
    one worker per device are fine)."""

    class Idle:
        def __init__(self, *a, **k):
            self.exitcode = 0

        def start(self):
            pass

        def join(self):
            pass

        def is_alive(self):
            return False

    class Ctx:
        Process = Idle

    monkeypatch.setattr(workers.multiprocessing, "get_context", lambda *_: Ctx())
    with caplog.at_level(logging.WARNING, logger="tuner.workers"):
        workers.run_pool(CLASSES, TuneOptions(), "sqlite://", workers=2, devices=[])
        workers.run_pool(CLASSES, TuneOptions(replay=True), "sqlite://", workers=2, devices=[])
        workers.run_pool(CLASSES, TuneOptions(), "sqlite://", workers=None, devices=[0, 1])
    shared = [r for r in caplog.records if "share GPU" in r.getMessage()]
    assert len(shared) == 1 and "2 workers share GPU 0" in shared[0].getMessage()
