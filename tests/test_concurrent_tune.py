"""Concurrent plain ``tune`` commands on one database that does not exist yet: 4 and 8 processes
of ``tune --replay --graph-class deg200 --size 49k``, on a new SQLite file and on PostgreSQL.
Every process exits 0, each tunes a run of its own, and no study holds a configuration twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.databases import database
from tuner import space
from tuning_db import RunStatus, Store

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
COMMAND = ["--replay", "--graph-class", "deg200", "--size", "49k"]


@pytest.mark.parametrize("processes", [4, 8])
@pytest.mark.parametrize("kind", ["file", "postgresql"])
def test_concurrent_plain_tunes_each_tune_a_run_of_their_own(kind, processes, tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONWARNINGS": "ignore"}
    with database(kind, tmp_path) as url:
        if kind == "file":
            assert not (tmp_path / "tuning.sqlite").exists()  # the processes race to create it
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tuner.cli", *COMMAND, "--db", url],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(processes)
        ]
        results = [(p.wait(timeout=540), *p.communicate()) for p in procs]
        for rc, _, err in results:
            assert rc == 0, err
        with Store(url) as store:
            runs = store.runs()
            assert len(runs) == processes, [(r.id, r.status) for r in runs]  # one run per process
            assert {r.status for r in runs} == {RunStatus.FINISHED}
            for run in runs:
                for kernel in ("relax", "min", "update"):
                    labels = [t.config.label for t in store.trials(run.id, kernel)]
                    assert len(labels) == len(set(labels)) == space.size(kernel), (run.id, kernel)
                    # Optuna's own count: no trial beside the measurements either
                    assert len(store.study(run, kernel).trials) == space.size(kernel)
