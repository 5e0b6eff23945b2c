"""What the host's calls into the CUDA driver cost on this machine, and where a warm solve's host
time goes (needs a CUDA GPU).

    python benchmarks/host_calls.py [GRAPH ...]     # record graph names, as result_path.py

``CALL`` lines: the median over 2 000 repetitions of one pycuda call as a solve makes it (an
event record, a completed event's synchronize, ``time_since``, a prepared launch of an empty
kernel with a solve's 14 arguments, and the same launch of an argument buffer packed once, through
pycuda's internal ``_launch_kernel``), and two round trips on an idle device: an event recorded
then waited for, and an empty launch then an event waited for.

``SOLVE`` lines, per graph: 200 warm ``Solver.solve`` calls of the graph's tuned configuration,
medians of the wall time (the call to the returned result), the CUDA-event time, their
difference, and the result's own ``host_before`` (the call to the first queued command) and
``host_after`` (the device's end seen to the result assembled); ``rest`` is what neither covers:
the device noticing the first command and the host noticing the last. With ``--waits``, the
``SOLVE`` lines are repeated per way of waiting for the solve's last event: ``sync`` (the
driver's ``cuEventSynchronize``, as the solver does), ``poll`` (``query()`` in a Python loop,
which keeps the host's core busy in Python) and ``yield`` (``query()`` and ``sched_yield``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import sssp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_path import build  # noqa: E402  (a sibling script module)

EMPTY = """
extern "C" __global__ void empty(int *a, int *b, int *c, int *d, int *e, int *f, int *g, int *h,
                                 int n, int s, int x, int y, int z, int w) {}
"""


def median_us(fn: Callable[[], object], count: int = 2000) -> float:
    for _ in range(50):
        fn()
    times = []
    for _ in range(count):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e6 * statistics.median(times)


def calls() -> None:
    from pycuda.compiler import SourceModule

    from sssp.gpu.device import activate, driver

    activate(0)
    cuda = driver()
    stream = cuda.Stream()
    a, b = cuda.Event(), cuda.Event()
    func = SourceModule(EMPTY, no_extern_c=True).get_function("empty")
    func.prepare("PPPPPPPPiiiiii")
    null = np.uintp(0)
    args = (*[null] * 8, *[np.int32(1)] * 6)

    def launch() -> None:
        func.prepared_async_call((1, 1), (32, 1, 1), stream, *args)

    # What prepared_async_call does past its Python (pycuda 2026.1's driver.py): the launch of
    # an argument buffer packed once, as a solver could keep one per kernel.
    from pycuda._pvt_struct import pack

    packed = pack(func.arg_format, *args)

    def launch_packed() -> None:
        func._launch_kernel((1, 1), (32, 1, 1), packed, 0, stream)

    a.record(stream)
    b.record(stream)
    b.synchronize()
    rows = {
        "perf_counter": lambda: time.perf_counter(),
        "event record": lambda: a.record(stream),
        "event synchronize (done)": lambda: b.synchronize(),
        "time_since": lambda: b.time_since(a),
        "launch, 14 arguments": launch,
        "launch, packed once (_launch_kernel)": launch_packed,
        "record + synchronize": lambda: (a.record(stream), a.synchronize()),
        "launch + record + synchronize": lambda: (launch(), a.record(stream), a.synchronize()),
    }
    for name, fn in rows.items():
        print(f"CALL {name:32s} {median_us(fn):7.2f} us", flush=True)
        stream.synchronize()


class _EndEvent:
    """The solver's last event, waited for another way (``--waits``)."""

    def __init__(self, event: object, wait: str) -> None:
        self.event, self.wait = event, wait

    def __getattr__(self, name: str) -> object:
        return getattr(self.event, name)

    def synchronize(self) -> None:
        query = self.event.query  # type: ignore[attr-defined]
        while self.wait != "sync" and not query():
            if self.wait == "yield":
                os.sched_yield()
        self.event.synchronize()  # type: ignore[attr-defined]


def solves(name: str, graph: sssp.Graph, count: int = 200, wait: str = "sync") -> None:
    rng = np.random.default_rng(0)
    sources = rng.choice(np.flatnonzero(np.diff(graph.indptr)), size=count)
    walls, gpus, before, after = [], [], [], []
    with sssp.Solver(graph, backend="gpu", tuned=True) as solver:
        if wait != "sync":
            engine = solver._gpu
            engine._events = (*engine._events[:2], _EndEvent(engine._events[2], wait))
        for s in sources[:10]:
            solver.solve(int(s))
        for s in sources:
            t = time.perf_counter()
            r = solver.solve(int(s))
            walls.append(time.perf_counter() - t)
            gpus.append(r.timings["gpu"])
            before.append(r.timings["host_before"])
            after.append(r.timings["host_after"])
            del r
    med = lambda xs: 1e6 * statistics.median(xs)  # noqa: E731
    host = med(np.subtract(walls, gpus))
    print(
        f"SOLVE {wait:5s} {name:18s} n={graph.n:8d} wall {med(walls):8.1f} gpu {med(gpus):8.1f} "
        f"host {host:6.1f} (allow {30 + graph.n / 1e3:5.1f}) before {med(before):5.1f} "
        f"after {med(after):5.1f} rest {host - med(before) - med(after):5.1f} us",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="*")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--waits", nargs="+", choices=("sync", "poll", "yield"), default=["sync"])
    args = ap.parse_args(argv)
    calls()
    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("/tmp"), 0)
        for wait in args.waits:
            solves(name, graph, args.count, wait)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("host_calls", main)
