"""Many sources over several devices (:mod:`sssp.multidevice`): the dealer run with CPU row
engines of different speeds stands in for GPUs, so order, each row once, errors and Ctrl-C are
checked without one; the GPU tests run the same call on the devices of the host."""

from __future__ import annotations

import _thread
import gc
import threading
import time
import warnings

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra

import sssp
from sssp.cpu.many import CPURows
from sssp.cpu.reference import min_weight_csr
from sssp.errors import InvalidArgumentError, InvalidTypeError, SSSPError
from sssp.many import RunInfo, build_request
from sssp.multidevice import (
    DeviceWorker,
    check_devices,
    close_workers,
    deal_rows,
    plan_chunks,
    start_workers,
)
from sssp.verify import check_tree

pytestmark = pytest.mark.timeout(120)

MARK = -7  # what an untouched row of `out` holds


def random_graph(n: int = 400, m: int = 2400, seed: int = 0) -> sssp.Graph:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, int(n * 0.9), m)  # the last tenth is unreachable
    return sssp.Graph.from_edges(n, src, dst, rng.integers(0, 20, m))


def reference(g: sssp.Graph, sources) -> np.ndarray:
    d = scipy_dijkstra(min_weight_csr(g), directed=True, indices=np.asarray(sources))
    out = np.full(d.shape, sssp.UNREACHABLE, dtype=np.int64)
    fin = np.isfinite(d)
    out[fin] = d[fin].astype(np.int64)
    return out


class FakeDevice:
    """A row engine standing in for a GPU: the CPU's near-far on one thread, ``delay`` seconds
    per chunk, recording the sources and threads it ran on; ``fail_at`` raises on that call,
    ``interrupt_at`` sends the caller a Ctrl-C on that call and then finishes the chunk. Engines
    put :func:`side_by_side` wait for each other at their first chunk."""

    backend = "cpu"
    workers = 1

    def __init__(self, g, *, delay=0.0, fail_at=None, interrupt_at=None) -> None:
        self._cpu = CPURows(g, algorithm="near-far", workers=1)
        self.delay, self.fail_at, self.interrupt_at = delay, fail_at, interrupt_at
        self.calls = 0
        self.seen: list[np.ndarray] = []
        self.threads: set[int] = set()
        self.finished_at: float | None = None
        self.closed = False
        self.together: threading.Barrier | None = None

    def row_bytes(self, n, want_pred):
        return 0

    def fill(self, sources, dist, pred, limit, on_row):
        self.calls += 1
        if self.calls == 1 and self.together is not None:
            self.together.wait()
        self.threads.add(threading.get_ident())
        if self.calls == self.fail_at:
            raise RuntimeError("device lost")
        if self.calls == self.interrupt_at:
            _thread.interrupt_main()
        time.sleep(self.delay)
        self.seen.append(np.array(sources))
        res = self._cpu.fill(sources, dist, pred, limit, on_row)
        self.finished_at = time.monotonic()
        return res

    def nearest(self, *args):
        raise AssertionError("not used")

    def close(self):
        self.closed = True
        self._cpu.close()


def side_by_side(engines):
    """Each engine's first chunk waits for the others' first, so every engine takes part however
    the host schedules the threads: on a loaded host the first thread to start could otherwise
    solve every chunk before the others ran."""
    together = threading.Barrier(len(engines), timeout=30)
    for e in engines:
        e.together = together
    return engines


def workers_for(engines):
    return start_workers([DeviceWorker(f"fake:{i}", lambda e=e: e) for i, e in enumerate(engines)])


def deal(g, sources, engines, **kwargs):
    opts = {
        k: kwargs.pop(k) for k in ("out", "pred_out", "return_predecessors", "limit") if k in kwargs
    }
    request = build_request(g, sources, **opts)
    workers = workers_for(side_by_side(engines))
    try:
        return deal_rows(workers, request, RunInfo("near-far", "successors"), **kwargs)
    finally:
        close_workers(workers)


def test_rows_in_source_order_each_once_and_equal_to_scipy():
    g = random_graph()
    sources = np.random.default_rng(1).permutation(g.n)[:60]  # distinct: each names its row
    engines = [FakeDevice(g, delay=d) for d in (0.0, 0.02, 0.05)]
    out = np.full((sources.size, g.n), MARK, dtype=np.int64)
    r = deal(g, sources, engines, out=out, chunk=4)
    assert np.shares_memory(r.dist, out)
    np.testing.assert_array_equal(out, reference(g, sources))
    solved = np.concatenate([s for e in engines for s in e.seen])
    assert np.array_equal(np.sort(solved), np.sort(sources))  # no row lost, none solved twice
    assert sum(r.stats["rows_per_device"].values()) == sources.size
    assert r.stats["chunks"] == len(plan_chunks(sources.size, 4)) == 15
    assert all(e.closed for e in engines)


def test_the_faster_device_takes_more_chunks():
    g = random_graph()
    engines = [FakeDevice(g, delay=0.0), FakeDevice(g, delay=0.15)]
    r = deal(g, list(range(40)), engines, chunk=2)
    rows = r.stats["rows_per_device"]
    assert rows["fake:0"] > rows["fake:1"] >= 2, rows
    np.testing.assert_array_equal(r.dist, reference(g, range(40)))


def test_one_thread_per_device_each_engine_on_its_own():
    g = random_graph()
    entered: dict[str, int] = {}
    engines = side_by_side([FakeDevice(g, delay=0.01), FakeDevice(g, delay=0.01)])
    workers = start_workers(
        [
            DeviceWorker(
                f"fake:{i}",
                lambda e=e: e,
                enter=lambda i=i: entered.__setitem__(f"fake:{i}", threading.get_ident()),
            )
            for i, e in enumerate(engines)
        ]
    )
    try:
        deal_rows(
            workers, build_request(g, list(range(30))), RunInfo("near-far", "successors"), chunk=3
        )
    finally:
        close_workers(workers)
    assert [e.threads for e in engines] == [{entered["fake:0"]}, {entered["fake:1"]}]
    assert entered["fake:0"] != entered["fake:1"] != threading.get_ident()


def test_narrow_out_and_predecessors_whole_rows():
    g = random_graph()
    sources = [5, 3, 5, 0, 399, 17, 3]  # duplicates kept, one row each
    out = np.full((len(sources), g.n), MARK, dtype=np.int32)
    pred = np.full((len(sources), g.n), MARK, dtype=np.int32)
    r = deal(
        g, sources, [FakeDevice(g), FakeDevice(g, delay=0.01)], out=out, pred_out=pred, chunk=2
    )
    want = reference(g, sources)
    expect = np.where(want == sssp.UNREACHABLE, np.iinfo(np.int32).max, want)
    np.testing.assert_array_equal(out, expect)
    for i, s in enumerate(sources):
        row = sssp.SSSPResult(
            dist=want[i], pred=np.array(pred[i]), source=s, algorithm="near-far",
            variant="successors", backend="cpu", iterations=0,
        )  # fmt: skip
        check_tree(g, row)
    assert r.pred is not None


def test_memory_budget_bounds_the_chunks_in_flight():
    g = random_graph()
    per_row = g.n * 8
    r = deal(g, list(range(50)), [FakeDevice(g), FakeDevice(g)], memory_budget=6 * per_row)
    assert r.stats["chunk_rows"] <= 3  # two devices share six rows' worth
    np.testing.assert_array_equal(r.dist, reference(g, range(50)))


def _whole_rows_only(out, want):
    untouched = (out == MARK).all(axis=1)
    right = (out == want).all(axis=1)
    assert (untouched | right).all()
    return int(right.sum()), int(untouched.sum())


def test_an_error_on_one_device_stops_the_batch_and_is_raised():
    g = random_graph()
    sources = list(range(80))
    out = np.full((len(sources), g.n), MARK, dtype=np.int64)
    engines = [FakeDevice(g, delay=0.02), FakeDevice(g, delay=0.02, fail_at=3)]
    with pytest.raises(RuntimeError, match="device lost"):
        deal(g, sources, engines, out=out, chunk=2)
    snapshot = out.copy()
    time.sleep(0.2)
    np.testing.assert_array_equal(out, snapshot)  # nothing lands after the call
    right, untouched = _whole_rows_only(out, reference(g, sources))
    assert right >= 2 and untouched >= 2


def test_ctrl_c_leaves_whole_rows_and_waits_for_the_chunks_in_flight():
    g = random_graph()
    sources = list(range(80))
    out = np.full((len(sources), g.n), MARK, dtype=np.int64)
    slow = FakeDevice(g, delay=0.3, interrupt_at=2)
    engines = [FakeDevice(g, delay=0.02), slow]
    with pytest.raises(KeyboardInterrupt):
        deal(g, sources, engines, out=out, chunk=2)
    returned = time.monotonic()
    assert slow.finished_at is not None and slow.finished_at <= returned
    snapshot = out.copy()
    time.sleep(0.2)
    np.testing.assert_array_equal(out, snapshot)
    right, untouched = _whole_rows_only(out, reference(g, sources))
    assert right >= 4 and untouched >= 2
    # The chunk in flight when Ctrl-C came finished whole.
    for s in slow.seen:
        np.testing.assert_array_equal(out[s], reference(g, s))


def test_a_device_that_fails_to_start_closes_the_others():
    g = random_graph()
    ok = FakeDevice(g)

    def broken():
        raise SSSPError("cuda:1: out of memory")

    with pytest.raises(SSSPError, match="out of memory"):
        start_workers([DeviceWorker("a", lambda: ok), DeviceWorker("b", broken)])
    assert ok.closed


@pytest.mark.parametrize(
    ("devices", "error", "match"),
    [
        ([], InvalidArgumentError, "devices is empty"),
        ([0, 1, 0], InvalidArgumentError, "device 0 is given twice"),
        ([0, 2], InvalidArgumentError, r"device 2 does not exist: 2 devices visible"),
        ([-1], InvalidArgumentError, "device -1 does not exist"),
        (["0"], InvalidTypeError, "device '0' is not an integer"),
        ([True], InvalidTypeError, "device True is not an integer"),
        ([0.0], InvalidTypeError, "device 0.0 is not an integer"),
        ("0,1", InvalidTypeError, "devices must be a sequence"),
        (1, InvalidTypeError, "devices must be a sequence"),
    ],
)
def test_bad_devices_get_one_clear_error(devices, error, match):
    with pytest.raises(error, match=match):
        check_devices(devices, 2)


def test_good_devices():
    assert check_devices([1, 0], 2) == (1, 0)
    assert check_devices(np.array([0, 1]), 2) == (0, 1)
    assert check_devices((3,), 4) == (3,)


def test_devices_on_the_cpu_backend_is_refused_before_anything_is_written():
    g = random_graph()
    out = np.full((3, g.n), MARK, dtype=np.int64)
    with sssp.Solver(g, backend="cpu") as solver:
        with pytest.raises(InvalidArgumentError, match="devices=.*GPU backend"):
            solver.solve_many([0, 1, 2], out=out, devices=[0])
        with pytest.raises(InvalidArgumentError, match="devices= applies to a sequence"):
            solver.solve(0, devices=[0])
        # devices=None is the one-device call of before.
        r = solver.solve_many([0, 1, 2], devices=None)
    assert (out == MARK).all()
    np.testing.assert_array_equal(r.dist, reference(g, [0, 1, 2]))


# -- the Solver's GPU path, with the device layer faked ---------------------------------------------
class FakeGPU:
    """Stands in for an engine-2 solver on device ``device``: rows from SciPy, and a record of
    the threads that built and ran it. Each device's first chunk waits at ``first_chunks`` for
    the other's, so both take part however the host schedules the threads (a loaded host once
    let device 0 solve every chunk before device 1 had built its solver)."""

    loop = "persistent"

    def __init__(self, graph, device, config, config_source, first_chunks):
        self.graph, self.device = graph, device
        self.first_chunks = first_chunks
        self.config, self.config_source = config, config_source
        self.built_on = threading.get_ident()
        self.context = f"the context object of device {device}"
        self.ran_on: set[int] = set()
        self.closed = False

    def many_stats(self, want_pred):
        return {"lanes": 3, "batch": "a stand-in"}

    def solve_rows(self, sources, dist_out, pred_out=None, iterations_out=None):
        if not self.ran_on:
            self.first_chunks.wait()
        self.ran_on.add(threading.get_ident())
        dist_out[...] = reference(self.graph, sources)
        return 0.001 * len(sources)

    def close(self):
        self.closed = True


@pytest.fixture
def fake_gpus(monkeypatch):
    """Two fake devices: make_solver, device_info, the tuned look-up and the context calls
    replaced, recording what ran where."""
    import types

    import sssp.gpu
    import sssp.gpu.device
    import sssp.tuned
    from sssp.config import ConfigSource, LaunchConfig

    made: list[FakeGPU] = []
    active: dict[int, int] = {}  # device -> the thread that made it current
    left: list[int] = []
    adopted: list[tuple[str, int]] = []  # (context object, device) a device thread adopted
    first_chunks = threading.Barrier(2, timeout=30)

    def make_solver(graph, *, device, config, config_source, **kwargs):
        gpu = FakeGPU(graph, device, config, config_source, first_chunks)
        made.append(gpu)
        return gpu

    def resolve_pick(graph, info, *, algorithm, variant, db, hierarchy="cached"):
        detail = f"record of device {info.ordinal}"
        pick = sssp.tuned.Pick(
            algorithm, None, LaunchConfig.default(), ConfigSource.TUNED_EXACT, detail
        )
        return sssp.tuned.Resolved(pick)

    def resolve_choice(graph, info, **kw):
        return resolve_pick(graph, info, **kw).now.as_tuple()

    monkeypatch.setattr(sssp.Solver, "_resolve_backend", staticmethod(lambda b, a: "gpu"))
    monkeypatch.setattr(sssp.gpu, "make_solver", make_solver, raising=False)
    monkeypatch.setattr(sssp.gpu, "device_info", lambda d=0: types.SimpleNamespace(ordinal=d))
    monkeypatch.setattr(sssp.tuned, "resolve_pick", resolve_pick)
    monkeypatch.setattr(sssp.tuned, "resolve_choice", resolve_choice)
    monkeypatch.setattr(sssp.gpu.device, "device_count", lambda: 2)
    monkeypatch.setattr(
        sssp.gpu.device, "activate", lambda d=0: active.setdefault(d, threading.get_ident())
    )

    def adopt(context, d):
        adopted.append((context, d))
        return active.setdefault(d, threading.get_ident())

    monkeypatch.setattr(sssp.gpu.device, "adopt", adopt)
    monkeypatch.setattr(sssp.gpu.device, "deactivate", lambda: left.append(threading.get_ident()))
    return types.SimpleNamespace(made=made, active=active, left=left, adopted=adopted)


def test_each_device_gets_its_own_record_thread_and_upload(fake_gpus):
    g = random_graph()
    sources = np.random.default_rng(3).integers(0, g.n, 50)
    out = np.full((sources.size, g.n), MARK, dtype=np.int64)
    solver = sssp.Solver(g, tuned=True, algorithm="crauser")
    try:
        r = solver.solve_many(sources, out=out, devices=[0, 1])
        solver.solve_many(sources[:5], devices=[0, 1])  # the devices' solvers are kept
    finally:
        solver.close()
    np.testing.assert_array_equal(out, reference(g, sources))
    own, other = fake_gpus.made  # device 0 is the solver's own: its upload is reused
    assert (own.device, other.device) == (0, 1) and len(fake_gpus.made) == 2
    assert [p["config_detail"] for p in r.stats["per_device"]] == [
        "record of device 0",
        "record of device 1",
    ]
    assert other.built_on == fake_gpus.active[1]  # built on device 1's thread, with its context
    assert own.ran_on == {fake_gpus.active[0]} and other.ran_on == {fake_gpus.active[1]}
    assert fake_gpus.active[0] != fake_gpus.active[1] != threading.get_ident()
    # The own device's thread works in the solver's context object (what it stages, the
    # solver's close frees); the other device's thread in a context of its own.
    assert fake_gpus.adopted == [(own.context, 0)]
    assert sorted(fake_gpus.left) == sorted(fake_gpus.active.values())  # each thread left
    assert own.closed and other.closed
    assert r.backend == "gpu" and r.timings["gpu"] == pytest.approx(0.05)
    assert sum(r.stats["rows_per_device"].values()) == sources.size
    assert r.stats["workers"] == 6  # three lanes per device: a chunk has at least that many rows


def test_devices_out_of_range_with_the_device_count(fake_gpus):
    g = random_graph()
    with sssp.Solver(g, algorithm="crauser") as solver:
        with pytest.raises(InvalidArgumentError, match="device 2 does not exist: 2 devices"):
            solver.solve_many([0, 1], devices=[0, 2])
        with pytest.raises(InvalidArgumentError, match="min_only=True is one solve"):
            solver.solve_many([0, 1], devices=[0, 1], min_only=True)
    assert len(fake_gpus.made) == 1  # nothing built for a refused call


# -- GPU ------------------------------------------------------------------------------------------
def _device_count() -> int:
    try:
        from sssp.gpu.device import device_count

        return device_count()
    except SSSPError:
        return 0


@pytest.mark.gpu
@pytest.mark.parametrize("count", [1, 2])
def test_gpu_devices_rows_equal_scipy(count):
    if _device_count() < count:
        pytest.skip(f"needs {count} CUDA devices")
    g = random_graph(3000, 20000)
    sources = np.random.default_rng(2).integers(0, g.n, 300)
    out = np.full((sources.size, g.n), MARK, dtype=np.int64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with sssp.Solver(g, backend="gpu") as solver:
            r = solver.solve_many(sources, out=out, devices=list(range(count)))
            again = solver.solve_many(sources[:40], devices=list(range(count)))  # workers kept
        del solver
        gc.collect()
    # pycuda warns where it cannot free memory in the thread that drops it (a leak until exit):
    # the own device's thread staged its rows in the solver's context, which its close frees.
    assert not [str(w.message) for w in caught if "could not be cleaned up" in str(w.message)]
    np.testing.assert_array_equal(out, reference(g, sources))
    np.testing.assert_array_equal(again.dist, reference(g, sources[:40]))
    assert r.backend == "gpu" and r.stats["devices"] == [f"cuda:{d}" for d in range(count)]
    assert sum(r.stats["rows_per_device"].values()) == sources.size


@pytest.mark.gpu
def test_gpu_devices_out_of_range():
    count = _device_count()
    if count < 1:
        pytest.skip("needs a CUDA device")
    g = random_graph()
    with sssp.Solver(g, backend="gpu") as solver:
        with pytest.raises(InvalidArgumentError, match=f"device {count} does not exist"):
            solver.solve_many([0, 1], devices=[0, count])


# -- the many-sources record ----------------------------------------------------------------------
def test_many_sources_record_counts_its_devices():
    import csv
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        import many_sources
    finally:
        sys.path.remove(str(bench))
    assert many_sources.COLUMNS[-2:] == ("devices", "batch")
    records = sorted((bench / "results" / "h200").glob("many_sources*.csv"))
    assert records
    for path in records:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        assert rows and set(rows[0]) <= set(many_sources.COLUMNS), path
        assert {r["devices"] for r in rows} == {"1"}, path  # every run so far used one GPU
