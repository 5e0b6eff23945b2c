"""The CPU model of near-far's pushes (benchmarks/hub_deferral_sim.py): every rule ends at
SciPy's distances, and the counts it reports add up."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest

import sssp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import hub_deferral_sim as model  # noqa: E402

pytestmark = pytest.mark.timeout(300)


def test_every_rule_ends_at_scipys_distances(tmp_path):
    out = tmp_path / "push.csv"
    argv = ["--scale", "11", "--sources", "2", "--scales", "0.5", "2", "--hub", "32"]
    assert model.main([*argv, "--families", "kron", "road", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert {r["rule"] for r in rows} == set(model.RULES)
    assert {r["graph"] for r in rows} == {"kron-11", "road-256"}
    assert all(r["verified"] == "yes" for r in rows)
    for r in rows:  # edges pushed: at least every reached node's edges once, in any rule
        assert int(r["hub_edges"]) + int(r["other_edges"]) > 0 and int(r["steps"]) >= 1


def test_light_heavy_pushes_each_heavy_edge_once():
    """A path 0 -> 1 -> 2 with one heavy edge (w >= Δ) and a light detour: the heavy edge is
    pushed once, at the end of its bucket, and the distances are the shortest."""
    g = sssp.Graph.from_edges(
        4, np.array([0, 0, 1, 3]), np.array([1, 3, 2, 2]), np.array([10, 1, 1, 1])
    )
    args = (g.indptr.astype(np.int64), g.indices.astype(np.int64), g.weights.astype(np.int64))
    now = model._simulate(*args, 0, 5, 256, model.RULES.index("now"))
    split = model._simulate(*args, 0, 5, 256, model.RULES.index("light-heavy"))
    for dist, *_ in (now, split):
        assert dist.tolist() == [0, 10, 2, 1]
    edges = lambda r: r[3] + r[4]  # noqa: E731  hub and other edges pushed
    assert edges(now) == edges(split) == g.m  # every edge once here
    assert split[1] == now[1] + split[2]  # one heavy step per bucket
