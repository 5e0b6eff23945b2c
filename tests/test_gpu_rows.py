"""The batched rows of engine 2 on the device (markers ``gpu`` and ``smoke``): ``EngineSolver.solve_rows`` fills
one row per source, several sources in flight at once on the cluster loop, the rows staged in
page-locked memory and copied into the caller's array chunk by chunk. Every row must equal
SciPy's, in every dtype the result pass writes, in the row order of the sources."""

from __future__ import annotations

import signal
import threading
import time

import numpy as np
import pytest

import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.verify import check_tree

try:
    from tests.gpu_common import as_dtype, need_gpu, scipy_rows  # noqa: F401  (autouse)
except ImportError:  # pragma: no cover
    from gpu_common import as_dtype, need_gpu, scipy_rows  # noqa: F401

pytestmark = [pytest.mark.gpu, pytest.mark.smoke]

CLUSTER = LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster")


@pytest.mark.parametrize(
    "algorithm, config",
    [
        ("near-far", CLUSTER),
        ("near-far", LaunchConfig.default()),
        ("crauser", LaunchConfig.default()),
    ],
    ids=["near-far-cluster", "near-far-persistent", "crauser-persistent"],
)
@pytest.mark.parametrize("dtype", ["int64", "int32", "float64", "float32"])
def test_rows_equal_scipy_in_every_dtype(algorithm, config, dtype):
    from sssp.gpu.engine import EngineSolver

    graph = sssp.generate("random", size=6000, degree=3, seed=2)
    rng = np.random.default_rng(1)
    sources = rng.integers(0, graph.n, 70)
    sources[5] = sources[6]  # a duplicate is a row of its own
    ref = scipy_rows(graph, sources)
    with EngineSolver(graph, algorithm=algorithm, config=config) as solver:
        solver.STAGE_BYTES = 9 * graph.n * 12  # several chunks of rows, the ring of stages reused
        if config.loop == "cluster":
            assert solver.cluster and len(solver.lanes()) > 1
        dist = np.full((len(sources), graph.n), 7, dtype=dtype)
        pred = np.full((len(sources), graph.n), 7, dtype=np.int32)
        its = np.zeros(len(sources), np.int64)
        solver.solve_rows(sources, dist, pred, its)
        np.testing.assert_array_equal(dist, as_dtype(ref, dtype))
        assert (its >= 0).all() and (its > 0).sum() > len(sources) // 2
        for i in (0, 5, 6, len(sources) - 1):
            single = solver.solve(int(sources[i]))
            np.testing.assert_array_equal(pred[i], single.pred)
            if algorithm == "crauser":  # its phases are the graph's; near-far's steps vary a little
                assert its[i] == single.iterations
            else:
                assert abs(int(its[i]) - single.iterations) <= max(2, single.iterations // 10)


def test_real_weights_and_trees_of_every_row():
    from sssp.gpu.engine import EngineSolver

    rng = np.random.default_rng(4)
    n = 3000
    src, dst = rng.integers(0, n, 6 * n), rng.integers(0, n, 6 * n)
    graph = sssp.Graph.from_edges(n, src, dst, rng.random(src.size) * 5)
    sources = np.arange(0, n, 97)
    ref = scipy_rows(graph, sources)
    with EngineSolver(graph, algorithm="near-far", config=LaunchConfig.default()) as solver:
        dist = np.empty((len(sources), n), np.float64)
        pred = np.empty((len(sources), n), np.int32)
        solver.solve_rows(sources, dist, pred)
    np.testing.assert_array_equal(dist, ref)
    for i, s in enumerate(sources):
        row = sssp.SSSPResult(
            dist=dist[i].copy(),
            pred=pred[i].copy(),
            source=int(s),
            algorithm="near-far",
            variant="successors",
            backend="gpu",
            iterations=0,
        )
        check_tree(graph, row)


def test_an_interrupted_batch_leaves_whole_rows_only():
    """Ctrl-C in the middle of a long batch: every row of ``out`` is either SciPy's or untouched."""
    from sssp.gpu.engine import EngineSolver

    graph = sssp.generate("random", size=20000, degree=3, seed=3)
    sources = np.resize(np.arange(0, graph.n, 101), 10000)
    out = np.full((len(sources), graph.n), -5, np.int32)
    with EngineSolver(graph, algorithm="near-far", config=CLUSTER) as solver:
        solver.STAGE_BYTES = 40 * graph.n * 4
        main = threading.get_ident()
        finished = threading.Event()

        def interrupt_once_rows_arrive() -> None:
            # Ctrl-C after the first chunk has landed, not after a fixed delay: how long the
            # batch takes depends on the kernel's speed, and a timer can fire before the first
            # row or after the last.
            while not finished.is_set() and (out[:, 0] == -5).all():
                time.sleep(0.0005)
            if not finished.is_set():
                signal.pthread_kill(main, signal.SIGINT)

        watcher = threading.Thread(target=interrupt_once_rows_arrive)
        watcher.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                solver.solve_rows(sources, out)
        finally:
            finished.set()
            watcher.join()
        written = np.flatnonzero(~(out == -5).all(axis=1))
        assert 0 < written.size < len(sources)
        distinct = np.unique(sources[written])
        ref = dict(
            zip(distinct.tolist(), as_dtype(scipy_rows(graph, distinct), np.int32), strict=True)
        )
        for i in written:
            np.testing.assert_array_equal(out[i], ref[int(sources[i])])
        # The solver is still usable after the interrupt.
        single = solver.solve(int(sources[0]))
        np.testing.assert_array_equal(
            single.dist, as_dtype(scipy_rows(graph, [sources[0]])[0], np.int64)
        )
