"""The tuning pipeline replayed from the shipped H200 measurements (Kernel Tuner's simulation
mode): search, storage, resume after an interruption, report, and configuration resolution."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import optuna
import pytest

from sssp.classes import GraphClass, paper_classes
from sssp.config import ConfigSource, KernelConfig, LaunchConfig
from sssp.errors import SSSPError
from tuner import pipeline, report, space
from tuner.pipeline import TuneOptions, store_recorded_bests, tune_class
from tuning_db import Store
from tuning_db.provider import pick
from tuning_db.records import KernelVersionRecord

RECORDED = store_recorded_bests()
# A replayed class writes its 240 trials through Optuna's storage (~15 s on a 2-core machine):
# the full replay of every class is `tune --replay --all`; here, three classes of different sizes
# and degrees (test_workers.py replays four more).
SAMPLE = [r for r in RECORDED if str(r.graph_class) in ("24k/deg2", "49k/deg200", "98k/deg1000")]
SPACE = sum(space.size(k) for k in ("relax", "min", "update"))


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_shipped_results_cover_the_measured_classes():
    classes = {r.graph_class for r in RECORDED}
    assert len(classes) >= 11
    assert all(r.device.name == "NVIDIA H200" and not r.replay for r in RECORDED)


@pytest.mark.parametrize("rec", SAMPLE, ids=lambda r: str(r.graph_class))
def test_replay_reproduces_recorded_picks(rec, tmp_path):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with Store(url) as store:
        out = tune_class(rec.graph_class, TuneOptions(replay=True), store=store)
        assert out.best.replay and out.best.tuned_config == rec.tuned_config
        assert out.trials == SPACE
        assert out.best.kept_default == rec.kept_default
        assert out.best.default_median_ms == rec.default_median_ms  # the recorded figures
    # The searches are Optuna studies in the same database, one per kernel.
    summaries = {s.study_name: s for s in optuna.get_all_study_summaries(url)}
    assert len(summaries) == 3
    for kernel in ("relax", "min", "update"):
        (name,) = [n for n in summaries if f"/{kernel}/run-{out.run_id}/replay" in n]
        assert f"{rec.device.uuid}/{rec.kernel_version.digest}/" in name
        assert summaries[name].n_trials == space.size(kernel)
        study = optuna.load_study(study_name=name, storage=url)
        assert study.user_attrs["graph_class"] == str(rec.graph_class)
        best = min((t for t in study.trials if t.state.name == "COMPLETE"), key=lambda t: t.value)
        assert best.user_attrs["measurement"]["config"] == rec.tuned_config.kernel(kernel).label
        assert best.user_attrs["kernel_tuner"]["weighted_ms"] == best.value  # Kernel Tuner's own


def test_interrupted_replay_resumes_without_lost_or_duplicated_trials(tmp_path):
    gc = GraphClass("49k", "deg200")
    url = f"sqlite:///{tmp_path / 'resume.sqlite'}"
    calls = {"n": 0}

    def progress(kernel, trial):
        calls["n"] += 1
        if calls["n"] == 101:
            raise KeyboardInterrupt  # Ctrl-C in the middle of the relax search

    with Store(url) as store, pytest.raises(KeyboardInterrupt):
        tune_class(gc, TuneOptions(replay=True), store=store, progress=progress)
    with Store(url) as store:
        (run,) = store.runs()
        assert run.status.value == "interrupted"
        assert len(store.trials(run.id)) == 101
        out = tune_class(gc, TuneOptions(replay=True), store=store)
        assert out.resumed and out.run_id == run.id
        trials = store.trials(run.id)
    keys = [(t.kernel, t.config.label) for t in trials]
    assert len(keys) == len(set(keys)) == SPACE
    for kernel in ("relax", "min", "update"):
        numbers = [t.number for t in trials if t.kernel == kernel]
        assert numbers == sorted(set(numbers))


def test_partial_retune_never_replaces_a_full_configuration(tmp_path):
    rec = next(r for r in RECORDED if str(r.graph_class) == "49k/deg200")
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    other = LaunchConfig(
        KernelConfig(128, "A"), KernelConfig(64, "N"), KernelConfig(512, "S"), loop="legacy"
    )
    stored = dataclasses.replace(
        rec,
        config=other,
        tuned_config=other,
        speedup=1.5,
        tuned_median_ms=1.0,
        default_median_ms=1.5,
        run_id=None,
    )
    with Store(url) as store:
        store.put_best(stored)
        out = tune_class(rec.graph_class, TuneOptions(replay=True, kernels=("min",)), store=store)
        # relax=128-A min=<replayed> update=512-S has no recorded figures: nothing changes.
        assert store.all_best() == [stored] and out.best == stored
        store.put_best(dataclasses.replace(rec, run_id=None))
        out = tune_class(rec.graph_class, TuneOptions(replay=True, kernels=("min",)), store=store)
        (now,) = store.all_best()
    # The replayed min pick completes the stored full configuration, whose figures still hold.
    assert now.tuned_config == rec.tuned_config and now.replay
    assert (now.default_median_ms, now.tuned_median_ms) == (
        rec.default_median_ms,
        rec.tuned_median_ms,
    )
    assert out.trials == space.size("min")


def test_kernel_tuner_caches_are_private(tmp_path):
    path = pipeline.private_cache_dir("kt-cache")
    assert path == tmp_path / "cache" / "sssp-tune" / "kt-cache"
    assert (path.stat().st_mode & 0o777) == 0o700
    assert (path.parent.stat().st_mode & 0o777) == 0o700
    os.chmod(path, 0o777)
    assert (pipeline.private_cache_dir("kt-cache").stat().st_mode & 0o777) == 0o700


def test_replay_folders_are_removed(tmp_path):
    root = pipeline.private_cache_dir("replay")
    dead = root / "replay-999999999-leftover"  # a process killed with SIGKILL left it
    dead.mkdir()
    gc = GraphClass("24k", "deg2")
    with Store(f"sqlite:///{tmp_path / 'x.sqlite'}") as store:
        with pytest.raises(SSSPError):  # fails after the copy: nothing to complete, no figures
            tune_class(gc, TuneOptions(replay=True, kernels=("update",)), store=store)
    assert list(root.iterdir()) == []


def test_an_interrupt_while_copying_the_recorded_caches_leaves_no_replay_folder(
    tmp_path, monkeypatch
):
    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.shutil, "copyfile", interrupted)
    with Store(f"sqlite:///{tmp_path / 'x.sqlite'}") as store:
        with pytest.raises(KeyboardInterrupt):
            tune_class(GraphClass("24k", "deg2"), TuneOptions(replay=True), store=store)
        assert store.runs() == []  # interrupted before its run was opened
    assert list(pipeline.private_cache_dir("replay").iterdir()) == []


def test_sigterm_removes_the_replay_folder_and_interrupts_the_run(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONWARNINGS": "ignore"}
    db = tmp_path / "t.sqlite"
    # all 12 classes (about 18 s here) so the signal lands mid-run: one class replays in about
    # 2 s, and a SIGTERM during interpreter shutdown would take the default action (-15)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tuner.cli", "--replay", "--all", "--db", f"sqlite:///{db}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    root = tmp_path / "cache" / "sssp-tune" / "replay"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (root.is_dir() and any(root.iterdir())):
        time.sleep(0.1)
    time.sleep(1)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.splitlines() == [
        "tune: interrupted by SIGTERM; the run is stored as interrupted and "
        "resumes on the next call"
    ]
    assert list(root.iterdir()) == []
    with Store(db) as store:
        statuses = [r.status.value for r in store.runs()]
    # the class under way is stored as interrupted (none when the signal fell between two
    # classes), every earlier one as finished, and the later ones never started
    assert set(statuses[:-1]) <= {"finished"} and statuses[-1] in ("interrupted", "finished"), (
        statuses
    )
    assert len(statuses) < 12, statuses


def test_new_default_database_is_seeded_and_renders_table1(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "tuning_db.connection.platformdirs.user_data_dir", lambda *a, **k: str(tmp_path)
    )
    monkeypatch.delenv("SSSP_TUNING_DB", raising=False)
    with Store() as store:
        assert store.created
        seeded = store.all_best()
    # the paper kernels' records (Table 1) and engine 2's searched configurations
    assert [r for r in seeded if not report.is_engine2(r)] == list(RECORDED)
    assert any(report.is_engine2(r) for r in seeded)
    assert report.table1(seeded, fmt="md") == report.table1(RECORDED, fmt="md")


def test_table1_renders_every_paper_class():
    text = report.table1(RECORDED, fmt="md")
    rows = [
        ln
        for ln in text.splitlines()
        if ln.startswith("| 24k") or ln.startswith("| 49k") or ln.startswith("| 98k")
    ]
    assert len(rows) == 9
    by_class = {r.graph_class: r for r in RECORDED}
    for gc in paper_classes():
        if gc in by_class:
            assert by_class[gc].tuned_config.relax.label in text
    for fmt in ("csv", "latex", "html"):
        assert "H200" in report.table1(RECORDED, fmt=fmt)


def test_resolution_exact_nearest_default():
    exact = RECORDED[0]
    rec, src = pick(RECORDED, exact.graph_class)
    assert src is ConfigSource.TUNED_EXACT and rec.graph_class == exact.graph_class
    far = GraphClass("786k", "deg200")
    rec, src = pick(RECORDED, far)
    assert src is ConfigSource.TUNED_NEAREST and rec.graph_class == GraphClass("98k", "deg200")
    rec, src = pick([], far)
    assert rec is None and src is ConfigSource.DEFAULT
    assert LaunchConfig.default().relax.label == "256-N"


def test_of_one_class_the_own_card_then_the_newest_record_wins():
    """Cards of one model keep a record of a class each: the device's own wins, else the newest
    (a class searched again on another card replaces the older search, whatever the order)."""
    import dataclasses
    import datetime as dt

    old = RECORDED[0]
    card = dataclasses.replace(old.device, uuid="GPU-another-card")
    new = dataclasses.replace(old, device=card, updated_at=old.updated_at + dt.timedelta(days=1))
    for records in ([old, new], [new, old]):
        assert pick(records, old.graph_class)[0] is new
        assert pick(records, old.graph_class, old.device.uuid)[0] is old
        assert pick(records, old.graph_class, "GPU-a-third-card")[0] is new


def _h200(rec):
    from sssp.gpu.device import DeviceInfo

    d = rec.device
    cc = tuple(int(x) for x in d.compute_capability.split("."))
    return DeviceInfo(
        0, d.name, d.uuid, cc, d.sm_count, 0, d.driver_version, d.cuda_version, "0000:00:00.0"
    )


def test_tuned_lookup_reads_a_read_only_database_and_falls_back_from_a_broken_one(tmp_path):
    import kernels
    from sssp.graph import Graph
    from sssp.tuned import resolve_config

    # The record's device and class only: it is stored under these engine sources' digest, so
    # the look-up holds whatever kernels the shipped results were measured with.
    rec = RECORDED[0]
    g = Graph.from_edges(4, [0, 1, 2], [1, 2, 3], [5, 6, 7])  # its class is the nearest one's
    path = tmp_path / "t.sqlite"
    # solve(tuned=True) reads engine 2's records: store one of this class
    engine = dataclasses.replace(rec.config, loop="persistent", blocks_per_sm=1, local_limit=0)
    eng = dataclasses.replace(
        rec,
        run_id=None,
        config=engine,
        tuned_config=engine,
        options=engine.options(),
        kernel_version=KernelVersionRecord(
            kernels.digest(kernels.ENGINE_SOURCE_FILE), " ".join(kernels.NVCC_OPTIONS)
        ),
    )
    with Store(f"sqlite:///{path}") as store:
        store.put_best(eng)
    config, source, _ = resolve_config(g, _h200(rec), db=f"sqlite:///file:{path}?mode=ro&uri=true")
    assert source is not ConfigSource.DEFAULT and config == engine
    path.write_bytes(b"")  # truncated
    with pytest.warns(RuntimeWarning, match=f"using the default.*{path}"):
        config, source, detail = resolve_config(g, _h200(rec), db=str(path))
    assert source is ConfigSource.DEFAULT and config == LaunchConfig.default()
    # the result's detail says why, not that nothing is stored
    assert detail.startswith("tuned configuration unavailable (") and str(path) in detail
    path.unlink()  # made again: the reason goes with the next read
    with Store(f"sqlite:///{path}") as store:
        store.put_best(eng)
    config, source, detail = resolve_config(g, _h200(rec), db=str(path))
    assert source is not ConfigSource.DEFAULT and "unavailable" not in detail


def test_tune_report_refuses_a_db_value_that_is_no_database(tmp_path, monkeypatch, capsys):
    from tuner.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["report", "--db", "garbage"]) == 1
    err = capsys.readouterr().err
    assert "'garbage' is neither a database URL nor an existing file" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # no SQLite file named garbage


def test_tune_report_and_show_from_a_read_only_database(tmp_path, capsys):
    from tuner.cli import main

    path = tmp_path / "r.sqlite"
    with Store(f"sqlite:///{path}") as store:
        for rec in RECORDED:
            store.put_best(dataclasses.replace(rec, run_id=None))
    ro = f"sqlite:///file:{path}?mode=ro&uri=true"
    before = path.read_bytes()
    assert main(["report", "--db", ro]) == 0
    out = capsys.readouterr().out
    grid = [
        ln for ln in report.table1(list(RECORDED), fmt="md").splitlines() if ln.startswith("| ")
    ]
    assert len(grid) == 10 and all(ln in out for ln in grid)  # header and 9 rows
    assert main(["show", "--db", ro]) == 0
    assert "NVIDIA H200" in capsys.readouterr().out
    assert path.read_bytes() == before


@pytest.mark.parametrize("kernel", ["relax", "min", "update"])
@pytest.mark.parametrize("variant", ["successors", "predecessors"])
@pytest.mark.parametrize("bits", [(32, 32), (64, 32), (64, 64)])
def test_kernel_tuner_accepts_every_argument_list(kernel, variant, bits):
    """Kernel Tuner checks host arguments against the text of the kernel's signature; with the
    distance and weight types spelled out for the widths, no argument is reported as a mismatch
    (it used to warn three times per class about the typedef'd ones)."""
    import warnings

    from kernel_tuner.util import check_argument_list

    import kernels
    from tuner.measure import replay_problem

    problem = replay_problem(
        kernel, 1000, algorithm="crauser", variant=variant, dist_bits=bits[0], weight_bits=bits[1]
    )
    text = kernels.signature_source(problem.defines)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_argument_list(problem.function, text, problem.arguments)
    # the file's typedefs still say the same: only the spelling in the signatures changed
    assert text.count("typedef") == kernels.source().count("typedef")


def test_sigterm_inside_a_finaliser_is_not_lost_nor_printed():
    """A SIGTERM that lands in a __del__ (where Python cannot raise) is kept as a flag that the
    search loops check, and Python's "Exception ignored ... Traceback" is not printed."""
    code = textwrap.dedent("""
        import os, signal, time
        from tuner import interrupt
        interrupt.install()
        class A:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # the handler runs here, inside __del__
        a = A()
        del a
        try:
            interrupt.check()
            print("lost")
        except KeyboardInterrupt:
            print("interrupted at the check")
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.stdout.strip() == "interrupted at the check" and proc.stderr == ""


def test_an_interrupt_inside_database_code_waits_for_the_next_check():
    """A signal that lands in SQLAlchemy, a driver, Optuna's storage or tuning_db is held back
    (an exception there could leave a connection holding SQLite's write lock while the run is
    being stored as interrupted); the next check() raises it. Elsewhere it raises at once."""
    import sys as _sys

    from sssp import cliutil
    from tuner import interrupt

    namespace = {"__name__": "sqlalchemy.engine.base", "sys": _sys}
    exec("def inside():\n    return sys._getframe()\n", namespace)
    frame = namespace["inside"]()
    assert interrupt.in_storage(frame)
    with interrupt.policy():
        cliutil._handler(signal.SIGTERM, frame)  # held back: no exception here
        with pytest.raises(cliutil.Interrupted) as info:
            interrupt.check()
        assert info.value.signum == signal.SIGTERM and info.value.exit_status == 143

    here = _sys._getframe()
    assert not interrupt.in_storage(here)  # pytest and this test: no database frame
    namespace["__name__"] = "sqlalchemyish"  # a package name that only starts the same
    assert not interrupt.in_storage(namespace["inside"]())
    with interrupt.policy(), pytest.raises(KeyboardInterrupt):
        cliutil._handler(signal.SIGTERM, here)
