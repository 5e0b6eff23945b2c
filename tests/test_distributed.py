"""Many sources on a Dask cluster (:mod:`sssp.distributed`): a local cluster of two worker
processes on the CPU backend, rows checked against SciPy's ``dijkstra(indices=...)``, and a
worker killed mid-batch: its chunks run again elsewhere and every row lands once."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

import sssp
from sssp.cpu.reference import min_weight_csr
from sssp.errors import InvalidArgumentError, InvalidTypeError
from sssp.verify import check_tree

distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

from sssp.distributed import solve_many  # noqa: E402

pytestmark = pytest.mark.timeout(120)

MARK = -7


def random_graph(n: int = 500, m: int = 3000, seed: int = 0) -> sssp.Graph:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, int(n * 0.9), m)
    return sssp.Graph.from_edges(n, src, dst, rng.integers(0, 20, m))


def reference(g: sssp.Graph, sources) -> np.ndarray:
    d = scipy_dijkstra(min_weight_csr(g), directed=True, indices=np.asarray(sources))
    out = np.full(d.shape, sssp.UNREACHABLE, dtype=np.int64)
    fin = np.isfinite(d)
    out[fin] = d[fin].astype(np.int64)
    return out


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def test_rows_equal_scipy_in_source_order(client):
    g = random_graph()
    sources = np.random.default_rng(1).integers(0, g.n, 40)  # duplicates: one row each
    out = np.full((sources.size, g.n), MARK, dtype=np.int64)
    r = solve_many(client, g, sources, out=out, chunk=3, backend="cpu", algorithm="dijkstra")
    np.testing.assert_array_equal(out, reference(g, sources))
    assert np.shares_memory(r.dist, out) and r.backend == "cpu" and r.algorithm == "dijkstra"
    assert r.stats["chunks"] == 14 and sum(r.stats["rows_per_worker"].values()) == 40
    assert len(r.stats["rows_per_worker"]) == 2  # both workers had chunks


def test_predecessors_and_a_narrow_memmap(client, tmp_path):
    g = random_graph()
    sources = [0, 7, 499, 7, 250, 3]
    out = np.lib.format.open_memmap(tmp_path / "d.npy", "w+", np.int32, (len(sources), g.n))
    r = solve_many(
        client, g, sources, out=out, return_predecessors=True, chunk=2, backend="cpu",
        algorithm="near-far",
    )  # fmt: skip
    want = reference(g, sources)
    np.testing.assert_array_equal(out, np.where(want == sssp.UNREACHABLE, 2**31 - 1, want))
    for i, s in enumerate(sources):
        check_tree(g, sssp.SSSPResult(
            dist=want[i], pred=np.array(r.pred[i]), source=s, algorithm="near-far",
            variant="successors", backend="cpu", iterations=0,
        ))  # fmt: skip


def test_bad_input_is_refused_before_anything_is_sent(client):
    g = random_graph()
    out = np.full((2, g.n), MARK, dtype=np.int64)
    with pytest.raises(InvalidTypeError, match="unexpected keyword argument 'devise'"):
        solve_many(client, g, [0, 1], out=out, devise=0)
    with pytest.raises(sssp.InvalidGraphError, match="source 600 is out of range"):
        solve_many(client, g, [0, 600], out=out)
    assert (out == MARK).all()


def test_a_bad_solver_option_comes_back_from_the_worker(client):
    g = random_graph()
    with pytest.raises(InvalidArgumentError, match="unknown algorithm 'bogus'"):
        solve_many(client, g, [0, 1], backend="cpu", algorithm="bogus")


class CountedTable(np.ndarray):
    """A distance table that counts the assignments to each of its rows (views count none)."""

    def __array_finalize__(self, obj):
        self.writes = None

    def __setitem__(self, key, value):
        if self.writes is not None:
            rows = key[0] if isinstance(key, tuple) else key
            np.add.at(self.writes, np.arange(self.shape[0])[rows], 1)
        super().__setitem__(key, value)


def counted(k: int, n: int) -> CountedTable:
    table = np.full((k, n), MARK, dtype=np.int64).view(CountedTable)
    table.writes = np.zeros(k, dtype=np.int64)
    return table


class KillOnce(distributed.WorkerPlugin):
    """Ends the worker process when it starts running the chunk ``chunk`` of a batch, the
    first time only (a flag file remembers it across the restarted worker)."""

    def __init__(self, flag: str, chunk: int) -> None:
        self.flag, self.chunk = flag, chunk

    def transition(self, key, start, finish, **kwargs):
        if (
            finish == "executing"
            and isinstance(key, str)
            and key.endswith(f"-chunk-{self.chunk}")
            and not os.path.exists(self.flag)
        ):
            Path(self.flag).write_text(str(os.getpid()))
            os._exit(1)


def test_a_worker_killed_mid_batch_every_row_once_and_right(client, tmp_path):
    # The plugin travels by value: the worker processes do not import this test module.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    flag = tmp_path / "killed"
    client.register_plugin(KillOnce(str(flag), 5), name="kill-once")
    try:
        g = random_graph()
        sources = np.arange(60)
        out = counted(sources.size, g.n)
        r = solve_many(client, g, sources, out=out, chunk=2, backend="cpu", algorithm="dijkstra")
    finally:
        client.unregister_worker_plugin("kill-once")
    assert flag.exists()  # a worker did die running chunk 5
    np.testing.assert_array_equal(np.asarray(out), reference(g, sources))
    assert (out.writes == 1).all()  # every row written once
    assert r.stats["chunks"] == 30 and sum(r.stats["rows_per_worker"].values()) == 60
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it
