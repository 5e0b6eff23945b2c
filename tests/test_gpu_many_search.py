"""The many-source search's scorer on the device (marker ``gpu``): it finds the batch kernel's
layout for a class pick, fills tables of rows checked against SciPy's, times them per source,
and fails a point that cannot run instead of timing another path."""

from __future__ import annotations

import pytest

import sssp
from sssp.classes import GraphClass
from sssp.config import KernelConfig, LaunchConfig
from tuner import class_search, engine_space, many_search
from tuning_db.records import DeviceRecord

try:
    from tests.gpu_common import need_gpu  # noqa: F401  (autouse)
except ImportError:  # pragma: no cover
    from gpu_common import need_gpu  # noqa: F401

pytestmark = [pytest.mark.gpu]

H200 = DeviceRecord("NVIDIA H200", "GPU-1234", "9.0", 132, "580.159.04", "13.0")


def cluster_record(algorithm: str = "near-far") -> class_search.BestRecord:
    config = LaunchConfig(
        KernelConfig(1024, "N", 8), loop="cluster", blocks_per_sm=1, local_limit=0
    )
    point = {**engine_space.from_config(config), "algorithm": algorithm, "delta_scale": 2.0}
    result = class_search.SearchResult(
        graph_class=GraphClass("24k", "deg2"),
        algorithm="auto",
        variant="successors",
        best_point=point,
        best_ms=1.0,
        default_ms=5.0,
        spread=0.0,
        n_sources=3,
    )
    return class_search.to_best(result, H200)


def test_rows_scorer_times_checked_batches():
    graph = sssp.generate("random", size=20_000, degree=2, seed=3)
    record = cluster_record()
    sources = list(range(0, 20_000, 97))  # 207 rows
    scorer = many_search.RowsScorer.for_record(graph, record, sources, 0)
    fit, largest = scorer.layout()
    assert fit == 1 and largest in (8, 16)  # 20k distances fit one block's shared memory
    for point in many_search.points(fit, largest)[:4]:
        trial = scorer(point)
        assert trial.wall_ms is not None, trial.error
        assert len(trial.times_ms) == many_search.REPEATS and all(t > 0 for t in trial.gpu_ms)
        assert trial.gpu_median_ms <= trial.wall_ms  # the device's part of what the caller waits


def test_rows_scorer_says_why_a_large_graph_has_no_batch_kernel():
    graph = sssp.generate("random", size=600_000, degree=2, seed=1)
    scorer = many_search.RowsScorer(graph, cluster_record(), (0,), 0, reference=None)
    why = scorer.layout()
    assert isinstance(why, str) and "do not fit" in why
