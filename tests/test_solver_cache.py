"""The one-shot call's solver cache (``sssp.solve`` on a graph solved before), without a GPU:
a stand-in Solver that claims the GPU backend, so the keys and the invalidation are checked
where CI runs."""

from __future__ import annotations

import importlib
import sqlite3

import numpy as np
import pytest

import sssp

front = importlib.import_module("sssp.solve")  # the module: ``sssp.solve`` is the function


class StandIn:
    made: list[StandIn] = []

    def __init__(self, graph, **options):
        self.graph, self.options = graph, options
        self.backend = "gpu"
        self._gpu = object()
        self.closed = False
        self.calls = 0
        StandIn.made.append(self)

    def solve(self, source, **kwargs):
        self.calls += 1
        return ("solved", source, kwargs)

    def close(self):
        self.closed = True
        self._gpu = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@pytest.fixture
def cache(monkeypatch):
    StandIn.made = []
    monkeypatch.setattr(front, "Solver", StandIn)
    fresh = front._SolverCache()
    monkeypatch.setattr(front, "_SOLVERS", fresh)
    yield fresh
    fresh.clear()


def graph(seed=0):
    return sssp.generate("random", size=200, degree=3, seed=seed)


def test_the_same_graph_and_options_reuse_one_solver(cache):
    g = graph()
    assert sssp.solve(g, 1) == ("solved", 1, {})
    assert sssp.solve(g, 2, return_predecessors=False) == (
        "solved",
        2,
        {"return_predecessors": False},
    )
    assert len(StandIn.made) == 1 and StandIn.made[0].calls == 2 and len(cache) == 1


def test_another_graph_or_option_gets_its_own_solver(cache):
    g, h = graph(0), graph(1)
    sssp.solve(g, 0)
    sssp.solve(h, 0)  # equal shape, another object
    sssp.solve(g, 0, algorithm="near-far")
    sssp.solve(g, 0, device=1)
    assert len(StandIn.made) == 4 and len(cache) == 4
    sssp.solve(g, 0)
    assert len(StandIn.made) == 4


def test_least_recently_used_out_first_and_clear_closes(cache):
    graphs = [graph(i) for i in range(cache.size + 1)]
    for g in graphs:
        sssp.solve(g, 0)
    assert len(cache) == cache.size and StandIn.made[0].closed and not StandIn.made[1].closed
    sssp.clear_solver_cache()
    assert len(cache) == 0 and all(s.closed for s in StandIn.made)


def test_a_cpu_solver_is_not_kept(cache, monkeypatch):
    class OnCpu(StandIn):
        def __init__(self, graph, **options):
            super().__init__(graph, **options)
            self.backend = "cpu"

    monkeypatch.setattr(front, "Solver", OnCpu)
    g = graph()
    sssp.solve(g, 0)
    sssp.solve(g, 0)
    assert len(cache) == 0 and len(StandIn.made) == 2 and all(s.closed for s in StandIn.made)


def test_tuned_solvers_follow_the_state_of_the_database(cache, tmp_path):
    db = tmp_path / "t.sqlite"
    con = sqlite3.connect(db)
    con.execute("create table t (x)")
    con.commit()
    url = f"sqlite:///{db}"
    g = graph()
    sssp.solve(g, 0, tuned=True, db=url)
    sssp.solve(g, 0, tuned=True, db=url)
    assert len(StandIn.made) == 1
    con.execute("insert into t values (?)", (np.int64(1).item(),))  # a write: the file changes
    con.commit()
    con.close()
    sssp.solve(g, 0, tuned=True, db=url)
    assert len(StandIn.made) == 2 and StandIn.made[0].closed and len(cache) == 1


def test_tuned_solvers_of_a_database_without_a_cheap_state_are_not_kept(cache):
    g = graph()
    for _ in range(2):
        sssp.solve(g, 0, tuned=True, db="postgresql+psycopg://user@localhost/none")
    assert len(StandIn.made) == 2 and len(cache) == 0


def test_the_one_shot_call_on_the_cpu_keeps_nothing():
    g = graph()
    before = len(front._SOLVERS)
    r = sssp.solve(g, 0, backend="cpu")
    assert r.backend == "cpu" and len(front._SOLVERS) == before


def test_the_database_default_is_resolved_again_when_what_it_reads_changes(
    cache, tmp_path, monkeypatch
):
    """The look-up remembers where a database URL points (resolving it was most of a one-shot
    call's cost), but a changed $SSSP_TUNING_DB or working folder (a relative file name) is
    resolved again, and a named file that does not exist yet is not remembered."""
    from tuning_db.lookup import state

    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    for p in (a, b):
        p.touch()
    monkeypatch.setenv("SSSP_TUNING_DB", f"sqlite:///{a}")
    assert state(None)[1][0] == str(a)
    monkeypatch.setenv("SSSP_TUNING_DB", f"sqlite:///{b}")
    assert state(None)[1][0] == str(b)
    monkeypatch.chdir(tmp_path)
    assert state("a.sqlite")[1][0] == str(a)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert state("a.sqlite") is None  # no such file here
    (tmp_path / "sub" / "a.sqlite").touch()
    assert state("a.sqlite")[1][0] == str(tmp_path / "sub" / "a.sqlite")
