"""Engine 2's end-to-end search as data (no GPU): the search space, the records it stores and
the look-up that gives them to ``solve(tuned=True)``."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

import kernels
from sssp.classes import GraphClass
from sssp.config import CORE_NODES_MAX, ConfigError, KernelConfig, LaunchConfig
from sssp.gpu.device import DeviceInfo
from sssp.tuned import resolve_config
from tuner import class_search, engine_space, scoring
from tuning_db import Store
from tuning_db.records import DeviceRecord

H200 = DeviceRecord("NVIDIA H200", "GPU-1234", "9.0", 132, "580.159.04", "13.0")


SEARCHED = engine_space.to_config(
    {
        "loop": "graph",
        "block_size": 1024,
        "l1": "A",
        "lanes": 4,
        "blocks_per_sm": 1,
        "local_limit": 8192,
    }
)


def search_result(
    speedup: float, *, algorithm: str = "crauser", point: dict | None = None, spread: float = 0.0
) -> class_search.SearchResult:
    """A search's result whose pick runs ``speedup`` times faster than the default."""
    return class_search.SearchResult(
        graph_class=GraphClass("98k", "deg2"),
        algorithm=algorithm,
        variant="successors",
        best_point=point or engine_space.from_config(SEARCHED),
        best_ms=1.0,
        default_ms=speedup,
        spread=spread,
        n_sources=5,
    )


def memory_study():
    import optuna

    return optuna.create_study(direction="minimize")


@pytest.mark.parametrize(
    ("graph_class", "first"),
    [
        (GraphClass("3145k", "deg20"), True),
        (GraphClass("1572k", "deg2"), True),
        (GraphClass("786k", "deg20"), True),  # holds graphs of up to 1.1M nodes
        (GraphClass("393k", "deg20"), False),
        (GraphClass("3145k", "deg2", "highdiam"), False),  # roads and meshes: many small steps
        (None, False),
    ],
)
def test_wide_points_lead_the_warm_start_of_large_low_diameter_classes(graph_class, first):
    for algorithm in ("auto", "near-far"):
        points = engine_space.start_points(algorithm, graph_class)
        base = engine_space.start_points(algorithm)
        assert "wide" not in [p["loop"] for p in base]
        if not first:
            if graph_class is None or graph_class.size in ("24k", "49k", "98k", "196k", "393k"):
                assert points == base
            continue
        d = 1 if algorithm == "auto" else 0  # "auto" measures its default (Crauser OUT) first
        wide = points[d : d + 2]
        assert sorted(map(repr, points)) == sorted(map(repr, base + wide))
        nearfar = [p for p in points[d + 2 :] if engine_space.choice(p, algorithm)[0] == "near-far"]
        last = [p["loop"] == "cluster" and p["fuse"] != 2 for p in nearfar]
        assert any(last) and last == sorted(last)  # fused across blocks runs across the grid
        assert [(p["loop"], p["delta_scale"]) for p in wide] == [("wide", 0.5), ("wide", 1)]
        assert all(engine_space.choice(p, algorithm)[0] == "near-far" for p in wide)


def test_space_points_round_trip():
    for point in (engine_space.DEFAULT_POINT, *engine_space.WARM_START):
        assert set(point) == set(engine_space.SPACE)
        assert all(point[k] in engine_space.SPACE[k] for k in point), point
        assert engine_space.from_config(engine_space.to_config(point)) == point
    large = GraphClass("3145k", "deg20")
    for algorithm, graph_class in itertools.product(("auto", "near-far"), (None, large)):
        space = engine_space.space_for(algorithm)
        for point in engine_space.start_points(algorithm, graph_class):
            assert set(point) == set(space) and all(point[k] in space[k] for k in point), point
            assert (
                engine_space.canonical(point) == point
            )  # start points are their own representatives
            back = engine_space.from_config(
                engine_space.to_config(point)
            )  # the launch part of the point
            assert back == {k: point[k] for k in back}, point
    # the default point is the default configuration (local limit -1 means 8 x 256)
    default = engine_space.to_config(engine_space.DEFAULT_POINT)
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
    nf = engine_space.canonical(
        {**base, "loop": "cluster", "algorithm": "near-far", "delta_scale": 2}
    )
    assert nf["loop"] == "cluster" and nf["cluster"] == 16
    assert (nf["lanes"], nf["blocks_per_sm"], nf["local_limit"]) == (kernels.CLUSTER_LANES, 1, 0)
    cr = engine_space.canonical(
        {**base, "loop": "cluster", "algorithm": "crauser", "delta_scale": 2}
    )
    assert (cr["loop"], cr["cluster"], cr["delta_scale"], cr["lanes"]) == ("persistent", 0, 1, 4)
    host = engine_space.canonical(
        {**base, "loop": "host", "algorithm": "near-far", "delta_scale": 2}
    )
    assert (host["loop"], host["cluster"]) == ("persistent", 0)
    own = engine_space.canonical(
        {**base, "loop": "graph", "delta_scale": 4}
    )  # near-far's own space
    assert own["loop"] == "persistent"
    cfg = engine_space.to_config(nf)
    assert cfg.loop == "cluster" and cfg.cluster == 16
    assert LaunchConfig.from_parts(cfg.as_dict(), cfg.options()) == cfg  # stored and read back
    fused = engine_space.canonical(
        {**base, "loop": "cluster", "algorithm": "near-far", "delta_scale": 2, "fuse": 1}
    )
    cfg = engine_space.to_config(fused)
    assert cfg.fuse and engine_space.from_config(cfg)["fuse"] == 1
    assert LaunchConfig.from_parts(cfg.as_dict(), cfg.options()) == cfg
    assert "fused" in str(cfg)
    grid = engine_space.canonical(
        {**base, "loop": "persistent", "algorithm": "near-far", "delta_scale": 2, "fuse": 1}
    )
    assert (
        grid["fuse"] == 0 and not engine_space.to_config(grid).fuse
    )  # fusion is the cluster loop's
    assert "fuse" in engine_space.AUTO_SPACE and "fuse" in engine_space.space_for("near-far")


@pytest.mark.parametrize("speedup,kept", [(3.0, False), (1.01, True)])
def test_search_records_store_and_resolve(tmp_path, speedup, kept):
    best = class_search.to_best(search_result(speedup), H200)
    assert best.kept_default is kept
    assert best.kernel_version.digest == kernels.digest(kernels.ENGINE_SOURCE_FILE)
    with Store(f"sqlite:///{tmp_path / 't.sqlite'}", seed=False) as store:
        store.put_best(best)
        (back,) = store.all_best()
    assert back.tuned_config == SEARCHED  # the search's picks survive, structure included
    assert back.config == (LaunchConfig.default() if kept else SEARCHED)


def test_solve_tuned_looks_up_engine_records(tmp_path):
    import sssp

    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        store.put_best(class_search.to_best(search_result(3.0), H200))
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


def test_search_keeps_its_trials_as_an_optuna_study(tmp_path):
    """A class search's trials live in the tuning database as an Optuna study that
    ``optuna.load_study`` (and so optuna-dashboard) reads; a failed configuration is a FAIL trial
    with its reason. The GPU is replaced by a scorer that times by block size."""
    import optuna

    def scorer(point):
        if point["lanes"] == 32:
            return scoring.Trial(point, None, error="wrong distances from source 1")
        ms = point["block_size"] / 256
        return scoring.Trial(point, ms, (ms,) * 3, (ms / 2,) * 3, 7)

    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    name = "sssp/GPU-1234/d/24k-deg2/crauser-successors/engine/run-1"
    with Store(url, seed=False) as store:
        study = optuna.create_study(storage=store.storage, study_name=name)
        res = class_search.search(
            study, scorer, graph_class=GraphClass("24k", "deg2"), budget=12, n_sources=3
        )
    study = optuna.load_study(storage=url, study_name=name)
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    failed = [t for t in study.trials if t.state == optuna.trial.TrialState.FAIL]
    assert len(done) + len(failed) == len(res.trials) == 12
    assert all(t.user_attrs[scoring.MARKER]["error"].startswith("wrong distances") for t in failed)
    assert study.best_value == min(t.wall_ms for t in res.trials if t.wall_ms is not None)
    first = scoring.Trial.from_attrs(done[0].user_attrs[scoring.MARKER])
    assert first.phases == 7 and first.gpu_median_ms == first.wall_ms / 2  # gpu kept beside


def test_auto_space_canonical_points_and_start():
    """ "auto" adds the algorithm and near-far's Δ scale; near-far runs on the persistent loop and
    Δ means nothing to Crauser, so points that run the same solve collapse to one."""
    space = engine_space.space_for("auto")
    assert (
        space["algorithm"] == ("crauser", "crauser-inout", "near-far") and 1 in space["delta_scale"]
    )
    for point in engine_space.start_points("auto"):
        assert set(point) == set(space) and all(point[k] in space[k] for k in point)
    first = engine_space.start_points("auto")[0]
    assert engine_space.choice(first, "auto") == ("crauser", None)  # the default is Crauser OUT's
    nf = {**engine_space.DEFAULT_POINT, "loop": "graph", "algorithm": "near-far", "delta_scale": 16}
    assert engine_space.canonical(nf)["loop"] == "persistent"
    cr = {**engine_space.DEFAULT_POINT, "algorithm": "crauser", "delta_scale": 64}
    assert engine_space.canonical(cr)["delta_scale"] == 1
    assert engine_space.choice(nf, "auto") == ("near-far", 16.0)


def test_auto_search_picks_and_stores_the_algorithm(tmp_path):
    """A search over "auto" with a scorer where near-far at Δ x64 wins: the record stores
    near-far and its scale, and solve's look-up returns them with Δ = 64 x the default rule."""
    import sssp
    from sssp.cpu.nearfar import default_delta
    from sssp.tuned import resolve_choice

    def scorer(point):
        algorithm, scale = engine_space.choice(point, "auto")
        ms = 5.0 if algorithm != "near-far" else 1.0 + abs((scale or 1) - 64) / 64
        return scoring.Trial(point, ms, (ms, ms), (ms, ms), 3)

    graph = sssp.generate("random", size="98k", degree=2, seed=0)
    gc = GraphClass("98k", "deg2")
    res = class_search.search(memory_study(), scorer, graph_class=gc, algorithm="auto", budget=16)
    assert res.chosen() == ("near-far", 64.0)
    best = class_search.to_best(res, H200)
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
    kept = class_search.to_best(dataclasses.replace(res, default_ms=res.best_ms), H200)
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
    paper classes, the 10 high-diameter ones up to 393k and the 16 large ones (196k-3145k); they
    choose near-far on the sparse classes and on every high-diameter one (the phast loop on the
    eight searched with it, the cluster loop on the other ones up to 393k, the persistent loop
    past it), a Crauser criterion on the dense ones, and the wide loop on the low-diameter deg20
    classes from 786k nodes (GAP's scale-22 graphs are 3145k/deg20)."""
    import json
    from importlib import resources

    from sssp.classes import high_diameter_classes, large_classes, paper_classes

    doc = json.loads((resources.files("tuning_db") / "data" / "h200-engine2.json").read_text())
    digest = kernels.digest(kernels.ENGINE_SOURCE_FILE)
    auto = [
        b
        for b in doc["best"]
        if b["algorithm"] == "auto" and b["kernel_version"]["digest"] == digest
    ]

    def cls(b):
        g = b["graph_class"]
        return GraphClass(g["size"], g["degree"], g.get("diameter", "lowdiam"))

    by_class = {cls(b): b["options"] for b in auto}
    assert len(by_class) == len(auto)  # one record a class
    assert set(by_class) == {*paper_classes(), *high_diameter_classes(), *large_classes()}
    algo = {c: o["algorithm"] for c, o in by_class.items()}
    assert all(algo[GraphClass(s, "deg2")] == "near-far" for s in ("24k", "49k", "98k"))
    assert all(algo[GraphClass(s, "deg1000")] != "near-far" for s in ("24k", "49k", "98k"))
    high = {c: o for c, o in by_class.items() if c.diameter == "highdiam"}
    assert all(o["algorithm"] == "near-far" for o in high.values())
    # Runs 142-146 (the H200 searched again with the phast points): the phast loop with a core
    # table of up to 1 024 nodes at 4 lanes on the classes searched, each with its fallback on
    # another loop; run 210 searched the four mesh classes (24k, 49k x deg2, deg20) again and
    # took a core of 8 192 (faster on all 14 meshes of the record, twice alternated); the others
    # as searched before (the cluster loop up to 393k, where the distances fit a cluster's
    # shared memory, the persistent loop past it).
    meshes = {GraphClass(s, d, "highdiam") for s in ("24k", "49k") for d in ("deg2", "deg20")}
    phast = meshes | {
        GraphClass(s, d, "highdiam")
        for s, d in (("196k", "deg2"), ("196k", "deg20"), ("393k", "deg2"), ("786k", "deg2"))
    }
    for c in phast:
        o = by_class[c]
        core = 8192 if c in meshes else 1024
        assert o["loop"] == "phast" and o["core"] == core and o["fallback.loop"] != "phast"
    small = {"24k", "49k", "98k", "196k", "393k"}
    others = {c: o for c, o in high.items() if c not in phast}
    assert all((o["loop"] == "cluster") == (c.size in small) for c, o in others.items())
    for size in ("1572k", "3145k"):  # measured: the wide loop, at 0.5 x the default Δ
        options = by_class[GraphClass(size, "deg20")]
        assert options["loop"] == "wide" and options["delta_scale"] == 0.5
    # Run 106: 2.75 ms against 3.38 for Crauser's default on the 786k-node instance.
    assert by_class[GraphClass("786k", "deg20")]["loop"] == "wide"


@pytest.fixture
def stand_in_gpu(monkeypatch):
    """The device replaced by a stand-in: the Solver takes the GPU backend of an H200, and its
    GPU solver records the arguments it was made with (the dict returned, cleared each time)."""
    import numpy as np

    import sssp.gpu
    from sssp.result import SSSPResult
    from sssp.solve import Solver

    seen: dict = {}

    class FakeGPU:
        config_detail = ""  # set by the Solver, reported in stats as the engines do

        def __init__(self, g, **kw):
            seen.clear()
            seen.update(kw)
            self.n = g.n

        def solve(self, s, **kw):
            return SSSPResult(
                np.zeros(self.n, np.int64),
                np.full(self.n, -1, np.int32),
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
    return seen


def _store_pick(tmp_path, algorithm: str, point: dict) -> str:
    """A database holding one best record of ``algorithm`` (the H200's) at ``point``; its URL."""
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        store.put_best(
            class_search.to_best(search_result(5.0, algorithm=algorithm, point=point), H200)
        )
    return url


def test_solver_runs_the_pick_and_says_why(tmp_path, stand_in_gpu):
    """solve(tuned=True) on a GPU: the class's pick reaches the GPU solver (algorithm and Δ),
    and the result says why. The device is replaced by a stand-in that records its arguments."""
    import sssp
    from sssp.cpu.nearfar import default_delta
    from sssp.solve import Solver

    graph = sssp.generate("random", size="98k", degree=2, seed=0)
    point = {**engine_space.from_config(SEARCHED), "algorithm": "near-far", "delta_scale": 64}
    url = _store_pick(tmp_path, "auto", point)
    seen = stand_in_gpu
    with Solver(graph, tuned=True, db=url) as solver:
        res = solver.solve(0)
    assert seen["algorithm"] == "near-far" and seen["delta"] == 64 * default_delta(graph)
    assert res.algorithm == "near-far" and "near-far, delta" in res.stats["config_detail"]
    assert solver.algorithm == "near-far"


def test_an_explicit_near_far_solver_takes_its_records_delta_unless_given(tmp_path, stand_in_gpu):
    """``Solver(algorithm="near-far", tuned=True)``: the near-far records' pick with its Δ scale
    (a tuned configuration measured at 4 x the rule is not run at 1 x), and a Δ the caller gives
    wins over the record's (the detail says so)."""
    import sssp
    from sssp.cpu.nearfar import default_delta
    from sssp.solve import Solver

    graph = sssp.generate("random", size="98k", degree=2, seed=0)
    url = _store_pick(
        tmp_path, "near-far", {**engine_space.from_config(SEARCHED), "delta_scale": 4}
    )
    seen = stand_in_gpu
    with Solver(graph, algorithm="near-far", tuned=True, db=url) as solver:
        assert seen["algorithm"] == "near-far" and seen["config"] == SEARCHED
        assert seen["delta"] == 4 * default_delta(graph) == solver.delta
    with Solver(graph, algorithm="near-far", tuned=True, db=url, delta=7) as solver:
        assert seen["delta"] == 7 == solver.delta and seen["config"] == SEARCHED
        assert "delta 7 as given" in solver.config_detail


def test_a_retune_measures_the_stored_best_right_after_the_default(tmp_path):
    """After a kernel change the stored best of a class (older kernels) is measured second, so
    a small re-tuning budget still compares it with the default on the new kernels; a record
    outside the searched space (another algorithm) is not used."""

    searched = LaunchConfig(
        KernelConfig(512, "N", 8),
        loop="cluster",
        blocks_per_sm=1,
        local_limit=0,
        cluster=16,
        fuse=True,
    )
    pick = {**engine_space.from_config(searched), "algorithm": "near-far", "delta_scale": 2.0}
    best = class_search.to_best(search_result(5.0, algorithm="auto", point=pick), H200)
    point = engine_space.previous_point(best, "auto")
    assert point == {
        **engine_space.from_config(searched),
        "algorithm": "near-far",
        "delta_scale": 2.0,
        "shortcuts": 0,  # a record made before shortcuts has none
        "core": 0,  # nor a core table (the phast loop's only)
    }
    assert engine_space.previous_point(best, "crauser") is None  # not in Crauser's space
    crauser = class_search.to_best(search_result(5.0), H200)
    assert engine_space.previous_point(crauser, "crauser") == engine_space.from_config(
        crauser.config
    )

    order = []

    def scorer(point):
        algorithm, scale = engine_space.choice(point, "auto")
        order.append((algorithm, engine_space.from_config(engine_space.to_config(point)), scale))
        return scoring.Trial(point, 2.0, (2.0, 2.0), (1.0, 1.0), 3)

    gc = GraphClass("98k", "deg2")
    class_search.search(
        memory_study(), scorer, graph_class=gc, algorithm="auto", budget=3, previous=point
    )
    assert order[0][0] == "crauser" and order[1] == (
        "near-far",
        engine_space.from_config(searched),
        2.0,
    )

    # the look-up takes the class's latest record on this GPU model, whatever its kernels
    opts = class_search.EngineOptions(algorithm="auto")
    with Store(f"sqlite:///{tmp_path / 't.sqlite'}", seed=False) as store:
        store.put_best(best)
        assert class_search.previous_best(store, "NVIDIA H200", gc, opts) == point
        assert (
            class_search.previous_best(store, "NVIDIA H200", GraphClass("24k", "deg2"), opts)
            is None
        )


def test_canonical_wide_points():
    """The wide loop runs near-far only, on its own kernels: one point per Δ scale."""
    base = {"block_size": 1024, "l1": "A", "lanes": 4, "blocks_per_sm": 2, "local_limit": 8192}
    wide = engine_space.canonical(
        {**base, "loop": "wide", "algorithm": "near-far", "delta_scale": 2, "cluster": 16}
    )
    assert wide == {
        "loop": "wide",
        "algorithm": "near-far",
        "delta_scale": 2,
        "cluster": 0,
        "block_size": kernels.WIDE_BLOCK,
        "l1": "N",
        "lanes": 8,
        "blocks_per_sm": 1,
        "local_limit": 0,
        "shortcuts": 0,
    }
    assert all(wide[k] in engine_space.AUTO_SPACE[k] for k in wide)
    cut = engine_space.canonical({**base, "loop": "wide", "algorithm": "near-far", "shortcuts": 8})
    assert cut["shortcuts"] == 0 and engine_space.to_config(cut).shortcuts == 0
    crauser = engine_space.canonical({**base, "loop": "wide", "algorithm": "crauser"})
    assert crauser["loop"] == "persistent" and crauser["block_size"] == 1024
    assert "wide" in engine_space.space_for("near-far")["loop"]
    assert engine_space.to_config(wide).loop == "wide"


def test_a_point_whose_loop_falls_back_is_not_measured(monkeypatch):
    """A cluster too small for the class's instance runs the persistent loop: the point fails
    instead of being scored (and stored) under the loop it names."""
    import numpy as np

    import sssp
    import sssp.gpu

    graph = sssp.generate("random", size="24k", degree=2, seed=0)
    solves = []

    class Fallen:
        loop = "persistent"
        grid_async = False

        def __init__(self, g, **kw):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def solve(self, s):
            solves.append(s)
            raise AssertionError("a fallen-back point must not be timed")  # score reports it

    monkeypatch.setattr(sssp.gpu, "make_solver", Fallen)

    def score(config):
        return scoring.score(
            graph,
            config,
            [0],
            algorithm="near-far",
            variant="successors",
            device=0,
            reference={0: np.zeros(graph.n)},
            delta_scale=1,
        )

    cluster = LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", cluster=16)
    trial = score(cluster)
    assert trial.wall_ms is None and "cluster loop ran as persistent" in trial.error
    assert solves == []
    # Fused across blocks runs across the grid there: the protocol it names, so it is timed.
    Fallen.grid_async = True
    across = LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", cluster=16, fuse=2)
    score(across)
    assert solves == [0]  # it reached a solve
    Fallen.grid_async = False
    trial = score(cluster)
    assert trial.wall_ms is None and solves == [0]


def test_cluster_points_go_last_from_786k_nodes():
    small = engine_space.start_points("auto", GraphClass("393k", "deg2", "highdiam"))
    large = engine_space.start_points("auto", GraphClass("786k", "deg2", "highdiam"))
    assert sorted(map(repr, small)) == sorted(map(repr, large))
    # Fused across blocks keeps its place: it runs across the grid where no cluster holds the
    # graph; the other cluster points go last.
    nearfar = [p for p in large if p.get("algorithm") == "near-far"]
    falls_back = [p["loop"] == "cluster" and p["fuse"] != 2 for p in nearfar]
    assert not falls_back[0] and falls_back == sorted(falls_back)
    across = [i for i, p in enumerate(nearfar) if p["fuse"] == 2]
    assert across and max(across) < falls_back.index(True)
    assert [p["loop"] for p in small if p.get("algorithm") == "near-far"][:3] == [
        "phast",
        "phast",
        "cluster",
    ]


def test_shortcut_points_follow_the_first_near_far_point_of_high_diameter_classes():
    for algorithm in ("auto", "near-far"):
        high = engine_space.start_points(algorithm, GraphClass("393k", "deg2", "highdiam"))
        low = engine_space.start_points(algorithm, GraphClass("393k", "deg2"))
        nearfar = [p for p in high if engine_space.choice(p, algorithm)[0] == "near-far"]
        assert [p["loop"] for p in nearfar[:2]] == ["phast", "phast"]  # (test_phast_point...)
        nearfar = nearfar[2:]
        assert [p["shortcuts"] for p in nearfar[:3]] == [0, 16, 16]
        assert {p["loop"] for p in nearfar[1:3]} == {"cluster", "persistent"}
        assert all(engine_space.to_config(p).shortcuts == 16 for p in nearfar[1:3])
        assert all(p.get("shortcuts", 0) == 0 for p in low)
        assert all(engine_space.canonical(p) == p for p in high)
    # the phase-synchronous algorithms take none: such a point collapses to its plain one
    crauser = {**nearfar[1], "algorithm": "crauser"}
    assert engine_space.canonical(crauser)["shortcuts"] == 0


def test_phast_point_leads_high_diameter_classes():
    """The sweep comes first for high-diameter classes only, as a canonical point of both
    spaces; its Δ, block size and blocks per multiprocessor mean nothing (one representative),
    its local limit (the widest level block 0 sweeps) and lanes (the most a node's in-edges are
    split over) do, and the
    phase-synchronous algorithms run on the persistent loop instead."""
    point = engine_space.PHAST_WARM_START
    assert point["loop"] == "phast" and engine_space.canonical(point) == point
    config = engine_space.to_config(point)
    assert config.loop == "phast" and config.shortcuts == 0 and not config.fuse
    assert config.relax.lanes == 4  # measured faster than 1 on every mesh (runs 122, 134)
    for algorithm in ("auto", "near-far"):
        space = engine_space.space_for(algorithm)
        assert "phast" in space["loop"]
        high = engine_space.start_points(algorithm, GraphClass("49k", "deg2", "highdiam"))
        low = engine_space.start_points(algorithm, GraphClass("49k", "deg2"))
        first = [p for p in high if engine_space.choice(p, algorithm)[0] == "near-far"][0]
        assert first["loop"] == "phast" and all(p["loop"] != "phast" for p in low)
        assert all(set(p) == set(space) and p[k] in space[k] for p in high for k in p)
    other = {**point, "delta_scale": 16, "block_size": 128, "blocks_per_sm": 2}
    assert engine_space.canonical(other) == point
    lanes = engine_space.canonical({**point, "lanes": 8})
    assert lanes != point and engine_space.to_config(lanes).relax.lanes == 8
    grid = engine_space.canonical({**point, "local_limit": 0})  # every level a grid step
    assert grid != point and engine_space.to_config(grid).local_limit == 0
    crauser = engine_space.canonical({**point, "algorithm": "crauser"})
    assert crauser["loop"] == "persistent" and crauser["delta_scale"] == 1


def test_the_phast_points_measure_the_widest_core_table_then_1024_nodes():
    """High-diameter classes measure the sweep under a core table of up to 8 192 nodes (the most
    a configuration allows), then of 1 024, both canonical points of both spaces (the plain
    sweep stays in the space); a core means nothing to another loop (such a point collapses to
    its plain one, its configuration has none), and it round-trips through a record's options
    and a configuration."""
    wide, core = engine_space.PHAST_WIDE_CORE_WARM_START, engine_space.PHAST_CORE_WARM_START
    assert core == {**engine_space.PHAST_WARM_START, "core": 1024}
    assert wide == {**engine_space.PHAST_WARM_START, "core": CORE_NODES_MAX}
    assert engine_space.PHAST_WARM_START["core"] == 0
    assert max(engine_space.CORE_CHOICES) == CORE_NODES_MAX and 0 in engine_space.CORE_CHOICES
    assert engine_space.to_config(wide).core == CORE_NODES_MAX
    config = engine_space.to_config(core)
    assert config.loop == "phast" and config.core == 1024 and "core<=1024" in str(config)
    assert engine_space.from_config(config) == {
        k: v for k, v in core.items() if k not in ("algorithm", "delta_scale", "cluster", "fuse")
        and (k != "shortcuts")
    }  # fmt: skip
    assert LaunchConfig.from_parts(config.as_dict(), config.options()) == config
    assert "core" not in engine_space.to_config(engine_space.PHAST_WARM_START).options()
    for algorithm in ("auto", "near-far"):
        high = engine_space.start_points(algorithm, GraphClass("49k", "deg2", "highdiam"))
        phast = [p for p in high if p["loop"] == "phast"]
        assert [p["core"] for p in phast] == [CORE_NODES_MAX, 1024]
        assert all(p["core"] == 0 for p in high if p["loop"] != "phast")
        low = engine_space.start_points(algorithm, GraphClass("49k", "deg2"))
        assert all(p["core"] == 0 for p in low)
    cluster = engine_space.canonical({**core, "loop": "cluster"})
    assert cluster["core"] == 0 and engine_space.to_config(cluster).core == 0


def test_a_phast_record_reads_back_as_its_point_and_configuration():
    """A class record that chose the phast loop: its configuration round-trips through the
    record's parts, reads back as the canonical phast point of both spaces, and the solver it
    makes asks for the phast loop (shortcuts are refused there)."""
    point = engine_space.PHAST_WARM_START
    best = class_search.to_best(search_result(5.0, algorithm="auto", point=point), H200)
    assert best.config.loop == "phast" and "loop=phast" in str(best.config).replace(" ", "")
    assert LaunchConfig.from_parts(best.config.as_dict(), best.config.options()) == best.config
    assert engine_space.previous_point(best, "auto") == point
    nearfar = {k: v for k, v in point.items() if k != "algorithm"}
    assert engine_space.previous_point(best, "near-far") == nearfar
    with pytest.raises(ConfigError, match="persistent and cluster"):
        LaunchConfig(loop="phast", shortcuts=8)
