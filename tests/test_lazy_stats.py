"""A result's statistics decoded on first access (sssp.result.LazyStats): the GPU solver hands
over a function of its counters instead of a dict, and the caller sees an ordinary read-only
mapping."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from sssp.result import LazyStats, SSSPResult


def _result(stats) -> SSSPResult:
    return SSSPResult(
        dist=np.zeros(3, np.int64),
        pred=None,
        source=0,
        algorithm="near-far",
        variant="successors",
        backend="gpu",
        iterations=1,
        stats=stats,
    )


def test_decoded_once_on_first_access_and_read_only():
    calls = []

    def decode():
        calls.append(1)
        return {"reached": 3, "loop": "cluster"}

    r = _result(LazyStats(decode))
    assert calls == []  # building the result decodes nothing
    assert r.stats["reached"] == 3 and dict(r.stats) == {"reached": 3, "loop": "cluster"}
    assert len(r.stats) == 2 and "loop" in r.stats and r.stats.get("missing") is None
    assert calls == [1]
    with pytest.raises(TypeError):
        r.stats["reached"] = 4  # type: ignore[index]
    assert "reached" in repr(r.stats)


def test_a_plain_dict_is_still_copied_and_frozen():
    given = {"a": 1}
    r = _result(given)
    given["a"] = 2
    assert r.stats["a"] == 1
    with pytest.raises(TypeError):
        r.stats["a"] = 3  # type: ignore[index]


def test_pickles_as_the_dict_it_holds():
    stats = LazyStats(lambda: {"buckets": 4})
    assert pickle.loads(pickle.dumps(stats)) == {"buckets": 4}


def test_an_assembled_result_is_the_constructed_one():
    """SSSPResult.assembled (the GPU solver's builder, without the constructor's checks) makes
    the same frozen, read-only result, and its timings stay a view of the solver's dict until
    the solver returns it (the wall clock stops after the result is built)."""
    import dataclasses

    dist, pred = np.arange(4, dtype=np.int64), np.full(4, -1, np.int32)
    timings = {"gpu": 1e-4}
    fields = dict(source=1, algorithm="near-far", variant="successors", backend="gpu")
    made = SSSPResult.assembled(dist=dist, pred=pred, timings=timings, iterations=2, **fields)
    timings["wall"] = 2e-4
    built = SSSPResult(dist, pred, iterations=2, timings=timings, **fields)
    assert made.config is None and dict(made.stats) == {}
    for name in ("dist", "pred", "source", "algorithm", "variant", "backend", "iterations"):
        assert getattr(made, name) is getattr(built, name)
    assert dict(made.timings) == {"gpu": 1e-4, "wall": 2e-4}
    assert not made.dist.flags.writeable and not made.pred.flags.writeable
    with pytest.raises(TypeError):
        made.timings["wall"] = 0.0  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.source = 2  # type: ignore[misc]
    plain = {"a": 1}
    frozen = SSSPResult.assembled(
        dist=dist, pred=None, timings={}, stats=plain, **fields, iterations=1
    )
    plain["a"] = 2
    assert frozen.stats["a"] == 1
    with pytest.raises(TypeError):
        frozen.stats["a"] = 3  # type: ignore[index]
    back = pickle.loads(pickle.dumps(made))  # a result travels to another process
    assert np.array_equal(back.dist, dist) and np.array_equal(back.pred, pred)
    assert not back.dist.flags.writeable and dict(back.timings) == dict(made.timings)
    assert (back.source, back.iterations, back.algorithm) == (1, 2, "near-far")


def test_every_result_kind_pickles():
    """Results hold read-only mappings (which do not pickle): they travel as dicts and come
    back read-only, statistics decoded."""
    from sssp.result import MultiSourceResult

    r = _result(LazyStats(lambda: {"buckets": 4}))
    back = pickle.loads(pickle.dumps(r))
    assert dict(back.stats) == {"buckets": 4} and not back.dist.flags.writeable
    many = MultiSourceResult(
        sources=np.array([0, 2]),
        dist=np.zeros((2, 3), np.int64),
        pred=None,
        iterations=np.array([1, 1]),
        algorithm="near-far",
        variant="successors",
        backend="cpu",
        timings={"wall": 1.0},
    )
    back = pickle.loads(pickle.dumps(many))
    assert np.array_equal(back.sources, [0, 2]) and back.timings["wall"] == 1.0
    with pytest.raises(TypeError):
        back.timings["wall"] = 2.0  # type: ignore[index]


def test_results_compare_by_identity():
    """Two results never raise NumPy's ambiguous truth value on ``==`` (the dataclass default
    compared the arrays field by field); they are equal only to themselves and hashable."""
    a, b = _result({}), _result({})
    assert a == a and a != b and len({a, b}) == 2
