"""The tuning driver shared by ``tune run`` and ``tune engine`` (no GPU): the acceptance rule, and
the class search in tuning runs, interrupted and resumed, replayed from recorded measurements, and
shared by two workers on one SQLite file. Whole solves are replaced by a scorer that times points
by their parameters, or by the replay of such a scorer's recorded run."""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import re
import signal

import pytest

from sssp.classes import GraphClass
from sssp.cliutil import Interrupted
from sssp.errors import TuningError
from tuner import class_search, driver, engine_space, interrupt, scoring, workers
from tuner.class_search import EngineOptions
from tuning_db import RunStatus, Store
from tuning_db.records import DeviceRecord, KernelVersionRecord, RunKey

pytestmark = pytest.mark.timeout(600)

H200 = DeviceRecord("NVIDIA H200", "GPU-1234", "9.0", 132, "580.159.04", "13.0")
CLASSES = [GraphClass("24k", "deg2"), GraphClass("24k", "deg20"), GraphClass("49k", "deg2")]
MEASURED = re.compile(r"^(\S+): measured (.+): ")


def timed(point: dict) -> scoring.Trial:
    """A stand-in for whole solves: near-far at Δ x2 is fastest, bigger blocks are faster, 32
    lanes give wrong distances (a failed point is data)."""
    if point["lanes"] == 32:
        return scoring.Trial(point, None, error="wrong distances from source 3")
    algorithm, scale = engine_space.choice(point, "auto")
    ms = 4.0 if algorithm != "near-far" else 1.0 + abs((scale or 1) - 2) / 8
    ms += 256 / point["block_size"] / 10
    return scoring.Trial(point, ms, (ms, ms, ms), (ms / 2,) * 3, 9)


class Counting:
    """``timed``, counting each point's measurements; raises KeyboardInterrupt (Ctrl-C) at the
    ``stop_at``-th call."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.calls: list[tuple] = []
        self.stop_at = stop_at

    def __call__(self, point: dict) -> scoring.Trial:
        if self.stop_at is not None and len(self.calls) + 1 == self.stop_at:
            raise KeyboardInterrupt
        self.calls.append(engine_space.point_key(point))
        return timed(point)


@pytest.fixture
def no_gpu(monkeypatch, tmp_path):
    """The GPU's identity, for measured runs on a machine without one."""
    import tuner.pipeline

    monkeypatch.setattr(tuner.pipeline, "device_record", lambda ordinal=0: H200)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def measured_lines(caplog) -> list[tuple[str, str]]:
    """(class, point) of every "measured" log line of the class search."""
    out = []
    for r in caplog.records:
        if r.name == "tuner.class_search" and (m := MEASURED.match(r.getMessage())):
            out.append((m.group(1), m.group(2)))
    return out


def study_keys(store: Store, run) -> list[tuple]:
    import optuna

    from tuning_db import studies

    study = optuna.load_study(
        study_name=studies.study_name(run, class_search.STUDY_KERNEL), storage=store.storage
    )
    return [
        engine_space.point_key(t.user_attrs[scoring.MARKER]["point"])
        for t in driver.measured_trials(study, scoring.MARKER)
    ]


# -- the acceptance rule ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "default,tuned,spread,accepted",
    [
        (1.03, 1.0, 0.0, True),  # 3 % faster, no spread: beyond the 2 % floor
        (1.02, 1.0, 0.0, False),  # exactly the floor is not beyond it
        (1.015, 1.0, 0.0, False),
        (1.09, 1.0, 0.05, False),  # 9 % faster, but the default alone moved 5 %: need > 10 %
        (1.11, 1.0, 0.05, True),
        (1.0, 1.1, 0.0, False),  # slower
    ],
)
def test_acceptance_rule(default, tuned, spread, accepted):
    assert driver.accepts(default, tuned, spread) is accepted


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_acceptance_rule_refuses_times_that_are_no_times(bad):
    with pytest.raises(TuningError, match=re.escape(repr(bad))):
        driver.accepts(bad, 1.0)
    with pytest.raises(TuningError, match="spread"):
        driver.accepts(1.0, 1.0, -0.1)


def test_class_search_records_follow_the_acceptance_rule():
    """The stored record of a class search keeps the default exactly when the rule says so,
    its A/A spread included (the rule of tune run's records too)."""
    point = {**engine_space.start_points("auto")[1]}
    for default, spread in ((1.5, 0.0), (1.5, 0.3), (1.015, 0.0), (1.03, 0.0)):
        result = class_search.SearchResult(
            graph_class=CLASSES[0],
            algorithm="auto",
            variant="successors",
            best_point=point,
            best_ms=1.0,
            default_ms=default,
            spread=spread,
            n_sources=3,
        )
        best = class_search.to_best(result, H200)
        assert best.kept_default is not driver.accepts(default, 1.0, spread), (default, spread)
        assert best.tuned_config == result.best  # the pick is kept either way
    assert driver.aa_spread(1.0, 1.2) == pytest.approx(0.2 / 1.1)


# -- interrupted and resumed ------------------------------------------------------------------
def test_an_interrupted_class_search_resumes_measuring_nothing_twice(tmp_path, no_gpu, caplog):
    gc = CLASSES[0]
    opts = EngineOptions(budget=14, sources=3, many="skip")
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    first = Counting(stop_at=8)  # Ctrl-C during the 8th measurement
    with caplog.at_level(logging.INFO, logger="tuner"), Store(url, seed=False) as store:
        with pytest.raises(KeyboardInterrupt):
            class_search.tune_class(gc, opts, store=store, scorer=first)
        (run,) = store.runs()
        assert run.status is RunStatus.INTERRUPTED and run.key.kernel == "engine"
        assert len(study_keys(store, run)) == 7 and store.all_best() == []
        lines_before = len(measured_lines(caplog))

        second = Counting()
        out = class_search.tune_class(gc, opts, store=store, scorer=second)
        assert out is not None and out.resumed and out.run_id == run.id
        (run,) = store.runs()
        assert run.status is RunStatus.FINISHED
        keys = study_keys(store, run)
    # the run's trials: the budget, each configuration once
    assert len(keys) == len(set(keys)) == opts.budget == out.trials
    # what was measured: the search's points once each across both sessions (the last calls of
    # the second are the finalists' measurements, then the final comparison of the best with
    # the default, twice each)
    tail = class_search.FINALISTS * class_search.FINAL_ROUNDS + 4
    searched = first.calls + second.calls[:-tail]
    assert len(searched) == len(set(searched)) == opts.budget
    assert sorted(searched) == sorted(keys)
    assert not set(first.calls) & set(second.calls[:-tail])
    finals = second.calls[-tail:-4]
    assert len(set(finals)) == class_search.FINALISTS and set(finals) <= set(keys)
    # and the log says the same: one "measured" line per configuration
    lines = measured_lines(caplog)
    assert len(lines) == len(set(lines)) == opts.budget and lines_before == 7
    assert any("resuming run" in r.getMessage() for r in caplog.records)
    # the result: the pick beats the default beyond the rule, and is stored as such
    assert out.best.options["algorithm"] == "near-far" and not out.best.kept_default
    assert out.best.run_id == run.id

    # tune engine claims its classes as a worker does: the finished run makes the class done
    with Store(url, seed=False) as store:

        def claim(key):
            got = store.claim_run(key, budget=opts.budget, seed=opts.seed, owner="another")
            return None if isinstance(got, str) else got

        third = Counting()
        assert class_search.tune_class(gc, opts, store=store, scorer=third, claim=claim) is None
        assert third.calls == [] and len(store.runs()) == 1


class Lucky:
    """``timed``, except that the first measurement of the ``lucky``-th point it meets is far
    too fast and every later one far too slow: a measurement gone wrong on a noisy host."""

    def __init__(self, lucky: int = 2) -> None:
        self.lucky = lucky
        self.seen: list[tuple] = []
        self.calls: list[tuple] = []

    @property
    def point(self) -> tuple | None:
        return self.seen[self.lucky - 1] if len(self.seen) >= self.lucky else None

    def __call__(self, point: dict) -> scoring.Trial:
        key = engine_space.point_key(point)
        self.calls.append(key)
        first = key not in self.seen
        if first:
            self.seen.append(key)
        got = timed(point)
        if key != self.point or got.wall_ms is None:
            return got
        ms = 0.001 if first else 100.0
        return scoring.Trial(point, ms, (ms,) * 3, (ms / 2,) * 3, 9)


def test_the_finalists_measured_again_decide_the_pick(tmp_path, no_gpu):
    """A point whose one trial was far too fast leads the trials, but its measurements as a
    finalist put it out: the pick is the best of the others by their medians. The study keeps
    the finalists' measurements, so the same search again measures only the final comparison,
    and a replay (no GPU) reads them back and picks the same."""
    import optuna

    gc = CLASSES[0]
    scorer = Lucky()
    res = class_search.search(
        optuna.create_study(direction="minimize"), scorer, graph_class=gc, algorithm="auto",
        budget=10, n_sources=3,
    )  # fmt: skip
    lucky = scorer.point
    trials = [t for t in res.trials if t.wall_ms is not None]
    assert min(trials, key=lambda t: t.wall_ms).params == dict(lucky)  # it led the trials
    assert engine_space.point_key(res.best_point) != lucky
    others = [t for t in trials if engine_space.point_key(t.params) != lucky]
    assert res.best_point == min(others, key=lambda t: t.wall_ms).params
    n = class_search.FINALISTS * class_search.FINAL_ROUNDS
    assert scorer.calls[-n - 4 : -4].count(lucky) == class_search.FINAL_ROUNDS

    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    opts = EngineOptions(budget=10, sources=3, many="skip", algorithm="auto")
    with Store(url, seed=False) as store:
        first = Lucky()
        live = class_search.tune_class(gc, opts, store=store, scorer=first)
        assert live is not None
        (run,) = store.runs()
        study = store.study(run, class_search.STUDY_KERNEL)
        finals = study.user_attrs[class_search.FINALS_ATTR]
        assert sorted(len(v) for v in finals.values()) == [2] * class_search.FINALISTS
        assert [100.0, 100.0] in finals.values()  # the lucky point, measured again
        recorded = [t for t in scoring.study_trials(study) if t.wall_ms is not None]
        lucky_trial = min(recorded, key=lambda t: t.wall_ms)
        assert engine_space.point_key(lucky_trial.params) == first.point  # it led the trials
        expected = min(
            (t for t in recorded if t is not lucky_trial), key=lambda t: t.wall_ms
        ).params
        again = Counting()
        resumed = class_search.search(
            study, again, graph_class=gc, algorithm="auto", budget=10, n_sources=3
        )
        assert len(again.calls) == 4  # the final comparison only
        assert resumed.best_point == expected
    live_pick = (live.best.tuned_config, live.best.chosen_algorithm)
    lucky_config = engine_space.to_config(dict(lucky_trial.params))
    assert live.best.tuned_config == engine_space.to_config(dict(expected)) != lucky_config
    with Store(url) as store:  # a replay picks by the recorded finalists, not by the trials
        replayed = class_search.tune_class(gc, dataclasses.replace(opts, replay=True), store=store)
        assert replayed is not None and replayed.best.replay
    assert (replayed.best.tuned_config, replayed.best.chosen_algorithm) == live_pick


def test_a_point_is_scored_on_every_instance_of_its_class(tmp_path, no_gpu, monkeypatch):
    """A deg2 high-diameter class is searched on a road and a grid: each point's score is the
    geometric mean of its median wall time on each (kept beside it, through the study), a point
    that fails on one instance fails naming it, and the run's key names both instances."""
    import math

    made: list[int] = []

    def for_graph(graph, sources, **kw):
        made.append(graph.n)
        scale = 1.0 if len(made) == 1 else 4.0  # the road first, then the grid

        def scorer(point):
            t = timed(point)
            if t.wall_ms is None or (scale > 1 and point["loop"] == "phast"):
                return t if t.wall_ms is None else scoring.Trial(point, None, error="bad")
            ms = t.wall_ms * scale
            return scoring.Trial(point, ms, (ms,) * len(sources), (ms / 2,) * 3, 9)

        return scorer

    monkeypatch.setattr(scoring.SolveScorer, "for_graph", staticmethod(for_graph))
    gc = GraphClass("24k", "deg2", "highdiam")
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        out = class_search.tune_class(
            gc, EngineOptions(budget=12, sources=3, many="skip"), store=store
        )
        assert out is not None and len(made) == 2
        (run,) = store.runs()
        assert run.key.instance.startswith("road n=24576") and " + grid n=" in run.key.instance
        study = store.study(run, class_search.STUDY_KERNEL)
        picked = study.user_attrs["instance_sources"]
        assert len(picked) == 2 and study.user_attrs["sources"] == picked[0]
        trials = scoring.study_trials(study)
    ok = [t for t in trials if t.wall_ms is not None]
    assert ok and all(len(t.parts) == 2 for t in ok)
    for t in ok:
        (road, _), (grid, _) = t.parts
        assert grid == pytest.approx(4 * road) and t.wall_ms == pytest.approx(2 * road)
        assert t.gpu_median_ms == pytest.approx(math.sqrt(road * grid) / 2)
        assert len(t.times_ms) == 6
    failed = [t for t in trials if t.params["loop"] == "phast"]  # the warm start's first
    assert failed and all(
        t.error.startswith("on grid n=") and t.error.endswith(": bad") for t in failed
    )
    assert out.best.tuned_config.loop != "phast"
    assert out.best.tuned_median_ms == pytest.approx(min(t.wall_ms for t in ok), rel=0.5)
    with Store(url) as store:  # a replay (no GPU, no instances built) reaches the same pick
        again = class_search.tune_class(
            gc, EngineOptions(budget=12, sources=3, many="skip", replay=True), store=store
        )
        replays = [r for r in store.runs() if r.key.replay]
    assert again is not None and again.best.replay and len(made) == 2
    assert again.best.tuned_config == out.best.tuned_config
    assert [r.key.instance for r in replays] == [run.key.instance]


def _record_measured_runs(url: str, classes, opts: EngineOptions) -> None:
    """Measured class-search runs (the stand-in scorer) for replays to replay."""
    with Store(url, seed=False) as store:
        for gc in classes:
            class_search.tune_class(gc, opts, store=store, scorer=timed)


def test_tune_engine_replay_resumes_after_ctrl_c(tmp_path, no_gpu, monkeypatch, capsys, caplog):
    """``tune engine --replay``: Ctrl-C exits 130 with one line, the run is stored as
    interrupted, and the same command resumes it measuring no configuration twice."""
    from tuner.cli import main

    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    gc = CLASSES[0]
    _record_measured_runs(url, [gc], EngineOptions(budget=20, sources=3, many="skip"))
    argv = ["engine", "--replay", "--graph-class", "deg2", "--size", "24k", "--budget", "10"]
    argv += ["--sources", "3"]  # the recording's
    calls: list[tuple] = []
    replay = scoring.RecordedScorer.__call__

    def interrupted(self, point):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(engine_space.point_key(point))
        return replay(self, point)

    monkeypatch.setattr(scoring.RecordedScorer, "__call__", interrupted)
    capsys.readouterr()
    with caplog.at_level(logging.INFO, logger="tuner"):
        assert main([*argv, "--db", url]) == 130
        err = capsys.readouterr().err
        assert err.splitlines() == [
            "tune: interrupted by SIGINT; the run is stored as interrupted and resumes on the next "
            "call"
        ]
        monkeypatch.setattr(scoring.RecordedScorer, "__call__", replay)
        assert main([*argv, "--db", url]) == 0
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("24k/deg2")]
    assert "[REPLAY of recorded measurements]" in line and "resumed" in line
    with Store(url) as store:
        replays = [r for r in store.runs() if r.key.replay]
        (run,) = replays
        assert run.status is RunStatus.FINISHED
        keys = study_keys(store, run)
        (best,) = [b for b in store.all_best() if b.graph_class == gc]
    assert len(keys) == len(set(keys)) == 10 and set(calls) <= set(keys)
    lines = measured_lines(caplog)
    assert len(lines) == len(set(lines)) == 10  # both sessions of the replay: each point once
    assert best.replay and best.run_id == run.id


def test_two_workers_share_the_classes_without_duplicates(tmp_path, no_gpu, capfd):
    """``tune engine --replay --workers 2`` on one SQLite file: every class is searched by one
    worker, in one run, each configuration measured once."""
    url = f"sqlite:///{tmp_path / 'w.sqlite'}"
    _record_measured_runs(url, CLASSES, EngineOptions(budget=12, sources=3, many="skip"))
    capfd.readouterr()
    opts = EngineOptions(budget=8, sources=3, replay=True)
    workers.run_pool(CLASSES, opts, url, workers=2, devices=[])
    out = capfd.readouterr().out
    done = collections.Counter(ln.split(" [REPLAY")[0] for ln in out.splitlines() if "REPLAY" in ln)
    assert done == {str(gc): 1 for gc in CLASSES}, out
    assert {m for ln in out.splitlines() for m in re.findall(r"\[worker (\d)", ln)} <= {"0", "1"}
    with Store(url) as store:
        replays = [r for r in store.runs() if r.key.replay]
        assert sorted(str(r.key.graph_class) for r in replays) == sorted(map(str, CLASSES))
        assert {r.status for r in replays} == {RunStatus.FINISHED}
        for run in replays:
            keys = study_keys(store, run)
            assert len(keys) == len(set(keys)) == opts.budget, run.key.graph_class
        assert {b.graph_class for b in store.all_best() if b.replay} == set(CLASSES)


def test_a_replay_needs_a_measured_run(tmp_path):
    with Store(f"sqlite:///{tmp_path / 't.sqlite'}", seed=False) as store:
        with pytest.raises(TuningError, match="no measured class-search run of 24k/deg2"):
            class_search.tune_class(CLASSES[0], EngineOptions(replay=True), store=store)
        assert store.runs() == []


def test_recorded_trials_round_trip():
    t = timed({**engine_space.start_points("auto")[1]})
    assert scoring.Trial.from_attrs(t.attrs()) == t
    with pytest.raises(TuningError, match="needs its reason"):
        scoring.Trial({"loop": "graph"}, None)


# -- the ask/tell loop ------------------------------------------------------------------------
def _tiny_study():
    import optuna
    from optuna.distributions import CategoricalDistribution

    with driver.quiet_optuna():
        study = optuna.create_study(sampler=optuna.samplers.BruteForceSampler(seed=3))
    dists = {"a": CategoricalDistribution([1, 2, 3]), "b": CategoricalDistribution(["x", "y"])}
    return study, dists


def test_drive_resumes_an_exhaustive_search_measuring_each_point_once():
    """Ctrl-C during a measurement: the asked trial holds no measurement, the next call
    measures it (an exhaustive sampler counts it as visited: it is enqueued again) and the rest,
    and a third call measures nothing. Failed points are data, measured once too."""
    import optuna

    study, dists = _tiny_study()
    calls: list[tuple] = []

    def measure(params, stop_at=None):
        if stop_at is not None and len(calls) + 1 == stop_at:
            raise KeyboardInterrupt
        calls.append((params["a"], params["b"]))
        value = None if params["a"] == 3 else float(params["a"])
        return driver.Measured(value, {"m": dict(params)})

    def run(stop_at=None, budget=6):
        return driver.drive(
            study,
            dists,
            budget=budget,
            key=lambda p: (p["a"], p["b"]),
            measure=lambda p: measure(p, stop_at),
            marker="m",
        )

    with pytest.raises(KeyboardInterrupt):
        run(stop_at=4)
    assert len(driver.measured_trials(study, "m")) == 3
    assert run() == 3
    assert len(calls) == len(set(calls)) == 6
    measured = driver.measured_trials(study, "m")
    assert sorted((t.params["a"], t.params["b"]) for t in measured) == sorted(calls)
    assert sum(t.state.name == "FAIL" for t in measured) == 2  # a == 3 failed, as data
    assert run() == 0 and len(calls) == 6
    # a budget beyond the space: the sampler ends the search (Optuna's study.stop) at its first
    # proposal of a measured point, with no error
    pruned = len(study.get_trials(states=(optuna.trial.TrialState.PRUNED,)))
    assert run(budget=7) == 0 and len(calls) == 6
    assert len(study.get_trials(states=(optuna.trial.TrialState.PRUNED,))) == pruned + 1


def test_a_trial_killed_while_asked_is_not_requeued():
    """A process killed while Optuna stored an asked trial's parameters (one at a time) leaves a
    trial with some of them: it names no configuration, so resuming skips it instead of failing
    on the missing key (seen with a worker killed mid-ask)."""
    import optuna
    from optuna.distributions import CategoricalDistribution
    from optuna.trial import TrialState, create_trial

    dists = {
        "block_size_x": CategoricalDistribution([256, 512]),
        "lanes": CategoricalDistribution([1, 2]),
    }
    study = optuna.create_study(direction="minimize")
    partial = create_trial(
        state=TrialState.FAIL,
        params={"block_size_x": 256},
        distributions={"block_size_x": dists["block_size_x"]},
    )
    whole = create_trial(
        state=TrialState.FAIL, params={"block_size_x": 512, "lanes": 2}, distributions=dists
    )
    study.add_trials([partial, whole])

    def key(p):
        return (p["block_size_x"], p["lanes"])

    assert driver.requeue_lost(study, key, "measured") == 1
    assert len(study.get_trials(states=(TrialState.WAITING,))) == 1
    assert study.ask(dists).params == {"block_size_x": 512, "lanes": 2}  # the queued one


def _run_key() -> RunKey:
    return RunKey(
        device=H200,
        kernel_version=KernelVersionRecord("0123456789abcdef", "-O3"),
        graph_class=GraphClass("24k", "deg2"),
        instance="random seed=0",
    )


@pytest.mark.parametrize("where", ["claim", "heartbeat"])
def test_a_signal_as_the_run_is_claimed_leaves_it_stored_as_interrupted(
    tmp_path, monkeypatch, where
):
    """A signal landing right after the run's row is written, or as its heartbeat starts
    (outside the database code, where it is raised at once), must not leave the run stored as
    running: the cleanup is armed before the claim."""
    store = Store(f"sqlite:///{tmp_path / 'runs.sqlite'}")

    def claim(key: RunKey):
        claimed = store.open_run(key, budget=None, seed=0, owner=driver.worker_id())
        os.kill(os.getpid(), signal.SIGTERM)  # lands in this frame, not in tuning_db
        return claimed

    def beat(self):
        os.kill(os.getpid(), signal.SIGTERM)
        return self

    if where == "heartbeat":
        monkeypatch.setattr(driver.Heartbeat, "__enter__", beat)
    with interrupt.policy(), pytest.raises(Interrupted):
        with driver.hold_run(
            store, _run_key(), budget=None, seed=0, claim=claim if where == "claim" else None
        ):
            pytest.fail("the block ran after the signal")
    (run,) = store.runs()
    assert run.status is RunStatus.INTERRUPTED


def test_an_exhaustive_search_measures_every_point_past_a_partial_trial():
    """A worker killed while Optuna stored an asked trial's parameters leaves a finished trial
    with some of them; the exhaustive kernel search of the run that another worker takes over
    still measures every point once (Optuna's BruteForceSampler failed on it with
    'param_name mismatch' at its next tell)."""
    import optuna
    from optuna.distributions import CategoricalDistribution
    from optuna.trial import TrialState, create_trial

    from tuner.search import queue_exhaustive
    from tuning_db import studies

    grid = {"block_size_x": [64, 128, 256], "lanes": [1, 2]}
    dists = {k: CategoricalDistribution(v) for k, v in grid.items()}
    with driver.quiet_optuna():
        study = optuna.create_study(direction="minimize")
    study.add_trial(
        create_trial(
            state=TrialState.FAIL,
            params={"block_size_x": 128},
            distributions={"block_size_x": dists["block_size_x"]},
        )
    )

    def key(p):
        return (p["block_size_x"], p["lanes"])

    calls: list[tuple] = []

    def measure(params):
        calls.append(key(params))
        return driver.Measured(params["block_size_x"] / params["lanes"], {studies.MEASUREMENT: 1})

    assert queue_exhaustive(study, grid, key, seed=5) == 6
    assert (
        driver.drive(study, dists, budget=6, key=key, measure=measure, marker=studies.MEASUREMENT)
        == 6
    )
    assert (
        sorted(calls)
        == sorted(set(calls))
        == sorted((b, n) for b in grid["block_size_x"] for n in grid["lanes"])
    )
    assert calls != sorted(calls)  # a seeded random order, not the grid's
    assert queue_exhaustive(study, grid, key, seed=5) == 0  # nothing left to measure
