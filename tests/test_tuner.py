"""The tuning pipeline replayed from the shipped H200 measurements (Kernel Tuner's simulation
mode): search, storage, resume after an interruption, report, and configuration resolution."""

from __future__ import annotations

import pytest

from sssp.classes import GraphClass, paper_classes
from sssp.config import ConfigSource, LaunchConfig
from sssp.tuned import pick
from tuner import report, space
from tuner.pipeline import TuneOptions, store_recorded_bests, tune_class
from tuning_db import Store

RECORDED = store_recorded_bests()


def test_shipped_results_cover_the_measured_classes():
    classes = {r.graph_class for r in RECORDED}
    assert len(classes) >= 11
    assert all(r.device.name == "NVIDIA H200" and not r.replay for r in RECORDED)


@pytest.mark.parametrize("rec", RECORDED, ids=lambda r: str(r.graph_class))
def test_replay_reproduces_recorded_picks(rec, tmp_path):
    with Store(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        out = tune_class(rec.graph_class, TuneOptions(replay=True), store=store)
        assert out.best.replay and out.best.tuned_config == rec.tuned_config
        assert out.trials == sum(space.size(k) for k in ("relax", "min", "update"))
        assert out.best.kept_default == rec.kept_default


def test_interrupted_replay_resumes_without_lost_or_duplicated_trials(tmp_path, monkeypatch):
    gc = GraphClass("49k", "deg200")
    url = f"sqlite:///{tmp_path / 'resume.sqlite'}"
    real_add = Store.add_trial
    calls = {"n": 0}

    def flaky_add(self, run_id, trial):
        calls["n"] += 1
        if calls["n"] == 101:
            raise KeyboardInterrupt  # Ctrl-C in the middle of the relax search
        return real_add(self, run_id, trial)

    monkeypatch.setattr(Store, "add_trial", flaky_add)
    with Store(url) as store, pytest.raises(KeyboardInterrupt):
        tune_class(gc, TuneOptions(replay=True), store=store)
    monkeypatch.setattr(Store, "add_trial", real_add)
    with Store(url) as store:
        (run,) = store.runs()
        assert run.status.value == "interrupted"
        assert len(store.trials(run.id)) == 100
        out = tune_class(gc, TuneOptions(replay=True), store=store)
        assert out.resumed and out.run_id == run.id
        trials = store.trials(run.id)
    keys = [(t.kernel, t.config.label) for t in trials]
    assert len(keys) == len(set(keys)) == sum(space.size(k) for k in ("relax", "min", "update"))
    assert [t.number for t in trials] == list(range(len(trials)))


def test_table1_renders_every_paper_class():
    text = report.table1(RECORDED, fmt="md")
    rows = [ln for ln in text.splitlines() if ln.startswith("| 24k") or ln.startswith("| 49k") or ln.startswith("| 98k")]
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
