"""Engine 2's end-to-end search as data (no GPU): the search space, the records it stores and
the look-up that gives them to ``solve(tuned=True)``."""

from __future__ import annotations

import pytest

import kernels
from sssp.config import KernelConfig, LaunchConfig
from sssp.gpu.device import DeviceInfo
from sssp.tuned import resolve_config
from tuner import structure
from tuning_db import Store
from tuning_db.records import DeviceRecord

H200 = DeviceRecord("NVIDIA H200", "GPU-1234", "9.0", 132, "580.159.04", "13.0")


def search_record(speedup: float, **over) -> dict:
    searched = LaunchConfig(
        KernelConfig(1024, "A", 4), loop="graph", blocks_per_sm=1, local_limit=8192
    )
    rec = {
        "graph_class": "98k/deg2",
        "algorithm": "crauser",
        "variant": "successors",
        "labels": searched.as_dict(),
        "options": searched.options(),
        "tuned_median_ms": 1.0,
        "default_median_ms": speedup,
        "speedup": speedup,
        "n_sources": 5,
    }
    rec.update(over)
    return rec


def test_space_points_round_trip():
    for point in (structure.DEFAULT_POINT, *structure.WARM_START):
        assert set(point) == set(structure.SPACE)
        assert all(point[k] in structure.SPACE[k] for k in point), point
        assert structure.from_config(structure.to_config(point)) == point
    for algorithm in ("auto", "near-far"):
        space = structure.space_for(algorithm)
        for point in structure.start_points(algorithm):
            assert set(point) == set(space) and all(point[k] in space[k] for k in point), point
            assert structure.canonical(point) == point  # start points are their own representatives
            back = structure.from_config(structure.to_config(point))  # the launch part of the point
            assert back == {k: point[k] for k in back}, point
    # the default point is the default configuration (local limit -1 means 8 x 256)
    default = structure.to_config(structure.DEFAULT_POINT)
    assert default.relax == LaunchConfig.default().relax and default.loop == "persistent"


def test_canonical_cluster_points():
    """The cluster loop runs near-far only; it has no blocks per SM, block-local limit or free
    lanes, and the cluster's size means nothing to the other loops."""
    base = {
        "block_size": 1024,
        "l1": "N",
        "lanes": 4,
        "blocks_per_sm": 2,
        "local_limit": 8192,
        "cluster": 16,
    }
    nf = structure.canonical({**base, "loop": "cluster", "algorithm": "near-far", "delta_scale": 2})
    assert nf["loop"] == "cluster" and nf["cluster"] == 16
    assert (nf["lanes"], nf["blocks_per_sm"], nf["local_limit"]) == (kernels.CLUSTER_LANES, 1, 0)
    cr = structure.canonical({**base, "loop": "cluster", "algorithm": "crauser", "delta_scale": 2})
    assert (cr["loop"], cr["cluster"], cr["delta_scale"], cr["lanes"]) == ("persistent", 0, 1, 4)
    host = structure.canonical({**base, "loop": "host", "algorithm": "near-far", "delta_scale": 2})
    assert (host["loop"], host["cluster"]) == ("persistent", 0)
    own = structure.canonical({**base, "loop": "graph", "delta_scale": 4})  # near-far's own space
    assert own["loop"] == "persistent"
    cfg = structure.to_config(nf)
    assert cfg.loop == "cluster" and cfg.cluster == 16
    assert LaunchConfig.from_parts(cfg.as_dict(), cfg.options()) == cfg  # stored and read back
    fused = structure.canonical(
        {**base, "loop": "cluster", "algorithm": "near-far", "delta_scale": 2, "fuse": 1}
    )
    cfg = structure.to_config(fused)
    assert cfg.fuse and structure.from_config(cfg)["fuse"] == 1
    assert LaunchConfig.from_parts(cfg.as_dict(), cfg.options()) == cfg
    assert "fused" in str(cfg)
    grid = structure.canonical(
        {**base, "loop": "persistent", "algorithm": "near-far", "delta_scale": 2, "fuse": 1}
    )
    assert grid["fuse"] == 0 and not structure.to_config(grid).fuse  # fusion is the cluster loop's
    assert "fuse" in structure.AUTO_SPACE and "fuse" in structure.space_for("near-far")


@pytest.mark.parametrize("speedup,kept", [(3.0, False), (1.01, True)])
def test_search_records_store_and_resolve(tmp_path, speedup, kept):
    best = structure.to_best(search_record(speedup), H200)
    assert best.kept_default is kept
    assert best.kernel_version.digest == kernels.digest(kernels.ENGINE_SOURCE_FILE)
    with Store(f"sqlite:///{tmp_path / 't.sqlite'}", seed=False) as store:
        store.put_best(best)
        (back,) = store.all_best()
    searched = LaunchConfig(
        KernelConfig(1024, "A", 4), loop="graph", blocks_per_sm=1, local_limit=8192
    )
    assert back.tuned_config == searched  # the search's picks survive, structure included
    assert back.config == (LaunchConfig.default() if kept else searched)


def test_solve_tuned_looks_up_engine_records(tmp_path):
    import sssp

    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        store.put_best(structure.to_best(search_record(3.0), H200))
    info = DeviceInfo(
        0, "NVIDIA H200", "GPU-1234", (9, 0), 132, 143 << 30, "580", "13.0", "0000:00:00.0"
    )
    graph = sssp.generate("random", size="98k", degree=2, seed=0)
    cfg, source, detail = resolve_config(graph, info, db=url)
    assert source.value == "tuned-exact" and cfg.loop == "graph" and cfg.relax.lanes == 4
    small = sssp.generate("random", size=3000, degree=3, seed=0)
    cfg, source, _ = resolve_config(small, info, db=url)
    assert source.value == "tuned-nearest" and cfg.loop == "graph"
    cfg, source, _ = resolve_config(graph, info, algorithm="martin", db=url)
    assert source.value == "default" and cfg == LaunchConfig.default()


def test_records_without_options_keep_the_paper_loop(tmp_path):
    """Records of the paper's kernels (no options) read back as the paper's loop."""
    from tuning_db.mapping import launch

    assert launch("192-A", "128-A", "256-N").loop == "legacy"
    assert launch("192-A", "128-A", "256-N", {"loop": "host"}).loop == "host"


def test_search_keeps_its_trials_as_an_optuna_study(tmp_path, monkeypatch):
    """`tune engine`'s trials live in the tuning database as an Optuna study that
    ``optuna.load_study`` (and so optuna-dashboard) reads; a failed configuration is a FAIL trial
    with its reason. The GPU is replaced by a scorer that times by block size."""
    import optuna

    import sssp

    def fake_score(graph, config, sources, **_):
        point = structure.from_config(config)
        if config.relax.lanes == 32:
            return structure.Trial(point, None, [], 0, "wrong distances from source 1")
        ms = config.relax.block_size / 256
        return structure.Trial(point, ms, [ms] * len(sources), 7)

    monkeypatch.setattr(structure, "score", fake_score)
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    graph = sssp.generate("random", size=500, degree=3, seed=0)
    with Store(url, seed=False) as store:
        res = structure.search(
            graph,
            budget=12,
            sources=3,
            storage=store.storage,
            study_name="sssp/GPU-1234/d/500-deg3/crauser-successors/engine/t0",
            study_attrs={"graph_class": "500/deg3"},
        )
    study = optuna.load_study(
        storage=url, study_name="sssp/GPU-1234/d/500-deg3/crauser-successors/engine/t0"
    )
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    failed = [t for t in study.trials if t.state == optuna.trial.TrialState.FAIL]
    assert len(done) + len(failed) == len(res.trials) == 12
    assert all(t.user_attrs["error"].startswith("wrong distances") for t in failed)
    assert study.best_value == min(t.median_ms for t in res.trials if t.median_ms is not None)
    assert study.user_attrs["graph_class"] == "500/deg3" and len(study.user_attrs["sources"]) == 3
    assert done[0].user_attrs["phases"] == 7


def test_auto_space_canonical_points_and_start():
    """ "auto" adds the algorithm and near-far's Δ scale; near-far runs on the persistent loop and
    Δ means nothing to Crauser, so points that run the same solve collapse to one."""
    space = structure.space_for("auto")
    assert (
        space["algorithm"] == ("crauser", "crauser-inout", "near-far") and 1 in space["delta_scale"]
    )
    for point in structure.start_points("auto"):
        assert set(point) == set(space) and all(point[k] in space[k] for k in point)
    first = structure.start_points("auto")[0]
    assert structure.choice(first, "auto") == ("crauser", None)  # the default is Crauser OUT's
    nf = {**structure.DEFAULT_POINT, "loop": "graph", "algorithm": "near-far", "delta_scale": 16}
    assert structure.canonical(nf)["loop"] == "persistent"
    cr = {**structure.DEFAULT_POINT, "algorithm": "crauser", "delta_scale": 64}
    assert structure.canonical(cr)["delta_scale"] == 1
    assert structure.choice(nf, "auto") == ("near-far", 16.0)


def test_auto_search_picks_and_stores_the_algorithm(tmp_path, monkeypatch):
    """A search over "auto" with a scorer where near-far at Δ x64 wins: the record stores
    near-far and its scale, and solve's look-up returns them with Δ = 64 x the default rule."""
    import sssp
    from sssp.cpu.nearfar import default_delta
    from sssp.tuned import resolve_choice

    def fake_score(graph, config, sources, *, algorithm, delta_scale=None, **_):
        point = structure.from_config(config)
        ms = 5.0 if algorithm != "near-far" else 1.0 + abs((delta_scale or 1) - 64) / 64
        return structure.Trial(point, ms, [ms] * len(sources), 3)

    monkeypatch.setattr(structure, "score", fake_score)
    graph = sssp.generate("random", size="98k", degree=2, seed=0)
    res = structure.search(graph, algorithm="auto", budget=16, sources=2)
    assert structure.choice(res.best_point, "auto") == ("near-far", 64.0)
    rec = search_record(
        5.0,
        algorithm="auto",
        labels=res.best.as_dict(),
        options={**res.best.options(), **structure.algorithm_options(res, "auto")},
    )
    best = structure.to_best(rec, H200)
    assert best.options["algorithm"] == "near-far" and best.options["delta_scale"] == 64.0
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        store.put_best(best)
    info = DeviceInfo(
        0, "NVIDIA H200", "GPU-1234", (9, 0), 132, 143 << 30, "580", "13.0", "0000:00:00.0"
    )
    algorithm, delta, cfg, source, detail = resolve_choice(graph, info, db=url)
    assert (
        algorithm == "near-far" and delta == 64 * default_delta(graph) and cfg.loop == "persistent"
    )
    assert source.value == "tuned-exact" and "near-far" in detail
    # a kept default stores Crauser OUT with the default configuration
    kept = structure.to_best({**rec, "speedup": 1.0}, H200)
    assert kept.options["algorithm"] == "crauser" and kept.options["tuned.algorithm"] == "near-far"


def test_auto_without_records_runs_crauser(tmp_path):
    import sssp
    from sssp.tuned import resolve_choice

    info = DeviceInfo(
        0, "NVIDIA H200", "GPU-1234", (9, 0), 132, 143 << 30, "580", "13.0", "0000:00:00.0"
    )
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    Store(url, seed=False).close()
    graph = sssp.generate("random", size=2000, degree=2, seed=0)
    algorithm, delta, cfg, source, _ = resolve_choice(graph, info, db=url)
    assert (algorithm, delta, cfg, source.value) == (
        "crauser",
        None,
        LaunchConfig.default(),
        "default",
    )


def test_shipped_h200_records_choose_per_class():
    """The shipped H200 records (tune engine --algorithm auto, this kernel version) cover the 12
    paper classes and the 10 high-diameter ones; they choose near-far on the sparse classes and
    on every high-diameter one (on the cluster loop), and a Crauser criterion on the dense ones."""
    import json
    from importlib import resources

    doc = json.loads((resources.files("tuning_db") / "data" / "h200-engine2.json").read_text())
    digest = kernels.digest(kernels.ENGINE_SOURCE_FILE)
    auto = [
        b
        for b in doc["best"]
        if b["algorithm"] == "auto" and b["kernel_version"]["digest"] == digest
    ]
    low = [b for b in auto if b["graph_class"].get("diameter", "lowdiam") == "lowdiam"]
    high = [b for b in auto if b["graph_class"].get("diameter") == "highdiam"]
    assert len(low) == 12 and len(high) == 10
    picks = {
        (b["graph_class"]["size"], b["graph_class"]["degree"]): b["options"]["algorithm"]
        for b in low
    }
    assert all(picks[(s, "deg2")] == "near-far" for s in ("24k", "49k", "98k"))
    assert all(picks[(s, "deg1000")] != "near-far" for s in ("24k", "49k", "98k"))
    assert {(b["graph_class"]["size"], b["graph_class"]["degree"]) for b in high} == {
        (s, d) for s in ("24k", "49k", "98k", "196k", "393k") for d in ("deg2", "deg20")
    }
    assert all(b["options"]["algorithm"] == "near-far" for b in high)
    # measured: the cluster loop won every high-diameter class (distances in shared memory)
    assert all(b["options"]["loop"] == "cluster" for b in high)


def test_solver_runs_the_pick_and_says_why(tmp_path, monkeypatch):
    """solve(tuned=True) on a GPU: the class's pick reaches the GPU solver (algorithm and Δ),
    and the result says why. The device is replaced by a stand-in that records its arguments."""
    import numpy as np

    import sssp
    import sssp.gpu
    from sssp.cpu.nearfar import default_delta
    from sssp.result import SSSPResult
    from sssp.solve import Solver

    graph = sssp.generate("random", size="98k", degree=2, seed=0)
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    rec = search_record(
        5.0,
        algorithm="auto",
        options={**search_record(5.0)["options"], "algorithm": "near-far", "delta_scale": 64},
    )
    with Store(url, seed=False) as store:
        store.put_best(structure.to_best(rec, H200))
    seen = {}

    class FakeGPU:
        def __init__(self, g, **kw):
            seen.update(kw)

        config_detail = ""  # set by the Solver, reported in stats as the engines do

        def solve(self, s, **kw):
            n = graph.n
            return SSSPResult(
                np.zeros(n, np.int64),
                np.full(n, -1, np.int32),
                s,
                seen["algorithm"],
                "successors",
                "gpu",
                1,
                stats={"config_detail": self.config_detail},
            )

        def close(self):
            pass

    info = DeviceInfo(
        0, "NVIDIA H200", "GPU-1234", (9, 0), 132, 143 << 30, "580", "13.0", "0000:00:00.0"
    )
    monkeypatch.setattr(Solver, "_resolve_backend", staticmethod(lambda backend, algorithm: "gpu"))
    monkeypatch.setattr(sssp.gpu, "device_info", lambda device=0: info)
    monkeypatch.setattr(sssp.gpu, "make_solver", FakeGPU)
    with Solver(graph, tuned=True, db=url) as solver:
        res = solver.solve(0)
    assert seen["algorithm"] == "near-far" and seen["delta"] == 64 * default_delta(graph)
    assert res.algorithm == "near-far" and "near-far, delta" in res.stats["config_detail"]
    assert solver.algorithm == "near-far"


def test_a_retune_measures_the_stored_best_right_after_the_default(monkeypatch, tmp_path):
    """After a kernel change the stored best of a class (older kernels) is measured second, so
    a small re-tuning budget still compares it with the default on the new kernels; a record
    outside the searched space (another algorithm) is not used."""
    import sssp

    searched = LaunchConfig(
        KernelConfig(512, "N", 8),
        loop="cluster",
        blocks_per_sm=1,
        local_limit=0,
        cluster=16,
        fuse=True,
    )
    rec = search_record(
        5.0,
        algorithm="auto",
        labels=searched.as_dict(),
        options={**searched.options(), "algorithm": "near-far", "delta_scale": 2.0},
    )
    best = structure.to_best(rec, H200)
    point = structure.previous_point(best, "auto")
    assert point == {**structure.from_config(searched), "algorithm": "near-far", "delta_scale": 2.0}
    assert structure.previous_point(best, "crauser") is None  # not in Crauser's space
    crauser = structure.to_best(search_record(5.0), H200)
    assert structure.previous_point(crauser, "crauser") == structure.from_config(crauser.config)

    order = []

    def fake_score(graph, config, sources, *, algorithm, delta_scale=None, **_):
        order.append((algorithm, structure.from_config(config), delta_scale))
        return structure.Trial(structure.from_config(config), 2.0, [2.0] * len(sources), 3)

    monkeypatch.setattr(structure, "score", fake_score)
    graph = sssp.generate("random", size=2000, degree=2, seed=0)
    structure.search(graph, algorithm="auto", budget=3, sources=2, previous=point)
    assert order[0][0] == "crauser" and order[1] == (
        "near-far",
        structure.from_config(searched),
        2.0,
    )

    # the CLI's look-up takes the class's latest record on this GPU model, whatever its kernels
    from sssp.classes import GraphClass
    from tuner.cli import _previous_best

    with Store(f"sqlite:///{tmp_path / 't.sqlite'}", seed=False) as store:
        store.put_best(best)
        previous = _previous_best(store, "NVIDIA H200", "auto", "successors")
        assert previous(GraphClass("98k", "deg2")) == point
        assert previous(GraphClass("24k", "deg2")) is None
