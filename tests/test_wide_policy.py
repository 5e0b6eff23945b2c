"""Which near-far solves take the wide loop (:func:`sssp.tuned.wide_beyond`): pure logic, no GPU."""

from __future__ import annotations

import pytest

import sssp
from sssp.classes import GraphClass
from sssp.config import ConfigSource, LaunchConfig
from sssp.tuned import WIDE_MIN_NODES, TunedChoice, wide_beyond


def stored(size: str) -> TunedChoice:
    return TunedChoice(
        LaunchConfig(), ConfigSource.TUNED_NEAREST, "near-far", 1.0, "", GraphClass(size, "deg20")
    )


@pytest.fixture(scope="module")
def big_random() -> sssp.Graph:
    return sssp.generate("random", size=WIDE_MIN_NODES, degree=8, seed=1)


def test_large_low_diameter_graph_beyond_the_stored_sizes(big_random):
    assert big_random.graph_class().diameter == "lowdiam"
    assert wide_beyond(big_random, stored("98k"), ConfigSource.TUNED_NEAREST)
    assert wide_beyond(big_random, None, ConfigSource.DEFAULT)
    # A stored class near its size, or its own class, keeps the stored loop.
    assert not wide_beyond(big_random, stored("786k"), ConfigSource.TUNED_NEAREST)
    assert not wide_beyond(big_random, stored("1572k"), ConfigSource.TUNED_EXACT)


def test_small_or_high_diameter_graphs_keep_their_loop():
    small = sssp.generate("random", size=WIDE_MIN_NODES // 2, degree=8, seed=1)
    assert not wide_beyond(small, stored("24k"), ConfigSource.TUNED_NEAREST)
    grid = sssp.generate("grid", size=WIDE_MIN_NODES, seed=1)
    assert grid.n >= WIDE_MIN_NODES and grid.graph_class().diameter == "highdiam"
    assert not wide_beyond(grid, stored("98k"), ConfigSource.TUNED_NEAREST)
