"""``tune engine``'s many-source search (no GPU): its space, its records beside the class's
single-source pick, its own tuning run (measured, then replayed), and what a re-tune keeps.
Batches of rows are replaced by a scorer that times points by their parameters."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from sssp.classes import GraphClass
from sssp.config import LaunchConfig
from sssp.errors import TuningError
from tuner import class_search, driver, engine_space, many_search
from tuner.class_search import EngineOptions
from tuner.scoring import Trial
from tuning_db import RunStatus, Store
from tuning_db.records import DeviceRecord

pytestmark = pytest.mark.timeout(600)

H200 = DeviceRecord("NVIDIA H200", "GPU-1234", "9.0", 132, "580.159.04", "13.0")
GC = GraphClass("24k", "deg2")


def near_far_point() -> dict:
    return dict(engine_space.start_points("auto")[1])  # the cluster loop, near-far


def timed(point: dict) -> Trial:
    """The class search's stand-in: near-far beats Crauser, bigger blocks are faster."""
    algorithm, _ = engine_space.choice(point, "auto")
    ms = (4.0 if algorithm != "near-far" else 1.0) + 256 / point["block_size"] / 10
    return Trial(point, ms, (ms, ms, ms), (ms / 2,) * 3, 9)


class Rows:
    """A stand-in for batches of rows: the graph's distances take ``fit`` blocks; twice the
    blocks at 512 threads is fastest, 256 threads give wrong rows. The final comparison
    measures the default at ``default_later`` (the search's own trial of it at 1.0)."""

    def __init__(
        self, fit: int = 1, largest: int = 16, fast: float = 0.5, default_later: float = 1.0
    ) -> None:
        self.fit, self.largest, self.fast = fit, largest, fast
        self.default_later = default_later
        self.sources = tuple(range(64))
        self.calls: list[tuple] = []

    def layout(self):
        return self.fit, self.largest

    def __call__(self, point: dict) -> Trial:
        self.calls.append(many_search.point_key(point))
        c, b = many_search.point_key(point)
        if b == 256:
            return Trial(point, None, error="wrong distances from source 7")
        ms = self.fast if (c, b) == (2 * self.fit, 512) else 1.0
        return Trial(point, ms, (ms,) * 3, (ms / 4,) * 3)

    def compare(self, default: dict, best: dict) -> tuple:
        later = self.default_later
        return tuple(
            dataclasses.replace(t, wall_ms=later, times_ms=(later,) * 3)
            if t.params is default
            else t
            for t in many_search.interleaved(self, default, best)
        )


@pytest.fixture
def no_gpu(monkeypatch, tmp_path):
    import tuner.pipeline

    monkeypatch.setattr(tuner.pipeline, "device_record", lambda ordinal=0: H200)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_points_cover_the_space_once_default_first():
    pts = many_search.points(1, 16)
    assert pts[0] == {"batch_cluster": 0, "batch_block": 0}  # the fewest blocks, 1024 threads
    keys = [many_search.point_key(p) for p in pts]
    assert len(keys) == len(set(keys)) == 9
    assert {c for c, _ in keys} == {0, 2, 4} and {b for _, b in keys} == {0, 512, 256}
    assert [many_search.point_key(p) for p in many_search.points(16, 16)] == [
        (0, 0),
        (0, 512),
        (0, 256),
    ]
    assert {c for c, _ in map(many_search.point_key, many_search.points(4, 8))} == {0, 8}
    # every point is a valid launch configuration
    for p in pts:
        LaunchConfig(**p)


@pytest.mark.parametrize("n,k", [(1, 1024), (24_576, 341), (98_304, 85), (4_000_000, 64)])
def test_batch_sources_fill_about_64_mb_of_rows(n, k):
    assert many_search.batch_sources(n) == k


def test_search_picks_the_fastest_and_compares_it_with_the_default():
    import optuna

    rows = Rows()
    study = optuna.create_study(direction="minimize")
    result = many_search.search(study, rows, fit=1, largest=16, graph_class=GC)
    assert result.best_point == {"batch_cluster": 2, "batch_block": 512}
    assert (result.best_ms, result.default_ms) == (0.5, 1.0) and result.accepted
    assert len(result.trials) == 9 and sum(t.wall_ms is None for t in result.trials) == 3
    # every point measured once, then the default and the pick interleaved, twice each
    assert len(set(rows.calls[:9])) == 9
    assert rows.calls[9:] == [(0, 0), (2, 512)] * 2
    # a resumed study measures nothing again
    rows.calls.clear()
    many_search.search(study, rows, fit=1, largest=16, graph_class=GC)
    assert rows.calls == [(0, 0), (2, 512)] * 2


def test_a_search_where_nothing_runs_says_why():
    import optuna

    class Broken(Rows):
        def __call__(self, point):
            return Trial(point, None, error="LaunchError: too many resources requested")

    with pytest.raises(TuningError, match="no batch configuration ran on 24k/deg2: LaunchError"):
        many_search.search(optuna.create_study(), Broken(), fit=16, largest=16, graph_class=GC)


def record(point: dict | None = None) -> class_search.BestRecord:
    result = class_search.SearchResult(
        graph_class=GC,
        algorithm="auto",
        variant="successors",
        best_point=point or near_far_point(),
        best_ms=1.0,
        default_ms=5.0,
        spread=0.0,
        n_sources=3,
    )
    return class_search.to_best(result, H200)


@pytest.mark.parametrize("fast,accepted", [(0.5, True), (0.995, False)])
def test_the_record_holds_both_picks_and_reads_back(tmp_path, fast, accepted):
    import optuna

    base = record()
    result = many_search.search(
        optuna.create_study(), Rows(fast=fast), fit=1, largest=16, graph_class=GC
    )
    assert result.accepted is accepted
    best = many_search.with_pick(base, result, sources=64)
    assert best.updated_at > base.updated_at  # so that an import takes it over the old one
    expect = (2, 512) if accepted else (0, 0)
    assert (best.config.batch_cluster, best.config.batch_block) == expect
    assert best.options["many.wall_ms_per_source"] == pytest.approx(fast)
    assert best.options["many.kept_default"] == int(not accepted)
    if not accepted:  # the search's own pick rides along, as the class search's does
        assert (best.options["many.tuned_cluster"], best.options["many.tuned_block"]) == (2, 512)
        assert not any(k.startswith("tuned.") for k in best.options)  # the class search's keys
    # the single-source pick is untouched
    assert many_search.without_pick(best).config == base.config
    assert best.chosen_algorithm == "near-far" and best.delta_scale == base.delta_scale
    with Store(f"sqlite:///{tmp_path / 't.sqlite'}", seed=False) as store:
        store.put_best(best)
        (back,) = store.all_best()
    assert back.config == best.config and dict(back.options) == dict(best.options)

    # the class search's own pick reads back whole (its loop and launch, not just a batch)
    def single(c: LaunchConfig) -> LaunchConfig:
        return dataclasses.replace(c, batch_cluster=0, batch_block=0)

    assert single(back.tuned_config) == single(base.tuned_config)
    assert (
        "many sources: 2 blocks x 512 threads"
        in class_search.summary(driver.TuneOutcome(back, 1, False, 1.0, 9))
        or not accepted
    )


def test_a_new_single_source_pick_drops_the_old_many_source_pick():
    import optuna

    base = record()
    result = many_search.search(optuna.create_study(), Rows(), fit=1, largest=16, graph_class=GC)
    old = many_search.with_pick(base, result, sources=64)
    # the same single-source pick again (a re-tune that found it): the pick is kept
    kept = many_search.carry_pick(old, base)
    assert (kept.config.batch_cluster, kept.config.batch_block) == (2, 512)
    assert {k: v for k, v in kept.options.items() if k.startswith("many.")} == {
        k: v for k, v in old.options.items() if k.startswith("many.")
    }
    # another one: the pick was measured on something else and goes
    other = record({**near_far_point(), "delta_scale": 4})
    assert many_search.base_label(other) != many_search.base_label(base)
    fresh = many_search.carry_pick(old, other)
    assert fresh == other and not any(k.startswith("many.") for k in fresh.options)
    assert many_search.strategy_label(64, base) != many_search.strategy_label(64, other)


def test_tune_engine_searches_both_then_replays_them_without_a_gpu(tmp_path, no_gpu, caplog):
    """The class search, then the many-source search in a run of its own; the record holds
    both. A replay of both (no GPU, no stand-ins) gives the same record, labelled replayed."""
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    rows = Rows()
    opts = EngineOptions(budget=6, sources=3)
    with Store(url, seed=False) as store:
        out = class_search.tune_class(GC, opts, store=store, scorer=timed, many_scorer=rows)
        assert out is not None
        runs = {r.key.kernel: r for r in store.runs()}
        assert set(runs) == {"engine", "engine-many"}
        assert {r.status for r in runs.values()} == {RunStatus.FINISHED}
        assert runs["engine-many"].key.strategy == many_search.strategy_label(
            64, many_search.without_pick(out.best)
        )
        (stored,) = store.all_best()
    assert stored.chosen_algorithm == "near-far"
    assert (stored.config.batch_cluster, stored.config.batch_block) == (2, 512)
    assert stored.options["many.sources"] == len(rows.sources)
    assert stored.run_id == runs["engine"].id == out.run_id
    assert "many sources: 2 blocks x 512 threads" in class_search.summary(out)

    with caplog.at_level(logging.INFO, logger="tuner"), Store(url) as store:
        replayed = class_search.tune_class(GC, dataclasses.replace(opts, replay=True), store=store)
        assert replayed is not None and replayed.best.replay
        assert (replayed.best.config.batch_cluster, replayed.best.config.batch_block) == (2, 512)
        kinds = sorted((r.key.kernel, r.key.replay) for r in store.runs())
    assert kinds == [
        ("engine", False),
        ("engine", True),
        ("engine-many", False),
        ("engine-many", True),
    ]


def test_many_sources_only_searches_the_stored_record(tmp_path, no_gpu):
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        skip = EngineOptions(budget=4, sources=3, many="skip")
        class_search.tune_class(GC, skip, store=store, scorer=timed)
        ((stored),) = store.all_best()
        assert (stored.config.batch_cluster, stored.config.batch_block) == (0, 0)
        rows = Rows(fit=2)
        only = dataclasses.replace(skip, many="only")
        out = class_search.tune_class(GC, only, store=store, many_scorer=rows)
        assert out is not None
        assert (out.best.config.batch_cluster, out.best.config.batch_block) == (4, 512)
        assert many_search.without_pick(out.best).config == stored.config
        assert sorted(r.key.kernel for r in store.runs()) == ["engine", "engine-many"]
        # a class without a stored record: nothing to search on
        assert class_search.tune_class(GraphClass("49k", "deg2"), only, store=store) is None


def test_a_crauser_pick_has_no_batch_kernel_to_tune(tmp_path, no_gpu, caplog):
    crauser = record({**near_far_point(), "algorithm": "crauser", "loop": "persistent"})
    assert crauser.chosen_algorithm == "crauser"
    rows = Rows()
    with (
        caplog.at_level(logging.INFO, logger="tuner"),
        Store(f"sqlite:///{tmp_path / 't.sqlite'}", seed=False) as store,
    ):
        assert (
            many_search.tune_many(GC, EngineOptions(), store=store, record=crauser, scorer=rows)
            is None
        )
        assert store.runs() == [] and rows.calls == []
    assert any("the batch kernel runs near-far" in r.getMessage() for r in caplog.records)


def test_a_graph_the_batch_kernel_cannot_hold_is_not_searched(tmp_path, no_gpu, caplog):
    class TooBig(Rows):
        def layout(self):
            return "5000000 nodes do not fit in the shared memory of 16 blocks"

    with (
        caplog.at_level(logging.INFO, logger="tuner"),
        Store(f"sqlite:///{tmp_path / 't.sqlite'}", seed=False) as store,
    ):
        got = many_search.tune_many(
            GC, EngineOptions(), store=store, record=record(), scorer=TooBig()
        )
        assert got is None and store.runs() == []
    assert any("do not fit" in r.getMessage() for r in caplog.records)


def test_the_many_source_mode_is_checked():
    with pytest.raises(TuningError, match="many-source mode 'sometimes' is invalid"):
        EngineOptions(many="sometimes")


def test_the_rows_reference_keeps_unreachable_nodes_exact():
    """The GPU scorer checks every row against SciPy's: nodes no source reaches must be
    UNREACHABLE there (the solvers' int64 convention), not a float cast's garbage."""
    import numpy as np
    from scipy.sparse.csgraph import dijkstra

    import sssp

    graph = sssp.generate("random", size=3000, degree=1, seed=4)  # sparse: many unreached
    sources = [0, 17, 17, 2999]
    scorer = many_search.RowsScorer.for_record(graph, record(near_far_point()), sources, 0)
    ref = dijkstra(graph.to_scipy(), directed=True, indices=sources)  # no parallel edges
    unreached = np.isinf(ref)
    assert unreached.any() and (~unreached).any()
    assert scorer.reference.dtype == np.int64
    assert (scorer.reference[unreached] == sssp.UNREACHABLE).all()
    np.testing.assert_array_equal(scorer.reference[~unreached], ref[~unreached].astype(np.int64))


def test_a_replay_repeats_the_recorded_comparison(tmp_path, no_gpu):
    """The verdict rests on the final interleaved comparison, not on the search's trials: the
    default measured as fast as the best there keeps the default, and a replay (no GPU) reads
    that comparison back instead of judging by the trials, giving the same record, labelled."""
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    opts = EngineOptions(budget=4, sources=3)
    with Store(url, seed=False) as store:
        measured = many_search.tune_many(
            GC, opts, store=store, record=record(), scorer=Rows(default_later=0.5)
        )
        assert measured is not None and measured.best.options["many.kept_default"] == 1
        replayed = many_search.tune_many(
            GC, dataclasses.replace(opts, replay=True), store=store, record=record()
        )
    assert replayed is not None and replayed.best.replay and not measured.best.replay
    assert replayed.best.config == measured.best.config
    assert dict(replayed.best.options) == dict(measured.best.options)


def test_a_recorded_run_without_its_comparison_is_not_replayed(tmp_path, no_gpu):
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    opts = EngineOptions(budget=4, sources=3)
    with Store(url, seed=False) as store:
        many_search.tune_many(GC, opts, store=store, record=record(), scorer=Rows())
        (run,) = store.runs()
        store.study(run, many_search.STUDY_KERNEL).set_user_attr("comparison", None)
        with pytest.raises(TuningError, match="holds no final comparison"):
            many_search.tune_many(
                GC, dataclasses.replace(opts, replay=True), store=store, record=record()
            )


def test_the_rows_reference_takes_the_lightest_of_parallel_edges():
    """A multigraph (a Kronecker graph has parallel edges) with integer weights: SciPy's csgraph
    on ``Graph.to_scipy()`` sums the parallel edges when it converts the weights to float64, so
    the scorer's reference comes from ``min_weight_csr``, and equals the CPU solver's rows."""
    import numpy as np

    import sssp

    graph = sssp.Graph.from_edges(3, np.array([0, 0, 1]), np.array([1, 1, 2]), np.array([5, 3, 1]))
    scorer = many_search.RowsScorer.for_record(graph, record(near_far_point()), [0], 0)
    assert scorer.reference.tolist() == [[0, 3, 4]]
    assert sssp.solve(graph, [0], backend="cpu").dist.tolist() == [[0, 3, 4]]
