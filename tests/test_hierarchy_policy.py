"""When a tuned pick on the phast loop runs: its record's fallback, the ``hierarchy`` rule of
``sssp.tuned.resolve_pick``, and the background build of a hierarchy into the cache (CPU only;
the solver's switch from the fallback to the pick is in ``test_gpu_plan.py``)."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

import sssp
from sssp.classes import GraphClass
from sssp.config import ConfigSource, KernelConfig, LaunchConfig
from sssp.errors import InvalidArgumentError
from sssp.gpu.device import DeviceInfo
from sssp.hierarchy import BackgroundBuild, build_hierarchy, cache_path, hierarchy_for
from sssp.tuned import HIERARCHY_READ, TunedChoice, TunedFallback, resolve_pick
from tuner.class_search import SearchResult, _stored_options
from tuner.engine_space import canonical, to_config
from tuner.scoring import Trial
from tuning_db.records import fallback_options, read_fallback

INFO = DeviceInfo(0, "stand-in H200", "GPU-0", (9, 0), 132, 1 << 37, "0", "13.0", "0:0")
PHAST = LaunchConfig(KernelConfig(1024, "N", 4), loop="phast", local_limit=2048)
FALLBACK = TunedFallback(
    LaunchConfig(KernelConfig(1024, "N", 32), loop="persistent", local_limit=8192),
    "near-far",
    4.0,
    12.5,
)


class _Provider:
    """Answers every query with a phast pick (and ``fallback``)."""

    def __init__(
        self,
        fallback: TunedFallback | None = FALLBACK,
        tuned_for: GraphClass | None = None,
        core: int = 0,
    ) -> None:
        self.fallback = fallback
        self.tuned_for = tuned_for  # the record's class (default: the query's own)
        self.config = replace(PHAST, core=core)

    def lookup(self, query):
        return TunedChoice(
            self.config,
            ConfigSource.TUNED_EXACT,
            "near-far",
            1.0,
            f"class {query.graph_class}",
            self.tuned_for or query.graph_class,
            self.fallback,
        )

    def state(self, db):
        return None


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "hierarchies"
    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(folder))
    return folder


@pytest.fixture
def road():
    return sssp.generate("road", size=2000, seed=3)


def test_a_phast_record_stores_the_best_point_on_another_loop_as_its_fallback():
    """A search whose pick is the phast loop stores its fastest measured point on another loop
    (a failed point is no candidate) in the record's options, and reads it back; a pick on
    another loop stores none."""
    phast = canonical(
        {"loop": "phast", "block_size": 1024, "l1": "N", "lanes": 4, "blocks_per_sm": 1,
         "local_limit": 2048, "algorithm": "near-far", "delta_scale": 1, "cluster": 0,
         "fuse": 0, "shortcuts": 0}
    )  # fmt: skip
    slow = {**phast, "loop": "persistent", "lanes": 1, "blocks_per_sm": 2, "delta_scale": 2}
    fast = {**slow, "lanes": 32, "delta_scale": 4, "local_limit": 8192}
    broken = {**slow, "lanes": 8}
    trials = (
        Trial(phast, 1.2),
        Trial(slow, 20.0),
        Trial(fast, 12.5),
        Trial(broken, None, error="wrong distances"),
    )
    result = SearchResult(
        GraphClass("24k", "deg2", "highdiam"), "auto", "successors", phast, 1.2, 30.0, 0.01, 3,
        trials,
    )  # fmt: skip
    options = _stored_options(result, result.best, result.best, False)
    got = read_fallback(options)
    assert got == TunedFallback(to_config(canonical(fast)), "near-far", 4.0, 12.5)
    assert all(k.startswith("fallback.") for k in fallback_options(got))
    assert read_fallback({**options, **fallback_options(got)}) == got
    other = SearchResult(
        result.graph_class, "auto", "successors", fast, 12.5, 30.0, 0.01, 3, trials
    )
    assert read_fallback(_stored_options(other, other.best, other.best, False)) is None
    crauser = TunedFallback(LaunchConfig.default(), "crauser", None, None)
    assert read_fallback(fallback_options(crauser)) == crauser


def test_the_hierarchy_rule_runs_the_fallback_until_the_hierarchy_is_cached(cache, road):
    """Not cached: "never" and "cached" run the fallback; "auto" too, and names the phast pick
    it waits for and the file; "build" runs the pick (built at construction). Once the file is
    there, "auto" and "cached" run the pick with the hierarchy read from it."""
    provider = _Provider()
    for rule in ("never", "cached", "auto"):
        r = resolve_pick(road, INFO, provider=provider, hierarchy=rule)
        assert r.now.config == FALLBACK.config and r.now.algorithm == "near-far"
        assert r.now.delta == sssp.cpu.nearfar.scaled_delta(road, 4.0)
        assert "the pick is the phast loop" in r.now.detail and "12.5 ms" in r.now.detail
        assert r.now.hierarchy is None
        if rule == "auto":
            assert r.waiting is not None and r.waiting.config == PHAST
            assert r.cache == cache_path(road) and r.cache.parent == cache
            assert "background process" in r.now.detail
        else:
            assert r.waiting is None and r.cache is None and f"'{rule}'" in r.now.detail
    built = resolve_pick(road, INFO, provider=provider, hierarchy="build")
    assert built.now.config == PHAST and built.now.hierarchy is None and built.waiting is None
    h, read = hierarchy_for(road)
    assert not read
    for rule in ("auto", "cached"):
        r = resolve_pick(road, INFO, provider=provider, hierarchy=rule)
        assert r.now.config == PHAST and r.waiting is None
        assert r.now.detail.endswith(HIERARCHY_READ)
        np.testing.assert_array_equal(r.now.hierarchy.order, h.order)
    assert resolve_pick(road, INFO, provider=provider, hierarchy="never").now.config != PHAST
    with pytest.raises(InvalidArgumentError, match="hierarchy must be one of"):
        resolve_pick(road, INFO, provider=provider, hierarchy="sometimes")
    with pytest.raises(InvalidArgumentError, match="got 'sometimes'"):  # before anything else
        sssp.Solver(road, backend="cpu", hierarchy="sometimes")


def test_without_a_cache_folder_or_a_stored_fallback(monkeypatch, road):
    """With the cache off nothing can be built in the background: "auto" runs the fallback and
    says why. A record that stores no fallback runs the default configuration instead."""
    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", "off")
    r = resolve_pick(road, INFO, provider=_Provider(), hierarchy="auto")
    assert r.waiting is None and r.now.config == FALLBACK.config
    assert "no cache folder" in r.now.detail
    bare = resolve_pick(road, INFO, provider=_Provider(None), hierarchy="never")
    assert bare.now.algorithm == "crauser" and bare.now.config == LaunchConfig.default()
    assert "no fallback" in bare.now.detail


def test_a_phast_pick_of_the_other_diameter_class_is_not_taken(cache, road):
    """A nearest record of the high-diameter class answers a low-diameter graph (a device with
    no low-diameter records): its phast pick does not run under any rule, not even "build"; its
    fallback does, saying why. The same record answering a high-diameter graph runs the pick."""
    low = sssp.generate("random", size=2000, degree=2, seed=3)
    assert low.graph_class().diameter == "lowdiam" and road.graph_class().diameter == "highdiam"
    provider = _Provider(tuned_for=GraphClass("24k", "deg2", "highdiam"))
    for rule in ("build", "auto", "cached", "never"):
        r = resolve_pick(low, INFO, provider=provider, hierarchy=rule)
        assert r.now.config == FALLBACK.config and r.waiting is None and r.cache is None
        assert "another diameter class than this graph's (lowdiam)" in r.now.detail
    assert not cache_path(low).exists()
    assert resolve_pick(road, INFO, provider=provider, hierarchy="build").now.config == PHAST
    bare = _Provider(None, tuned_for=GraphClass("24k", "deg2", "highdiam"))
    assert resolve_pick(low, INFO, provider=bare, hierarchy="build").now.algorithm == "crauser"


def test_an_explicit_algorithm_reads_its_records_under_the_same_rules(cache, road):
    """``resolve_pick(algorithm="near-far")`` (``Solver(algorithm="near-far", tuned=True)``):
    a phast pick of the other diameter class runs its fallback there too, the hierarchy rule
    holds as for ``"auto"``, and a record without a fallback, or no record at all, keeps
    near-far (with the default rule's Δ), never Crauser."""
    from sssp.cpu.nearfar import default_delta, scaled_delta

    low = sssp.generate("random", size=2000, degree=2, seed=3)
    provider = _Provider(tuned_for=GraphClass("24k", "deg2", "highdiam"))
    r = resolve_pick(low, INFO, algorithm="near-far", provider=provider, hierarchy="build")
    assert r.now.config == FALLBACK.config and r.now.algorithm == "near-far"
    assert r.now.delta == scaled_delta(low, FALLBACK.delta_scale)
    assert "another diameter class" in r.now.detail
    r = resolve_pick(road, INFO, algorithm="near-far", provider=_Provider(), hierarchy="never")
    assert r.now.config == FALLBACK.config and "hierarchy='never'" in r.now.detail
    bare = resolve_pick(
        road, INFO, algorithm="near-far", provider=_Provider(None), hierarchy="never"
    )
    assert bare.now.algorithm == "near-far" and bare.now.config == LaunchConfig.default()
    assert bare.now.delta == default_delta(road)

    class _Nothing:
        def lookup(self, query):
            return None

        def state(self, db):
            return None

    for algorithm in ("near-far", "crauser-inout"):
        none = resolve_pick(road, INFO, algorithm=algorithm, provider=_Nothing())
        assert none.now.algorithm == algorithm and none.now.config == LaunchConfig.default()
    assert resolve_pick(road, INFO, provider=_Nothing()).now.algorithm == "crauser"


def test_a_background_build_fills_the_cache_once(cache, road):
    """The build runs in a process of its own and leaves the hierarchy ``hierarchy_for`` would
    build; a second build of the same graph is not started while the first runs; the input and
    marker files are gone at the end."""
    path = cache_path(road)
    first = BackgroundBuild(road, path)
    second = BackgroundBuild(road, path)
    assert first.started and not second.started
    deadline = time.monotonic() + 180
    while not first.done() and time.monotonic() < deadline:
        time.sleep(0.2)
    got = first.result()
    assert got is not None, "the background build did not finish in 3 minutes"
    ref = build_hierarchy(road)
    for name in ("order", "level_ptr", "down_ptr", "down_src", "down_w"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name), err_msg=name)
    deadline = time.monotonic() + 30  # the process removes its input after the write
    while list(cache.glob("*.graph.npz")) + list(cache.glob("*.building")):
        assert time.monotonic() < deadline, list(cache.iterdir())
        time.sleep(0.1)
    assert sorted(p.name for p in cache.iterdir()) == [path.name]


class _ByDiameter:
    """Near-far on the persistent loop for a low-diameter query, a phast pick under a core
    table of ``core`` nodes for a high-diameter one (the records of a device that has both)."""

    def __init__(self, core: int, scale: float = 1.0) -> None:
        self.core, self.scale, self.asked = core, scale, []

    def lookup(self, query):
        self.asked.append(query.graph_class)
        if query.graph_class.diameter == "lowdiam":
            return TunedChoice(
                FALLBACK.config, ConfigSource.TUNED_EXACT, "near-far", self.scale,
                "low record", query.graph_class,
            )  # fmt: skip
        config = replace(PHAST, core=self.core)
        return TunedChoice(
            config, ConfigSource.TUNED_NEAREST, "near-far", 1.0, "high record",
            GraphClass("24k", "deg2", "highdiam"), FALLBACK,
        )  # fmt: skip

    def state(self, db):
        return None


def test_a_low_diameter_graph_takes_phast_where_its_cached_hierarchy_sweeps_fewer_levels(
    cache, monkeypatch
):
    """A low-diameter graph whose own record picks near-far runs the high-diameter record's
    phast pick where its hierarchy is in the cache and sweeps fewer levels below the pick's core
    than near-far takes steps (CPU near-far, median of three sources, at the pick's Δ); more
    levels, no cached hierarchy or ``hierarchy="never"`` keep near-far. The detail gives both
    counts. Nothing is hashed while the cache folder holds no hierarchy."""
    import sssp.hierarchy
    from sssp.cpu.nearfar import near_far, scaled_delta

    low = sssp.generate("random", size=2000, degree=2, seed=3)
    assert low.graph_class().diameter == "lowdiam"

    def no_hash(graph):
        raise AssertionError("hashed a graph while the cache held no hierarchy")

    with monkeypatch.context() as m:
        m.setattr(sssp.hierarchy, "cache_path", no_hash)
        for rule in ("auto", "cached", "build", "never"):
            r = resolve_pick(low, INFO, provider=_ByDiameter(256), hierarchy=rule)
            assert r.now.config == FALLBACK.config and r.waiting is None
    cache.mkdir()
    (cache / "other-graph.npz").write_bytes(b"")  # the cache holds something, not this graph
    r = resolve_pick(low, INFO, provider=_ByDiameter(256), hierarchy="cached")
    assert r.now.config == FALLBACK.config and "levels below" not in r.now.detail

    h, _ = hierarchy_for(low)
    delta = scaled_delta(low, 1.0)
    rng = np.random.default_rng(0)
    starts = rng.choice(np.flatnonzero(np.diff(low.indptr)), size=3, replace=False)
    steps = int(np.median([near_far(low, int(s), delta=delta).iterations for s in starts]))
    assert h.levels_below(256) < steps <= h.levels_below(0)  # the test's two sides
    for rule in ("auto", "cached", "build"):
        provider = _ByDiameter(256)
        r = resolve_pick(low, INFO, provider=provider, hierarchy=rule)
        assert r.now.config == replace(PHAST, core=256) and r.waiting is None
        assert provider.asked == [
            low.graph_class(),
            replace(low.graph_class(), diameter="highdiam"),
        ]
        np.testing.assert_array_equal(r.now.hierarchy.order, h.order)
        assert (
            f"sweeps {h.levels_below(256)} levels below a core of 256 nodes, near-far takes "
            f"{steps} steps" in r.now.detail
        )
        assert r.now.detail.endswith(HIERARCHY_READ)
    kept = resolve_pick(low, INFO, provider=_ByDiameter(0), hierarchy="cached")
    assert kept.now.config == FALLBACK.config and kept.now.hierarchy is None
    assert f"sweeps {h.levels} levels below a core of 0 nodes" in kept.now.detail
    assert kept.now.detail.endswith(": near-far runs")
    never = resolve_pick(low, INFO, provider=_ByDiameter(256), hierarchy="never")
    assert never.now.config == FALLBACK.config and "levels below" not in never.now.detail
    # The nearest record of the high-diameter class answering the graph itself (no record of
    # its own diameter class): its fallback is the near-far side of the same test.
    nearest = GraphClass("24k", "deg2", "highdiam")
    took = resolve_pick(low, INFO, provider=_Provider(tuned_for=nearest, core=256))
    assert took.now.config == replace(PHAST, core=256) and took.now.hierarchy is not None
    assert "levels below a core of 256 nodes" in took.now.detail
    fell = resolve_pick(low, INFO, provider=_Provider(tuned_for=nearest), hierarchy="auto")
    assert fell.now.config == FALLBACK.config and fell.waiting is None
    assert "another diameter class" in fell.now.detail and fell.now.detail.endswith("runs")
    never = resolve_pick(
        low, INFO, provider=_Provider(tuned_for=nearest, core=256), hierarchy="never"
    )
    assert never.now.config == FALLBACK.config and "levels below" not in never.now.detail
